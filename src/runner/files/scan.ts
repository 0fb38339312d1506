// A bounded scan of the workspace's files, run before and after a command so the journal can say
// which files the command changed. The files are listed by the FileFinder list_files uses (VS Code's
// ripgrep, or the Node walk that applies ripgrep's rules): .gitignore inside git repositories (each
// nested one by its own rules), .ignore/.rgignore, .git/info/exclude and the exclude globs — one
// definition of "the workspace's files", not a second one here. Then a stat per file (no contents).
// .git and node_modules are always skipped. It stops at its caps (files, time) and says so.
import { existsSync, lstatSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../common/errors';
import { toIgnoreGlobs } from '../tools/files/excludes';
import type { FileFinder, FileList } from '../tools/files/types';

/** Skipped whatever the settings say (besides .git, which every listing skips). */
export const ALWAYS_SKIPPED: readonly string[] = ['**/node_modules'];
export const DEFAULT_SCAN_MAX_FILES = 200_000;
export const DEFAULT_SCAN_MAX_MS = 15_000;
/** Stats between two checks of the clock and the signal (and a turn for the event loop). */
const STAT_BATCH = 2_000;

export interface ScanOptions {
  /** Lists the files: VS Code's ripgrep when the host found it, else the Node walk. */
  finder: FileFinder;
  /** files.exclude globs (VS Code syntax, the keys set to true), relative to the workspace root. */
  exclude?: readonly string[];
  maxFiles?: number;
  maxMs?: number;
  signal?: AbortSignal;
}

/** What a change is detected by: any difference means the file may have changed. */
export interface FileSig {
  size: number;
  mtimeMs: number;
  ino: number;
  /** Permission bits (not compared: kept so a file a command deletes can come back with them). */
  mode: number;
}

export interface Scan {
  /** Every file seen, by '/'-separated path relative to the root. */
  files: Map<string, FileSig>;
  /** Folders holding a git repository (a .git folder or file) above a file seen, relative; '' is the root. Nested ones too. */
  repos: string[];
  complete: boolean;
  /** Why the scan stopped early, for the user. */
  note: string | null;
  ms: number;
}

export async function scanWorkspace(root: string, opts: ScanOptions): Promise<Scan> {
  const t0 = performance.now();
  const maxFiles = opts.maxFiles ?? DEFAULT_SCAN_MAX_FILES;
  const maxMs = opts.maxMs ?? DEFAULT_SCAN_MAX_MS;
  const out: Scan = { files: new Map(), repos: [], complete: true, note: null, ms: 0 };
  const timeUp = () =>
    `the scan stopped after ${(maxMs / 1000).toFixed(0)} s (${out.files.size.toLocaleString('en')} files seen)`;
  const signal = opts.signal ?? new AbortController().signal;
  let list: FileList;
  try {
    const scope = {
      root: await fs.realpath(root),
      rel: '.',
      excludes: toIgnoreGlobs([...(opts.exclude ?? []), ...ALWAYS_SKIPPED]),
      signal,
    };
    list = await opts.finder.list(scope, { maxFiles, deadline: Date.now() + maxMs });
  } catch (err) {
    return stop(
      out,
      t0,
      signal.aborted ? 'the scan was cancelled' : `the workspace's files could not be listed: ${errorMessage(err)}`,
    );
  }
  out.repos = reposAbove(root, list.files);
  for (let i = 0; i < list.files.length; i++) {
    if (i % STAT_BATCH === 0) {
      // The event loop gets a turn between batches; synchronous stats are several times faster
      // than a promise per file through the thread pool.
      if (i > 0) await new Promise<void>((r) => setImmediate(r));
      if (signal.aborted) return stop(out, t0, 'the scan was cancelled');
      if (performance.now() - t0 > maxMs) return stop(out, t0, timeUp());
    }
    const rel = list.files[i] as string;
    const s = lstatSync(path.join(root, rel), { throwIfNoEntry: false });
    if (s && !s.isDirectory())
      out.files.set(rel, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino, mode: s.mode & 0o7777 });
  }
  if (list.stoppedBy === 'limit')
    return stop(out, t0, `the scan stopped at ${maxFiles.toLocaleString('en')} files (the workspace has more)`);
  if (list.stoppedBy === 'deadline') return stop(out, t0, timeUp());
  out.ms = performance.now() - t0;
  return out;
}

function stop(out: Scan, t0: number, note: string): Scan {
  out.complete = false;
  out.note = note;
  out.ms = performance.now() - t0;
  return out;
}

/** The folders above the listed files (and the root) that hold a `.git`: a stat per folder, not per file. */
function reposAbove(root: string, files: readonly string[]): string[] {
  const dirs = new Set<string>(['']);
  for (const f of files) {
    // Walk up until a folder already seen: its parents were added with it.
    for (
      let d = f.slice(0, Math.max(0, f.lastIndexOf('/')));
      d !== '' && !dirs.has(d);
      d = d.slice(0, Math.max(0, d.lastIndexOf('/')))
    )
      dirs.add(d);
  }
  return [...dirs].filter((d) => existsSync(path.join(root, d, '.git'))).sort();
}

/** Paths whose stat differs between two scans (created, deleted or rewritten), sorted. */
export function changedPaths(before: Scan, after: Scan): string[] {
  const out: string[] = [];
  for (const [rel, a] of after.files) {
    const b = before.files.get(rel);
    if (!b || b.size !== a.size || b.mtimeMs !== a.mtimeMs || b.ino !== a.ino) out.push(rel);
  }
  for (const rel of before.files.keys()) if (!after.files.has(rel)) out.push(rel);
  return out.sort();
}

/** The repository (from the scan's list) that holds `rel`: the deepest one above it. */
export function repoOf(repos: readonly string[], rel: string): string | undefined {
  let best: string | undefined;
  for (const r of repos) {
    if ((r === '' || rel.startsWith(`${r}/`)) && (best === undefined || r.length > best.length)) best = r;
  }
  return best;
}
