// Which ignore files apply to a path, and in what order — ripgrep's rules, so the fallback walker
// agrees with it (the shared test suite checks that):
// - every folder from the file system root down to the file's folder may hold .rgignore, .ignore,
//   .gitignore, and (in a repository's root) .git/info/exclude;
// - the closest folder with a matching line decides, per kind; the kinds then rank
//   .rgignore > .ignore > .gitignore > .git/info/exclude;
// - .gitignore and .git/info/exclude count only inside a git repository, and only up to that
//   repository's root: a nested repository is not ignored by its parent's .gitignore.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { closeFile, openRegular, readHead } from '../regularFile';
import { IgnoreRules, type Verdict } from './gitignore';

export interface Frame {
  /** Absolute real path of the folder. */
  dir: string;
  rgignore: IgnoreRules | null;
  ignore: IgnoreRules | null;
  gitignore: IgnoreRules | null;
  gitExclude: IgnoreRules | null;
  /** The folder holds `.git` (a folder, or a file in worktrees and submodules). */
  hasGit: boolean;
}

const IGNORE_FILES = ['.rgignore', '.ignore', '.gitignore'] as const;

/**
 * The rules of an ignore file are read from its first MAX_IGNORE_BYTES, up to the last whole line:
 * real ones are a few kilobytes, and a repository's 100 MB one would be millions of globs, held
 * in memory and each path judged against every one of them on the host's thread. ripgrep reads all of it, in its
 * own process.
 */
export const MAX_IGNORE_BYTES = 128 * 1024;

async function readRules(file: string): Promise<IgnoreRules | null> {
  let f;
  try {
    // A link is followed (as ripgrep does); a FIFO or a device is not read (its open could wait forever).
    f = await openRegular(await fs.realpath(file));
  } catch {
    return null; // absent, unreadable or not a regular file: no rules, as ripgrep
  }
  try {
    const head = await readHead(f, MAX_IGNORE_BYTES);
    const whole = f.st.size <= MAX_IGNORE_BYTES ? head.length : head.lastIndexOf(0x0a) + 1;
    const rules = IgnoreRules.parse(head.toString('utf8', 0, whole));
    return rules.empty ? null : rules;
  } catch {
    return null;
  } finally {
    await closeFile(f);
  }
}

/** `names`: the folder's entries when the caller has listed it already (saves a read per kind). */
export async function loadFrame(dir: string, names?: ReadonlySet<string>): Promise<Frame> {
  const has = (n: string): boolean => names === undefined || names.has(n);
  const [rgignore, ignore, gitignore] = await Promise.all(
    IGNORE_FILES.map((f) => (has(f) ? readRules(path.join(dir, f)) : null)),
  );
  let hasGit = false;
  let gitExclude: IgnoreRules | null = null;
  if (has('.git')) {
    const st = await fs.stat(path.join(dir, '.git')).catch(() => null);
    hasGit = st !== null;
    if (st?.isDirectory()) gitExclude = await readRules(path.join(dir, '.git', 'info', 'exclude'));
  }
  return { dir, rgignore: rgignore ?? null, ignore: ignore ?? null, gitignore: gitignore ?? null, gitExclude, hasGit };
}

/** Frames for every folder from the file system root down to `dir`, inclusive. */
export async function loadAncestors(dir: string): Promise<IgnoreChain> {
  const dirs: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    dirs.unshift(d);
    if (path.dirname(d) === d) break;
  }
  return new IgnoreChain(await Promise.all(dirs.map((d) => loadFrame(d))));
}

export class IgnoreChain {
  private readonly anyGit: boolean;

  /** `frames`: outermost first. */
  constructor(private readonly frames: readonly Frame[]) {
    this.anyGit = frames.some((f) => f.hasGit);
  }

  static empty(): IgnoreChain {
    return new IgnoreChain([]);
  }

  child(frame: Frame): IgnoreChain {
    return new IgnoreChain([...this.frames, frame]);
  }

  /** `abs`: an entry inside the innermost frame's folder. */
  ignored(abs: string, isDir: boolean): boolean {
    let rg: Verdict = null;
    let ig: Verdict = null;
    let git: Verdict = null;
    let exclude: Verdict = null;
    let sawGit = false;
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i] as Frame;
      const rel = relativeTo(f.dir, abs);
      rg ??= f.rgignore?.match(rel, isDir) ?? null;
      ig ??= f.ignore?.match(rel, isDir) ?? null;
      if (this.anyGit && !sawGit) {
        git ??= f.gitignore?.match(rel, isDir) ?? null;
        exclude ??= f.gitExclude?.match(rel, isDir) ?? null;
      }
      sawGit ||= f.hasGit;
    }
    return (rg ?? ig ?? git ?? exclude) === 'ignore';
  }
}

function relativeTo(dir: string, abs: string): string {
  const rel = abs.slice(dir.endsWith(path.sep) ? dir.length : dir.length + 1);
  return path.sep === '/' ? rel : rel.split(path.sep).join('/');
}
