// Read-only git, for one question: what was this file before a command changed it, if git knows?
// A file tracked by git and clean before the command (no staged or unstaged change) had the content
// of HEAD, as checked out through the working tree's filters (line endings …). Only these commands
// run, with optional locks off so not even the index's stat cache is refreshed:
//   git rev-parse --verify HEAD · git status --porcelain · git check-attr · git cat-file
// Never add, checkout, reset, stash, or anything that writes the repository, its index or branches.
//
// The workspace is not trusted to choose the program: `git` is looked up on PATH by us, skipping
// empty and relative PATH entries (they mean the current folder — the workspace) and entries inside
// the workspace, so a `git` or `git.exe` the repository carries never runs (Windows would otherwise
// try the current folder first). And the repository's config is not trusted to run programs either:
// core.fsmonitor is off, and a bare repository is never picked up implicitly from the workspace.
import { execFile } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

const GIT_TIMEOUT_MS = 20_000;
const MAX_OUTPUT = 256 * 1024 * 1024;
const HARDENING = ['-c', 'core.fsmonitor=false', '-c', 'safe.bareRepository=explicit'];

export interface GitLookup {
  /** PATH as the host sees it. */
  env: NodeJS.ProcessEnv;
  workspaceRoot: string;
  platform?: NodeJS.Platform;
}

/** The absolute path of git from PATH, outside the workspace; null when there is none. */
export function findGit(o: GitLookup): string | null {
  const win = (o.platform ?? process.platform) === 'win32';
  const pathVar = Object.entries(o.env).find(([k]) => (win ? k.toUpperCase() === 'PATH' : k === 'PATH'))?.[1] ?? '';
  const root = realOr(path.resolve(o.workspaceRoot));
  const isAbs = win ? path.win32.isAbsolute : path.posix.isAbsolute;
  for (const raw of pathVar.split(win ? ';' : ':')) {
    const dir = raw.replace(/^"(.*)"$/, '$1'); // Windows PATH entries may be quoted
    if (dir === '' || !isAbs(dir)) continue; // the current folder, spelled '' or relatively
    if (inside(root, realOr(dir))) continue;
    const exe = path.join(dir, win ? 'git.exe' : 'git');
    try {
      if (!statSync(exe).isFile()) continue;
      if (!win) accessSync(exe, constants.X_OK);
      return exe;
    } catch {
      // not here
    }
  }
  return null;
}

function realOr(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

let cached: { key: string; git: string | null } | undefined;

function gitFor(workspaceRoot: string): string {
  const key = `${process.env.PATH ?? ''}\0${workspaceRoot}`;
  if (cached?.key !== key) cached = { key, git: findGit({ env: process.env, workspaceRoot }) };
  if (cached.git === null) throw new Error('git was not found on PATH (outside the workspace)');
  return cached.git;
}

function git(workspaceRoot: string, cwd: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      gitFor(workspaceRoot),
      ['--no-optional-locks', '-c', 'core.quotepath=off', ...HARDENING, ...args],
      {
        cwd,
        encoding: 'buffer',
        maxBuffer: MAX_OUTPUT,
        timeout: GIT_TIMEOUT_MS,
        windowsHide: true,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' },
      },
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
    const head = (await git(workspaceRoot, cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'])).toString('utf8').trim();
    if (!/^[0-9a-f]{40,64}$/.test(head)) return undefined;
    const status = (
      await git(workspaceRoot, cwd, [
        'status',
        '--porcelain=v1',
        '-z',
        '--untracked-files=no',
        '--ignore-submodules=all',
      ])
    ).toString('utf8');
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
 * The content each path had in HEAD as the working tree would have it, or a reason why not — in
 * three git calls for all of them (check-attr, ls-tree, cat-file --batch). Paths with a filter
 * attribute (git-lfs …) are not read: running a filter may fetch or execute things.
 */
export async function cleanContentsAtHead(
  workspaceRoot: string,
  repo: RepoBefore,
  paths: readonly string[],
): Promise<Map<string, Buffer | string>> {
  const out = new Map<string, Buffer | string>();
  const ask = paths.filter((p) => {
    if (repo.dirty.has(p)) out.set(p, 'it had changes not committed to git');
    return !repo.dirty.has(p);
  });
  if (ask.length === 0) return out;
  const cwd = path.join(workspaceRoot, repo.rel);
  try {
    const attrs = (await git(workspaceRoot, cwd, ['check-attr', '-z', '--stdin', 'filter'], ask.join('\0') + '\0'))
      .toString('utf8')
      .split('\0');
    for (let i = 0; i + 2 < attrs.length; i += 3) {
      const filter = attrs[i + 2]!;
      if (filter !== 'unspecified' && filter !== 'unset')
        out.set(attrs[i]!, `git reads it through the "${filter}" filter`);
    }
    const blobs = new Map<string, string>(); // path → blob id in HEAD
    const tree = (await git(workspaceRoot, cwd, ['ls-tree', '-z', repo.head, '--', ...ask.filter((p) => !out.has(p))]))
      .toString('utf8')
      .split('\0');
    for (const entry of tree) {
      const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
      if (m) blobs.set(m[2]!, m[1]!);
    }
    const wanted = ask.filter((p) => !out.has(p) && blobs.has(p));
    const batch = wanted.length
      ? await git(
          workspaceRoot,
          cwd,
          ['cat-file', '--batch', '--filters'],
          wanted.map((p) => `${blobs.get(p)} ${p}\n`).join(''),
        )
      : Buffer.alloc(0);
    let at = 0;
    for (const p of wanted) {
      const eol = batch.indexOf(10, at);
      const header = batch.subarray(at, eol).toString('utf8').split(' ');
      if (header[1] !== 'blob') return fail(out, ask, 'git could not read it');
      const size = Number(header[2]);
      out.set(p, batch.subarray(eol + 1, eol + 1 + size));
      at = eol + 1 + size + 1;
    }
  } catch {
    return fail(out, ask, 'git could not be asked about it');
  }
  for (const p of ask) if (!out.has(p)) out.set(p, 'it was not tracked by git');
  return out;
}

function fail(
  out: Map<string, Buffer | string>,
  paths: readonly string[],
  reason: string,
): Map<string, Buffer | string> {
  for (const p of paths) if (!out.has(p)) out.set(p, reason);
  return out;
}
