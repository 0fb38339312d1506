// Read-only git, for one question: what was this file before a command changed it, if git knows?
// A file tracked by git and clean before the command (no staged or unstaged change) had the content
// of HEAD, as checked out through the working tree's filters (line endings …). Only these commands
// run, with optional locks off so not even the index's stat cache is refreshed:
//   git rev-parse --verify HEAD · git status --porcelain · git check-attr · git cat-file
// Never add, checkout, reset, stash, or anything that writes the repository, its index or branches.
import { execFile } from 'node:child_process';
import path from 'node:path';

const GIT_TIMEOUT_MS = 20_000;
const MAX_OUTPUT = 256 * 1024 * 1024;

function git(cwd: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['--no-optional-locks', '-c', 'core.quotepath=off', ...args],
      { cwd, encoding: 'buffer', maxBuffer: MAX_OUTPUT, timeout: GIT_TIMEOUT_MS, windowsHide: true, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A repository's state before a command: its HEAD and the tracked paths that were not clean. */
export interface RepoBefore {
  /** Folder of the repository relative to the workspace root ('' = the root). */
  rel: string;
  head: string;
  /** Paths relative to the repository with a staged or unstaged change (or a conflict). */
  dirty: Set<string>;
}

/** undefined: not a usable repository (no git, no commit yet, or git failed): nothing is known from it. */
export async function repoBefore(workspaceRoot: string, rel: string): Promise<RepoBefore | undefined> {
  const cwd = path.join(workspaceRoot, rel);
  try {
    const head = (await git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'])).toString('utf8').trim();
    if (!/^[0-9a-f]{40,64}$/.test(head)) return undefined;
    const status = (await git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=no', '--ignore-submodules=all'])).toString('utf8');
    return { rel, head, dirty: parsePorcelainZ(status) };
  } catch {
    return undefined;
  }
}

/** Paths in `git status --porcelain=v1 -z` output (both sides of a rename). */
export function parsePorcelainZ(out: string): Set<string> {
  const dirty = new Set<string>();
  const parts = out.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    if (entry.length < 4) continue;
    dirty.add(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') dirty.add(parts[++i] ?? ''); // the rename's source follows
  }
  return dirty;
}

/**
 * The content a path had in HEAD as the working tree would have it, or a reason why not. Paths
 * with a filter attribute (git-lfs …) are not read: running a filter may fetch or execute things.
 */
export async function cleanContentAtHead(workspaceRoot: string, repo: RepoBefore, pathInRepo: string): Promise<Buffer | string> {
  if (repo.dirty.has(pathInRepo)) return 'it had changes not committed to git';
  const cwd = path.join(workspaceRoot, repo.rel);
  try {
    const attr = (await git(cwd, ['check-attr', '-z', 'filter', '--', pathInRepo])).toString('utf8').split('\0');
    const filter = attr[2];
    if (filter && filter !== 'unspecified' && filter !== 'unset') return `git reads it through the "${filter}" filter`;
  } catch {
    return 'git could not be asked about it';
  }
  try {
    return await git(cwd, ['cat-file', '--filters', `${repo.head}:${pathInRepo}`]);
  } catch {
    return 'it was not tracked by git';
  }
}
