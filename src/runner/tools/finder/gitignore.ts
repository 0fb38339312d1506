// Gitignore-style rules, judged one path at a time the way ripgrep's `ignore` crate does (and the
// way the fallback walker needs them): last matching line wins, `!` re-includes, a trailing `/`
// matches folders only, a pattern with a `/` is anchored to the file's folder, one without matches
// the name at any depth. No parent-folder logic here: the walker never descends into an ignored
// folder, and a folder named explicitly is walked even if ignored (as `rg --files dist` does).
// The globs are matched by ../glob.ts, without regular expressions: a repository's .gitignore
// cannot make the walk backtrack for minutes.
import { Glob, type GlobOptions } from '../glob';

export type Verdict = 'ignore' | 'whitelist' | null;

interface Rule {
  negate: boolean;
  dirOnly: boolean;
  /** Matched against the whole relative path (anchored) or only its last component. */
  anchored: boolean;
  glob: Glob;
}

export type RuleOptions = GlobOptions;

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
      if (r.glob.test(r.anchored ? rel : base)) return r.negate ? 'whitelist' : 'ignore';
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
    return { negate, dirOnly, anchored, glob: Glob.compile(line, opts) };
  } catch {
    return null; // a line that is not a glob ignores nothing, as in git
  }
}

/** Git drops trailing spaces unless the last one is escaped with a backslash. */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--;
  return line.slice(0, end);
}
