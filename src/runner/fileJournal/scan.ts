// The command scan: what the workspace's files were before a command and after it, so the journal
// can say which files the command changed. It sees the files list_files sees (scanWalk.ts: the same
// ignore rules), stats them (no contents read), and keeps what it saw between commands
// (scanIndex.ts), so a scan costs what changed plus one stat per file after the command — not a
// listing of the tree twice. It stops at its caps (files, time) and says so.
//
// Why nothing a command changes is missed, even with a stale index (docs/design.md, "Files are
// part of a checkpoint"):
// - After the command, every folder and every file is statted again (size, mtime, ctime, inode;
//   on two threads in a big workspace: statPool.ts).
//   ctime is set by the kernel on every write, chmod and utimes, so restoring mtime does not hide
//   a write; a file whose stat was taken within its timestamp's granularity of its last change is
//   fingerprinted (scanRacy.ts). Nothing about the after side relies on the watcher.
// - Before the command, every folder is statted too (a created, deleted or renamed entry moves its
//   folder's stat), the ignore files are statted, and the files are statted that the watcher named,
//   that it does not watch, or all of them when there is no trustworthy watcher. A file changed in
//   place whose event never came keeps its older stat in the "before" side: the change then shows
//   as the command's (its earlier content was read by the journal before the command, from git or
//   the agent's own version, or is unknown) — a wrong attribution, never a missed change.
import { diffFiles, type ScanFiles } from './scanTree';

export type { FileSig } from './scanTree';

/** Skipped whatever the settings say (besides .git, which every listing skips). */
export const ALWAYS_SKIPPED: readonly string[] = ['**/node_modules'];
export const DEFAULT_SCAN_MAX_FILES = 200_000;
export const DEFAULT_SCAN_MAX_MS = 15_000;

export interface ScanOptions {
  /** files.exclude globs (VS Code syntax, the keys set to true), relative to the workspace root. */
  exclude?: readonly string[];
  maxFiles?: number;
  maxMs?: number;
  signal?: AbortSignal;
}

/** Paths whose stat differs between two scans (created, deleted or rewritten), sorted. */
export function changedPaths(before: { files: ScanFiles }, after: { files: ScanFiles }): string[] {
  return diffFiles(before.files, after.files);
}

/** The repository (from the scan's list) that holds `rel`: the deepest one above it. */
export function repoOf(repos: readonly string[], rel: string): string | undefined {
  let best: string | undefined;
  for (const r of repos) {
    if ((r === '' || rel.startsWith(`${r}/`)) && (best === undefined || r.length > best.length)) best = r;
  }
  return best;
}
