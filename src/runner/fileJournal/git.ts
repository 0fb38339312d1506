// Read-only git, for one question: what was this file before a command changed it, if git knows?
// A file git had exactly as it was before the command has the content of git's blob for it, as
// checked out through the working tree's filters (line endings …). Two ways to know which files those
// were, both read-only:
//  - git's index file, read by us before the command (gitIndex.ts): after it, each changed file's
//    stat from the scan before is checked against the entry git recorded, as `git status` checks
//    it — one read of the index, not a stat of the whole tree. The default.
//  - `git status` before the command (and HEAD's blobs after it): where the index is one we do not
//    read (a split or sparse index, SHA-256) and on Windows, whose git records other stat fields
//    than Node sees.
// Only these commands run, with optional locks off so not even the index's stat cache is refreshed:
//   git rev-parse --verify HEAD · git status --porcelain · git check-attr · git ls-tree · git cat-file
// Never add, checkout, reset, stash, or anything that writes the repository, its index or branches.
//
// The workspace is not trusted to choose the program: `git` is looked up on PATH by us, skipping
// empty and relative PATH entries (they mean the current folder — the workspace) and entries inside
// the workspace, so a `git` or `git.exe` the repository carries never runs (Windows would otherwise
// try the current folder first). And the repository's config is not trusted to run programs either:
// git runs with the configuration and environment a git the allow list lets through gets
// (tools/shell/gitHardening.cjs: no fsmonitor, no hooks, no bare repository picked up implicitly, the
// host's GIT_DIR and the like dropped), and `git status` with the repository's filters off.
import { execFile } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Breather } from '../../common/breather';
import { gitEnv, gitSettings } from '../tools/shell/gitHardening.cjs';
import { findProgram, type Lookup } from '../tools/shell/programs.cjs';
import { type FileSig, isRacy } from './scanTree';
import { type GitIndex, type IndexEntry, readGitIndex } from './gitIndex';

const GIT_TIMEOUT_MS = 20_000;
const MAX_OUTPUT = 256 * 1024 * 1024;

export type GitLookup = Lookup;

/** The absolute path of git from PATH, outside the workspace; null when there is none. */
export function findGit(o: GitLookup): string | null {
  return findProgram((o.platform ?? process.platform) === 'win32' ? 'git.exe' : 'git', o);
}

let cached: { key: string; git: string | null } | undefined;

function gitFor(workspaceRoot: string): string {
  const key = `${process.env.PATH ?? ''}\0${workspaceRoot}`;
  if (cached?.key !== key) cached = { key, git: findGit({ env: process.env, workspaceRoot }) };
  if (cached.git === null) throw new Error('git was not found on PATH (outside the workspace)');
  return cached.git;
}

/** `env`: gitEnv's, or gitSettings' for a command that may run what the repository's config names. */
function git(
  workspaceRoot: string,
  cwd: string,
  args: string[],
  input?: string,
  env: NodeJS.ProcessEnv = gitEnv(process.env),
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      gitFor(workspaceRoot),
      ['--no-optional-locks', '-c', 'core.quotepath=off', ...args],
      { cwd, encoding: 'buffer', maxBuffer: MAX_OUTPUT, timeout: GIT_TIMEOUT_MS, windowsHide: true, env },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A repository's state before a command: git's index as it was, or its HEAD and the paths `git status` called dirty. */
export type RepoBefore = { rel: string } & (
  | {
      kind: 'index';
      index: GitIndex;
      /** The scan's stat of a path (repository-relative) before the command. */
      sigOf: (p: string) => FileSig | undefined;
    }
  | {
      kind: 'status';
      head: string;
      /** Paths relative to the repository with a staged or unstaged change (or a conflict). */
      dirty: Set<string>;
    }
);

export interface RepoBeforeOptions {
  /** The scan's stat of each workspace-relative path before the command (for the index's way). */
  sigOf: (rel: string) => FileSig | undefined;
  /** 'status': ask `git status` even where the index could be read (tests, and the bench's comparison). */
  way?: 'index' | 'status';
  platform?: NodeJS.Platform;
}

/** undefined: not a usable repository (no git, no commit yet, or git failed): nothing is known from it. */
export async function repoBefore(
  workspaceRoot: string,
  rel: string,
  o: RepoBeforeOptions = { sigOf: () => undefined },
): Promise<RepoBefore | undefined> {
  if (o.way !== 'status' && (o.platform ?? process.platform) !== 'win32') {
    const index = indexBefore(path.join(workspaceRoot, rel));
    if (index) {
      const inWs = (p: string) => (rel ? `${rel}/${p}` : p);
      return { rel, kind: 'index', index, sigOf: (p) => o.sigOf(inWs(p)) };
    }
  }
  const cwd = path.join(workspaceRoot, rel);
  try {
    const head = (await git(workspaceRoot, cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'])).toString('utf8').trim();
    if (!/^[0-9a-f]{40,64}$/.test(head)) return undefined;
    // git status may run the clean filter of a file it has to look into: the repository's are off.
    const env = await gitSettings(gitFor(workspaceRoot), cwd, process.env, workspaceRoot);
    const status = await git(
      workspaceRoot,
      cwd,
      ['status', '--porcelain=v1', '-z', '--untracked-files=no', '--ignore-submodules=all'],
      undefined,
      env,
    );
    const dirty = await parsePorcelainZ(status);
    return dirty ? { rel, kind: 'status', head, dirty } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The repository's index file as it is now, parsed; undefined when there is none we read (then: git
 * status). Synchronous reads: four round trips through the thread pool cost more than the read. The
 * read itself (megabytes in a large repository) is nearly all page faults into the fresh buffer, and
 * its checksum costs about as much again — so an index parsed before is kept (`parsed`) and
 * taken again while the file's stat is the one it was read with: git replaces the index by a rename
 * (a new inode) and any write in place moves its ctime. One read within the timestamp granularity of
 * the file's last change is not kept (a second change in that tick could keep the stat).
 */
// Larger indexes are left to git status (in its own process): reading and walking one here takes
// the host's thread for a time that grows with it, and a repository can ship a hostile one. This
// size holds some 200,000 entries.
const MAX_INDEX_BYTES = 16n * 1024n * 1024n;
/** Parsed indexes by file and stat; a few repositories' worth (each holds its file's bytes). */
const parsed = new Map<string, { key: string; index: GitIndex }>();
const MAX_PARSED = 4;

function indexBefore(repoDir: string): GitIndex | undefined {
  let fd: number | null = null;
  try {
    const file = indexFileOf(repoDir);
    if (!file) return undefined;
    // Non-blocking: a FIFO planted as the index would otherwise hang the extension host's thread here.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const readAt = Date.now();
    const st = fstatSync(fd, { bigint: true });
    if (!st.isFile() || st.size > MAX_INDEX_BYTES) return undefined; // a device, a FIFO, or too large to read here
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const kept = parsed.get(file);
    if (kept?.key === key) return kept.index;
    parsed.delete(file);
    const size = Number(st.size);
    const buf = Buffer.allocUnsafeSlow(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) return undefined; // cut short while read: git status decides
      got += n;
    }
    const index = readGitIndex(buf, st.mtimeNs);
    // The scan's racy rule (scanTree.ts), on the index file's own times.
    if (!isRacy({ mtimeMs: Number(st.mtimeNs) / 1e6, ctimeMs: Number(st.ctimeNs) / 1e6 }, readAt)) {
      if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
      parsed.set(file, { key, index });
    }
    return index;
  } catch {
    // No index (nothing added yet), one we do not read (UnsupportedIndex), or unreadable: git status decides.
    return undefined;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** `.git/index`, or the index of the git folder a `.git` file names (a worktree, a submodule); null: neither. */
function indexFileOf(repoDir: string): string | null {
  const dotGit = path.join(repoDir, '.git');
  const st = statSync(dotGit);
  if (st.isDirectory()) return path.join(dotGit, 'index');
  if (!st.isFile() || st.size > 4096) return null;
  const m = /^gitdir: (.+?)\r?\n?$/.exec(readFileSync(dotGit, 'utf8'));
  return m ? path.join(path.resolve(repoDir, m[1]!), 'index') : null;
}

/** As many entries as the largest index read here holds. */
const MAX_DIRTY = 200_000;

/**
 * Paths in `git status --porcelain=v1 -z` output (both sides of a rename). Read from the bytes an entry
 * at a time with turns for the event loop: a repository can ship an index that makes git list
 * millions of entries, and splitting them all at once would hold the host's thread for seconds.
 * More than MAX_DIRTY entries: null, and the repository is treated as one git cannot tell about (a
 * set that large rehashes in one go, holding the thread); its files' earlier contents are then only
 * what the journal kept itself.
 */
export async function parsePorcelainZ(out: Buffer): Promise<Set<string> | null> {
  const dirty = new Set<string>();
  const breather = new Breather();
  let renameSource = false;
  for (let at = 0; at < out.length;) {
    let end = out.indexOf(0, at);
    if (end < 0) end = out.length;
    if (renameSource) {
      dirty.add(out.toString('utf8', at, end)); // the rename's source follows its entry
      renameSource = false;
    } else if (end - at >= 4) {
      dirty.add(out.toString('utf8', at + 3, end));
      renameSource = out[at] === 0x52 || out[at] === 0x43; // R, C
    }
    at = end + 1;
    if (dirty.size > MAX_DIRTY) return null;
    if (breather.due) await breather.tick();
  }
  return dirty;
}

/**
 * The content each path had before the command as the working tree would have it (git's blob for it,
 * when git had the file exactly as it was), or a reason why not — in at most three git calls for all
 * of them (ls-tree when `git status` was asked, check-attr, cat-file --batch). Paths with a filter
 * attribute (git-lfs …) are not read: running a filter may fetch or execute things.
 */
export async function cleanContents(
  workspaceRoot: string,
  repo: RepoBefore,
  paths: readonly string[],
): Promise<Map<string, Buffer | string>> {
  const out = new Map<string, Buffer | string>();
  const blobs = new Map<string, string>(); // path → the blob the file had
  const cwd = path.join(workspaceRoot, repo.rel);
  try {
    if (repo.kind === 'index') {
      const entries = repo.index.lookup(paths);
      for (const p of paths) {
        const e = entries.get(p);
        const why = e ? notAsRecorded(e, repo.sigOf(p), repo.index.mtimeNs) : 'it was not tracked by git';
        if (why) out.set(p, why);
        else blobs.set(p, e!.blob);
      }
    } else {
      for (const p of paths) if (repo.dirty.has(p)) out.set(p, 'it had changes not committed to git');
      const ask = paths.filter((p) => !out.has(p));
      const tree = ask.length
        ? (await git(workspaceRoot, cwd, ['ls-tree', '-z', repo.head, '--', ...ask])).toString('utf8').split('\0')
        : [];
      for (const entry of tree) {
        const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
        if (m) blobs.set(m[2]!, m[1]!);
      }
    }
    const tracked = [...blobs.keys()];
    if (tracked.length > 0) {
      const attrs = (
        await git(
          workspaceRoot,
          cwd,
          ['check-attr', '-z', '--stdin', 'filter'],
          tracked.join('\0') + '\0',
          repo.kind === 'index' && attributesAllInWorkTree(cwd, repo.index)
            ? { ...gitEnv(process.env), ...NO_INDEX }
            : undefined,
        )
      )
        .toString('utf8')
        .split('\0');
      for (let i = 0; i + 2 < attrs.length; i += 3) {
        const filter = attrs[i + 2]!;
        if (filter !== 'unspecified' && filter !== 'unset')
          out.set(attrs[i]!, `git reads it through the "${filter}" filter`);
      }
    }
    const wanted = tracked.filter((p) => !out.has(p));
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
      if (header[1] !== 'blob') return fail(out, paths, 'git could not read it');
      const size = Number(header[2]);
      out.set(p, batch.subarray(eol + 1, eol + 1 + size));
      at = eol + 1 + size + 1;
    }
  } catch {
    return fail(out, paths, 'git could not be asked about it');
  }
  for (const p of paths) if (!out.has(p)) out.set(p, 'it was not tracked by git');
  return out;
}

/**
 * check-attr without the index, which it would otherwise read whole (most of the call's time in a
 * large repository) for `.gitattributes` files that are in the index but not in the work tree — and
 * `cat-file --filters` does not read those either (checked: such a file's filter does not run). Used
 * only when every `.gitattributes` the index lists is in the work tree, so both read the same rules.
 */
const NO_INDEX = { GIT_INDEX_FILE: path.join(os.tmpdir(), `aw-no-git-index-${process.pid}-never-written`) };

function attributesAllInWorkTree(repoDir: string, index: GitIndex): boolean {
  return index.attributeFiles.every((f) => lstatSync(path.join(repoDir, f), { throwIfNoEntry: false })?.isFile());
}

const U32 = 2 ** 32;

/**
 * Why git's entry does not vouch for the file as the scan saw it before the command (null: it does,
 * its blob is what the file held) — git's own test: a regular file at stage 0 whose size, mtime,
 * ctime and inode are those recorded (as 32-bit numbers, nanoseconds where git kept them), and not
 * changed at or after the index was written (racily clean: a change in the same tick could hide).
 */
export function notAsRecorded(e: IndexEntry, sig: FileSig | undefined, indexMtimeNs: bigint): string | null {
  if (e.stage !== 0) return 'it had a merge conflict in git';
  if (e.intentToAdd) return 'it was only marked to be added to git (`git add -N`)';
  if ((e.mode & 0o170000) !== 0o100000) return 'git does not track it as a regular file';
  if (!sig) return "the scan before the command did not stat it, so git's record cannot vouch for it";
  const same =
    e.size === sig.size % U32 &&
    e.ino === sig.ino % U32 &&
    sameTime(sig.mtimeMs, e.mtimeSec, e.mtimeNsec) &&
    sameTime(sig.ctimeMs, e.ctimeSec, e.ctimeNsec);
  if (!same) return "it differed from what git's index recorded — changes not committed to git, or not yet seen by git";
  const entryNs = BigInt(e.mtimeSec) * 1_000_000_000n + BigInt(e.mtimeNsec);
  const indexNs = e.mtimeNsec === 0 ? (indexMtimeNs / 1_000_000_000n) * 1_000_000_000n : indexMtimeNs;
  if (entryNs >= indexNs)
    return "it changed within the timestamp of git's last look at it, so git's record cannot vouch for it";
  return null;
}

/** A stat time in Node's milliseconds against git's seconds and nanoseconds (0: git kept seconds only). */
function sameTime(ms: number, sec: number, nsec: number): boolean {
  if (nsec === 0) return Math.floor(ms / 1000) % U32 === sec;
  return Math.abs(((ms / 1000) % U32) - (sec + nsec / 1e9)) < 1e-6;
}

function fail(
  out: Map<string, Buffer | string>,
  paths: readonly string[],
  reason: string,
): Map<string, Buffer | string> {
  for (const p of paths) if (!out.has(p)) out.set(p, reason);
  return out;
}
