// Globs as gitignore and ripgrep read them (`*` and `?` stop at `/`, a `**` segment crosses
// folders, classes `[a-z]` `[!a]` `[^a]`, `\` escapes, dotfiles match, no extglobs; `{a,b}` only
// where asked), matched WITHOUT regular expressions. Globs come from the model (search_text's
// `glob`), from the repository (.gitignore, .ignore, workspace exclude settings) and from the
// user's protected- and private-file settings; compiled to a regex, `*?*?*?…Z` backtracks for
// minutes on the extension host's main thread. Here a match is the classic two-pointer wildcard
// walk — each `*` remembers one restart point — once over the characters of a segment and once over
// the segments of a path: time grows with the product of the glob's and the path's lengths, never
// exponentially. The protected-file lists read globs as VS Code's file settings do: a name matches
// at any depth, a folder's match covers its content, case is ignored (see the options).

type Token =
  { t: 'star' } | { t: 'one' } | { t: 'char'; c: string } | { t: 'class'; negate: boolean; items: ClassItem[] };
type ClassItem = { from: string; to: string } | { posix: (c: string) => boolean };
/** A path segment's pattern; null is `**` (any number of segments). */
type Segment = Token[] | null;

export interface GlobOptions {
  /** `{a,b}` alternatives: ripgrep's `-g` globs and VS Code's excludes have them; .gitignore files do not. */
  braces: boolean;
  /** A glob (each brace alternative) without `/` matches a name in any folder: `*.pem` matches `a/b/c.pem`. */
  anyDepth?: boolean;
  /** A glob that matches a folder matches everything in it, and `x/**` matches `x` too. */
  coversContent?: boolean;
  /** Case is ignored (foldCase): the glob is folded once, and so is each path it tests. */
  ignoreCase?: boolean;
  /** Brace alternatives beyond this make the glob invalid (each is matched separately). */
  maxAlternatives?: number;
}

const MAX_ALTERNATIVES = 256;

/** A path split into names once, for testing it against many globs (`Glob.path`). */
export type GlobPath = readonly (readonly string[])[];

export class Glob {
  private constructor(
    private readonly alternatives: readonly Segment[][],
    private readonly ignoreCase: boolean,
  ) {}

  /** Throws on a glob it cannot read (too many brace alternatives). */
  static compile(glob: string, opts: GlobOptions): Glob {
    const text = opts.ignoreCase ? foldCase(glob) : glob;
    const texts = opts.braces ? expandBraces(text, opts.maxAlternatives ?? MAX_ALTERNATIVES) : [text];
    return new Glob(
      texts.map((t) => {
        const segs = splitSegments(t);
        if (opts.anyDepth && segs.length === 1) segs.unshift('**');
        return opts.coversContent ? withContent(segs.map(segment)) : withTrailingGlobstar(segs.map(segment));
      }),
      opts.ignoreCase ?? false,
    );
  }

  /** `path` split at `/` (and case-folded for globs that ignore case); an empty name stays one. */
  static path(path: string, opts: { ignoreCase?: boolean } = {}): GlobPath {
    return (opts.ignoreCase ? foldCase(path) : path).split('/').map((n) => Array.from(n));
  }

  /**
   * `path`: '/'-separated (or split by `Glob.path` with this glob's ignoreCase); without `anyDepth`,
   * a glob without `/` is matched against a single name by the caller.
   */
  test(path: string | GlobPath): boolean {
    const names = typeof path === 'string' ? Glob.path(path, { ignoreCase: this.ignoreCase }) : path;
    return this.alternatives.some((segs) => matchPath(segs, names));
  }
}

/**
 * One spelling for the names a case-insensitive disk treats as one: composed Unicode (macOS
 * matches `é` and `e` + accent), and upper- then lower-cased, so letters whose upper case is
 * ASCII (`ſ` → `S`, the Kelvin sign → `k`) meet their plain forms.
 */
export function foldCase(s: string): string {
  return s.normalize('NFC').toUpperCase().toLowerCase();
}

const POSIX: Record<string, (c: string) => boolean> = {
  alpha: (c) => /^[A-Za-z]$/.test(c),
  digit: (c) => /^[0-9]$/.test(c),
  alnum: (c) => /^[A-Za-z0-9]$/.test(c),
  upper: (c) => /^[A-Z]$/.test(c),
  lower: (c) => /^[a-z]$/.test(c),
  space: (c) => /^\s$/.test(c),
  xdigit: (c) => /^[0-9A-Fa-f]$/.test(c),
  punct: (c) => /^[!-/:-@[-`{-~]$/.test(c),
};

// A trailing globstar matches everything inside a folder, not the folder itself: "a/**" is read
// as "a/*" followed by a globstar.
function withTrailingGlobstar(segs: Segment[]): Segment[] {
  return segs.length > 1 && segs.at(-1) === null ? [...segs.slice(0, -1), [{ t: 'star' }], null] : segs;
}

// "Matches a folder → matches everything inside": `x` is read as `x/**` (a `**` may be empty).
function withContent(segs: Segment[]): Segment[] {
  return segs.at(-1) === null ? segs : [...segs, null];
}

/** Splits at unescaped `/` (an escaped one stays in its segment, escaped). */
function splitSegments(glob: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) {
      cur += c + glob[++i];
    } else if (c === '/') {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

function segment(text: string): Segment {
  if (text === '**') return null;
  const chars = Array.from(text);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length) tokens.push({ t: 'char', c: chars[++i] as string });
    else if (c === '*') {
      if (tokens.at(-1)?.t !== 'star') tokens.push({ t: 'star' });
    } else if (c === '?') tokens.push({ t: 'one' });
    else if (c === '[') {
      const cls = charClass(chars, i);
      if (cls) {
        tokens.push(cls.token);
        i = cls.end;
      } else tokens.push({ t: 'char', c });
    } else tokens.push({ t: 'char', c });
  }
  return tokens;
}

/** `[…]` starting at chars[start]; null when it never closes (then `[` is a literal, as in fnmatch). */
function charClass(chars: string[], start: number): { token: Token; end: number } | null {
  let i = start + 1;
  let negate = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negate = true;
    i++;
  }
  const items: ClassItem[] = [];
  for (let first = true; i < chars.length; first = false, i++) {
    let c = chars[i] as string;
    if (c === ']' && !first) return { token: { t: 'class', negate, items }, end: i };
    if (c === '[' && chars[i + 1] === ':') {
      const close = chars.indexOf(':', i + 2);
      const name = close > 0 && chars[close + 1] === ']' ? chars.slice(i + 2, close).join('') : null;
      const test = name !== null ? POSIX[name] : undefined;
      if (test) {
        items.push({ posix: test });
        i = close + 1;
        continue;
      }
    }
    if (c === '\\' && i + 1 < chars.length) c = chars[++i] as string;
    if (chars[i + 1] === '-' && chars[i + 2] !== undefined && chars[i + 2] !== ']') {
      let to = chars[i + 2] as string;
      i += 2;
      if (to === '\\' && i + 1 < chars.length) to = chars[++i] as string;
      items.push({ from: c, to });
    } else {
      items.push({ from: c, to: c });
    }
  }
  return null;
}

function matchOne(tok: Token, c: string): boolean {
  if (tok.t === 'one') return true;
  if (tok.t === 'char') return tok.c === c;
  if (tok.t !== 'class') return false;
  const cp = c.codePointAt(0) as number;
  const hit = tok.items.some((it) =>
    'posix' in it ? it.posix(c) : cp >= (it.from.codePointAt(0) as number) && cp <= (it.to.codePointAt(0) as number),
  );
  return hit !== tok.negate;
}

/** One name against one segment's tokens: `*` backtracks to its single restart point only. */
function matchName(tokens: Token[], name: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    const tok = tokens[p];
    if (tok?.t === 'star') {
      starP = p++;
      starN = n;
    } else if (tok && matchOne(tok, name[n] as string)) {
      p++;
      n++;
    } else if (starP >= 0) {
      p = starP + 1;
      n = ++starN;
    } else {
      return false;
    }
  }
  while (tokens[p]?.t === 'star') p++;
  return p === tokens.length;
}

/** The same walk one level up: `**` is the star, a segment matches exactly one name. */
function matchPath(segs: Segment[], names: GlobPath): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < names.length) {
    const seg = segs[p];
    if (seg === null) {
      starP = p++;
      starN = n;
    } else if (seg !== undefined && matchName(seg, names[n]!)) {
      p++;
      n++;
    } else if (starP >= 0) {
      p = starP + 1;
      n = ++starN;
    } else {
      return false;
    }
  }
  while (segs[p] === null) p++;
  return p === segs.length;
}

/** `a{b,c{d,e}}f` → abf, acdf, acef. A brace without a top-level comma stays literal. */
export function expandBraces(glob: string, max = MAX_ALTERNATIVES): string[] {
  let out = [''];
  let i = 0;
  while (i < glob.length) {
    const c = glob[i] as string;
    if (c === '\\' && i + 1 < glob.length) {
      out = out.map((o) => o + c + glob[i + 1]);
      i += 2;
      continue;
    }
    const group = c === '{' ? braceGroup(glob, i) : null;
    if (!group) {
      out = out.map((o) => o + c);
      i++;
      continue;
    }
    const options = group.options.flatMap((o) => expandBraces(o, max));
    out = out.flatMap((o) => options.map((opt) => o + opt));
    if (out.length > max) throw new Error(`more than ${max} brace alternatives`);
    i = group.end + 1;
  }
  return out;
}

function braceGroup(s: string, start: number): { options: string[]; end: number } | null {
  let depth = 0;
  const options: string[] = [];
  let from = start + 1;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      options.push(s.slice(from, i));
      return options.length > 1 ? { options, end: i } : null;
    } else if (c === ',' && depth === 1) {
      options.push(s.slice(from, i));
      from = i + 1;
    }
  }
  return null;
}
