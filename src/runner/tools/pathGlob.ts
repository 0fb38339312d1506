// Glob matching for the protected-file and secret-file lists, without regular expressions: the
// lists come partly from settings, and a pattern must never be able to freeze the extension host
// (a glob turned into a regex can backtrack exponentially, issue 18 finding 5). Both levels — `**`
// over path segments, `*` over the characters of one segment — use the classic wildcard walk that
// only ever returns to the most recent star, so a match costs at most O(pattern × path) steps.
//
// Syntax: `*` (any characters but `/`), `?` (one character), `[abc]` `[a-z]` `[!a]` (one
// character of a set), `{a,b}` (alternatives, at most MAX_ALTERNATIVES in all), `**` (any number
// of folders). A pattern without `/` matches a name in any folder (`*.pem`); one with `/` is
// matched from the workspace root (`**/` to match at any depth). A pattern that matches a folder
// matches everything inside it. Matching ignores case (see protectedFiles.ts for why).

export const MAX_PATTERN_LENGTH = 512;
const MAX_ALTERNATIVES = 64;

type CharToken = { kind: 'char'; c: string } | { kind: 'any' } | { kind: 'star' } | { kind: 'set'; test: SetTest };
type SetTest = (c: string) => boolean;
type SegmentToken = { kind: 'globstar' } | { kind: 'segment'; tokens: CharToken[] };

/** A compiled pattern: one or more alternatives (braces), each a list of segment tokens. */
export interface PathGlob {
  readonly source: string;
  readonly alternatives: readonly SegmentToken[][];
}

export class GlobError extends Error {
  override readonly name = 'GlobError';
}

/** Compiles a pattern; throws GlobError for one that is too long, empty or has too many alternatives. */
export function compileGlob(pattern: string): PathGlob {
  if (pattern.length > MAX_PATTERN_LENGTH)
    throw new GlobError(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  let p = foldCase(pattern.trim().replace(/\\/g, '/'));
  while (p.startsWith('./') || p.startsWith('/')) p = p.slice(p.startsWith('/') ? 1 : 2);
  while (p.endsWith('/')) p = p.slice(0, -1);
  if (p === '') throw new GlobError('the pattern is empty');
  const alternatives = expandBraces(p).map((alt) => {
    const anchored = alt.includes('/') ? alt : `**/${alt}`;
    const tokens = anchored
      .split('/')
      .filter((s) => s !== '')
      .map(segmentToken);
    // "Matches a folder → matches everything inside": `x` is matched as `x/**` (`**` may be empty).
    if (tokens.at(-1)?.kind !== 'globstar') tokens.push({ kind: 'globstar' });
    return tokens;
  });
  return { source: pattern, alternatives };
}

/**
 * Whether the workspace-relative path ('/'-separated) or one of its parent folders matches.
 * Case is ignored.
 */
export function globMatches(glob: PathGlob, relPath: string | PathSegments): boolean {
  const segments = typeof relPath === 'string' ? pathSegments(relPath) : relPath;
  return segments.length > 0 && glob.alternatives.some((alt) => matchSegments(alt, segments));
}

/** A path split (and case-folded) once for many globMatches calls. */
export type PathSegments = readonly string[];

export function pathSegments(relPath: string): PathSegments {
  return foldCase(relPath).split('/').filter(Boolean);
}

/**
 * One spelling for the names a case-insensitive disk treats as one: composed Unicode (macOS
 * matches `é` and `e` + accent), and upper- then lower-cased, so letters whose upper case is
 * ASCII (`ſ` → `S`, the Kelvin sign → `k`) meet their plain forms.
 */
export function foldCase(s: string): string {
  return s.normalize('NFC').toUpperCase().toLowerCase();
}

function segmentToken(s: string): SegmentToken {
  return s === '**' ? { kind: 'globstar' } : { kind: 'segment', tokens: charTokens(s) };
}

function charTokens(s: string): CharToken[] {
  const out: CharToken[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '*') {
      if (out.at(-1)?.kind !== 'star') out.push({ kind: 'star' }); // `**` inside a name is one star
    } else if (c === '?') out.push({ kind: 'any' });
    else if (c === '[') {
      const set = parseSet(s, i);
      if (set) {
        out.push({ kind: 'set', test: set.test });
        i = set.end;
      } else out.push({ kind: 'char', c });
    } else out.push({ kind: 'char', c });
  }
  return out;
}

/** `[abc]`, `[a-z]`, `[!a]` / `[^a]` starting at `start`; null when unclosed (then `[` is literal). */
function parseSet(s: string, start: number): { test: SetTest; end: number } | null {
  let i = start + 1;
  const negate = s[i] === '!' || s[i] === '^';
  if (negate) i++;
  const ranges: Array<[string, string]> = [];
  for (let first = true; i < s.length; first = false) {
    const c = s[i]!;
    if (c === ']' && !first) {
      const test: SetTest = (ch) => ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== negate;
      return { test, end: i };
    }
    if (s[i + 1] === '-' && i + 2 < s.length && s[i + 2] !== ']') {
      ranges.push([c, s[i + 2]!]);
      i += 3;
    } else {
      ranges.push([c, c]);
      i += 1;
    }
  }
  return null;
}

/** `a{b,c}d` → `abd`, `acd` (nested too); at most MAX_ALTERNATIVES results. */
function expandBraces(p: string): string[] {
  const open = p.indexOf('{');
  if (open < 0) return [p];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < p.length; i++) {
    if (p[i] === '{') depth++;
    else if (p[i] === '}' && --depth === 0) {
      const parts: string[] = [];
      let from = open + 1;
      for (const c of commas) {
        parts.push(p.slice(from, c));
        from = c + 1;
      }
      parts.push(p.slice(from, i));
      if (parts.length === 1) return [p]; // `{x}` without a comma: literal
      const out: string[] = [];
      for (const part of parts) {
        for (const rest of expandBraces(p.slice(0, open) + part + p.slice(i + 1))) {
          out.push(rest);
          if (out.length > MAX_ALTERNATIVES)
            throw new GlobError(`the pattern has more than ${MAX_ALTERNATIVES} alternatives`);
        }
      }
      return out;
    } else if (p[i] === ',' && depth === 1) commas.push(i);
  }
  return [p]; // unbalanced: literal
}

/** `**` over segments: the wildcard walk with one backtrack point (see the file's header). */
function matchSegments(pattern: readonly SegmentToken[], path: readonly string[]): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < path.length) {
    const tok = pattern[p];
    if (tok?.kind === 'segment' && matchChars(tok.tokens, path[s]!)) {
      p++;
      s++;
    } else if (tok?.kind === 'globstar') {
      starP = p++;
      starS = s;
    } else if (starP >= 0) {
      p = starP + 1;
      s = ++starS;
    } else return false;
  }
  while (pattern[p]?.kind === 'globstar') p++;
  return p === pattern.length;
}

/** `*` over the characters of one segment, the same walk. */
function matchChars(pattern: readonly CharToken[], text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const tok = pattern[p];
    if (tok !== undefined && tok.kind !== 'star' && matchOne(tok, text[t]!)) {
      p++;
      t++;
    } else if (tok?.kind === 'star') {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else return false;
  }
  while (pattern[p]?.kind === 'star') p++;
  return p === pattern.length;
}

function matchOne(tok: Exclude<CharToken, { kind: 'star' }>, c: string): boolean {
  if (tok.kind === 'any') return true;
  if (tok.kind === 'char') return tok.c === c;
  return tok.test(c);
}
