// A bounded scan of the workspace's files, run before and after a command so the journal can say
// which files the command changed. It reads no file contents (a stat per file), honours .gitignore
// (nested ones, and .git/info/exclude) and the user's files.exclude globs, skips .git and
// node_modules, and stops at its caps saying so. Self-contained on purpose (no ripgrep: it must
// also run where VS Code's binary is not found, and it needs stats, not names).
import { lstatSync, promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

export const ALWAYS_SKIPPED: ReadonlySet<string> = new Set(['.git', 'node_modules']);
export const DEFAULT_SCAN_MAX_FILES = 200_000;
export const DEFAULT_SCAN_MAX_MS = 15_000;

export interface ScanOptions {
  /** files.exclude globs (the keys set to true), relative to the workspace root. */
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
}

export interface Scan {
  /** Every file seen, by '/'-separated path relative to the root. */
  files: Map<string, FileSig>;
  /** Folders holding a git repository (a .git folder or file), relative; '' is the root. Nested ones too. */
  repos: string[];
  complete: boolean;
  /** Why the scan stopped early, for the user. */
  note: string | null;
  ms: number;
}

interface Frame {
  rel: string;
  matchers: readonly Matcher[];
}

interface Matcher {
  base: string;
  ig: Ignore;
}

export async function scanWorkspace(root: string, opts: ScanOptions = {}): Promise<Scan> {
  const t0 = performance.now();
  const maxFiles = opts.maxFiles ?? DEFAULT_SCAN_MAX_FILES;
  const maxMs = opts.maxMs ?? DEFAULT_SCAN_MAX_MS;
  const excluded = opts.exclude && opts.exclude.length > 0 ? picomatch([...opts.exclude], { dot: true }) : () => false;
  const out: Scan = { files: new Map(), repos: [], complete: true, note: null, ms: 0 };
  const stack: Frame[] = [{ rel: '', matchers: [] }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (opts.signal?.aborted) return stop(out, t0, 'the scan was cancelled');
    if (performance.now() - t0 > maxMs) return stop(out, t0, `the scan stopped after ${(maxMs / 1000).toFixed(0)} s (${out.files.size.toLocaleString('en')} files seen)`);
    const dir = path.join(root, frame.rel);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      continue; // removed while scanning, or unreadable: nothing in it can be judged either way
    }
    const matchers = await withIgnoreFiles(dir, frame, entries, out);
    const files: string[] = [];
    for (const e of entries) {
      if (ALWAYS_SKIPPED.has(e.name)) continue;
      const rel = frame.rel ? `${frame.rel}/${e.name}` : e.name;
      const isDir = e.isDirectory();
      if (excluded(rel) || isIgnored(matchers, rel, isDir)) continue;
      if (isDir) stack.push({ rel, matchers });
      else files.push(rel);
    }
    if (out.files.size + files.length > maxFiles) {
      return stop(out, t0, `the scan stopped at ${maxFiles.toLocaleString('en')} files (the workspace has more)`);
    }
    // Synchronous stats, a directory at a time: several times faster than a promise per file
    // through the thread pool, and the event loop gets a turn between directories.
    for (const rel of files) {
      const s = lstatSync(path.join(root, rel), { throwIfNoEntry: false });
      if (s && !s.isDirectory()) out.files.set(rel, { size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
    }
    await new Promise<void>((r) => setImmediate(r));
  }
  out.ms = performance.now() - t0;
  return out;
}

function stop(out: Scan, t0: number, note: string): Scan {
  out.complete = false;
  out.note = note;
  out.ms = performance.now() - t0;
  return out;
}

/** The matchers that apply inside `dir`: the parent's plus its .gitignore (and a repo's info/exclude). */
async function withIgnoreFiles(dir: string, frame: Frame, entries: Dirent[], out: Scan): Promise<readonly Matcher[]> {
  const texts: string[] = [];
  if (entries.some((e) => e.name === '.git')) {
    out.repos.push(frame.rel);
    texts.push(await fs.readFile(path.join(dir, '.git', 'info', 'exclude'), 'utf8').catch(() => ''));
  }
  if (entries.some((e) => e.name === '.gitignore' && !e.isDirectory())) texts.push(await fs.readFile(path.join(dir, '.gitignore'), 'utf8').catch(() => ''));
  const rules = texts.join('\n').trim();
  if (!rules) return frame.matchers;
  return [...frame.matchers, { base: frame.rel, ig: ignore().add(rules) }];
}

/** Git's rule: the deepest ignore file with an opinion on the path decides. */
function isIgnored(matchers: readonly Matcher[], rel: string, isDir: boolean): boolean {
  let ignored = false;
  for (const m of matchers) {
    const sub = m.base ? rel.slice(m.base.length + 1) : rel;
    const r = m.ig.test(isDir ? `${sub}/` : sub);
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
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
