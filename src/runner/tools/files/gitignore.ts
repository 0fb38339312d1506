// Gitignore-style rules, judged one path at a time the way ripgrep's `ignore` crate does (and the
// way the fallback walker needs them): last matching line wins, `!` re-includes, a trailing `/`
// matches folders only, a pattern with a `/` is anchored to the file's folder, one without matches
// the name at any depth. No parent-folder logic here: the walker never descends into an ignored
// folder, and a folder named explicitly is walked even if ignored (as `rg --files dist` does).
// The globs themselves are compiled by picomatch.
import picomatch from 'picomatch';

export type Verdict = 'ignore' | 'whitelist' | null;

interface Rule {
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the whole relative path (anchored) or only its last component. */
  anchored: boolean;
  re: RegExp;
}

export interface RuleOptions {
  /** `{a,b}` alternatives: ripgrep's `-g` globs have them; .gitignore files do not. */
  braces: boolean;
}

export class IgnoreRules {
  private constructor(private readonly rules: readonly Rule[]) {}

  static parse(text: string, opts: RuleOptions = { braces: false }): IgnoreRules {
    return IgnoreRules.fromLines(text.split('\n'), opts);
  }

  static fromLines(lines: readonly string[], opts: RuleOptions): IgnoreRules {
    return new IgnoreRules(lines.flatMap((l) => parseLine(l, opts) ?? []));
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** `rel`: '/'-separated, relative to the folder the rules belong to. */
  match(rel: string, isDir: boolean): Verdict {
    const base = rel.slice(rel.lastIndexOf('/') + 1);
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const r = this.rules[i] as Rule;
      if (r.dirOnly && !isDir) continue;
      if (r.re.test(r.anchored ? rel : base)) return r.negate ? 'whitelist' : 'ignore';
    }
    return null;
  }
}

function parseLine(raw: string, opts: RuleOptions): Rule | null {
  let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line === '' || line.startsWith('#')) return null;
  line = trimTrailingSpaces(line);
  let negate = false;
  if (line.startsWith('!')) {
    negate = true;
    line = line.slice(1);
  } else if (line.startsWith('\\!') || line.startsWith('\\#')) {
    line = line.slice(1);
  }
  let dirOnly = false;
  if (line.endsWith('/') && !line.endsWith('\\/')) {
    dirOnly = true;
    line = line.slice(0, -1);
  }
  const anchored = line.includes('/');
  if (line.startsWith('/')) line = line.slice(1);
  if (line === '') return null;
  try {
    return { negate, dirOnly, anchored, re: globRegExp(line, opts) };
  } catch {
    return null; // a line that is not a glob ignores nothing, as in git
  }
}

/**
 * A glob as gitignore and ripgrep read it: `*` and `?` stop at `/`, `**` crosses folders, dotfiles
 * match, no extglobs. Throws on a malformed glob.
 */
export function globRegExp(glob: string, opts: RuleOptions): RegExp {
  // fnmatch's `[!a]` is a negated class; picomatch reads it as "!" or "a", so spell it `[^a]`.
  const fixed = glob.replace(/(^|[^\\])\[!/g, '$1[^');
  return picomatch.makeRe(fixed, {
    dot: true,
    nobrace: !opts.braces,
    noextglob: true,
    nonegate: true,
    strictSlashes: true,
  });
}

/** Git drops trailing spaces unless the last one is escaped with a backslash. */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--;
  return line.slice(0, end);
}
