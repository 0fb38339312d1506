// The ripgrep engine: the `rg` binary VS Code ships, found by the extension (src/ripgrepPath.ts).
// Flags that make its answers the fallback's: --sort path (a stable order, so pages line up),
// --hidden (dotfiles count) with .git excluded by glob, --no-config and --no-ignore-global (no
// per-user state), --crlf (`$` before \r\n), --engine auto (look-around and back-references via
// PCRE2, closer to JavaScript). Cancel and the deadline kill the process; a finished call has
// always waited for it to exit.
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { ToolFailure } from '../types';
import { matchPath, MAX_RECORD_CHARS, RecordSplitter, type RgRecord } from './records';
import {
  fileLimits,
  MAX_POSTED_LINE,
  type FileList,
  type Hit,
  type ListLimits,
  type Scope,
  type SearchQuery,
  type SearchResult,
} from './types';

/** The binary could not be started (moved, not executable): the finder falls back to Node. */
export class RipgrepUnavailable extends Error {
  override readonly name = 'RipgrepUnavailable';
}

const MAX_STDERR = 16 * 1024;

/** Matching lines collected from an unordered (parallel) search before it gives way to an ordered one. */
const MAX_UNORDERED_HITS = 2_000;

function commonArgs(scope: Scope, sorted = true): string[] {
  const args = ['--no-config', '--hidden', '--no-ignore-global', ...(sorted ? ['--sort', 'path'] : [])];
  for (const g of scope.excludes) args.push('-g', `!${g}`);
  return args;
}

const target = (scope: Scope): string => (scope.rel === '.' ? '.' : scope.rel);
const clean = (p: string): string => (p.startsWith('./') ? p.slice(2) : p);

export async function ripgrepList(rg: string, scope: Scope, limits: ListLimits = {}): Promise<FileList> {
  const maxFiles = limits.maxFiles ?? fileLimits.maxFiles;
  const files: string[] = [];
  let full = false;
  const run = await runRipgrep(
    rg,
    scope,
    [...commonArgs(scope), '--files', '--null', '--', target(scope)],
    '\0',
    limits.deadline ?? null,
    (rec) => {
      if (rec.cut) return 'more'; // no path is a megabyte long
      if (files.length >= maxFiles) {
        full = true;
        return 'stop';
      }
      files.push(clean(rec.text));
      return 'more';
    },
  );
  const stoppedBy = full ? 'limit' : run.deadline ? 'deadline' : null;
  return { files, complete: stoppedBy === null, stoppedBy };
}

/**
 * `--sort path` makes ripgrep search on one thread. So first search on all threads and sort the
 * matches here (rg's order: depth first, names byte-wise); only when there are too many matches to
 * hold does an ordered search stream them and stop after the page.
 */
export async function ripgrepSearch(rg: string, scope: Scope, q: SearchQuery): Promise<SearchResult> {
  const deadline = Date.now() + fileLimits.deadlineMs;
  const all: Hit[] = [];
  const linked = linkedFiles(scope, q);
  const long = new Set<string>();
  const matchRecord = (rec: RgRecord): Hit | null => toMatch(rec, q, linked, long);
  const fast = await runRipgrep(rg, scope, searchArgs(scope, q, false), '\n', deadline, (rec) => {
    const hit = matchRecord(rec);
    if (hit) all.push(hit);
    return all.length > MAX_UNORDERED_HITS ? 'stop' : 'more';
  });
  if (fast.deadline || all.length <= MAX_UNORDERED_HITS) {
    const page = all.sort(byPathThenLine).slice(q.offset, q.offset + q.limit + 1);
    // Out of time, the unordered matches are a random subset: only the ones known so far, in order.
    return result(page, q, fast.deadline, [...longLines(long), ...fast.warnings]);
  }
  long.clear();
  const hits: Hit[] = [];
  let seen = 0;
  const ordered = await runRipgrep(rg, scope, searchArgs(scope, q, true), '\n', deadline, (rec) => {
    const hit = matchRecord(rec);
    if (hit === null || seen++ < q.offset) return 'more';
    hits.push(hit);
    return hits.length > q.limit ? 'stop' : 'more';
  });
  return result(hits, q, ordered.deadline, [...longLines(long), ...ordered.warnings]);
}

function searchArgs(scope: Scope, q: SearchQuery, sorted: boolean): string[] {
  const args = [
    ...commonArgs(scope, sorted),
    '--json',
    '--crlf',
    '--engine',
    'auto',
    q.caseSensitive ? '--case-sensitive' : '--ignore-case',
  ];
  if (q.nameGlob !== null) args.push('--type-add', `awglob:${q.nameGlob}`, '--type', 'awglob');
  args.push('-e', q.pattern, '--', target(scope));
  return args;
}

/**
 * The hit a record is, if it is a match in a file the query wants. A match record cut at the bound
 * (a line about a megabyte long or longer) is not shown: its file is named in `long`.
 */
function toMatch(rec: RgRecord, q: SearchQuery, linked: (rel: string) => boolean, long: Set<string>): Hit | null {
  if (!rec.text.startsWith('{"type":"match"')) return null;
  if (rec.cut) {
    const rel = matchPath(rec.text);
    if (rel !== null && (q.filter === null || q.filter(clean(rel))) && !linked(clean(rel))) long.add(clean(rel));
    return null;
  }
  const hit = toHit(JSON.parse(rec.text) as RgMatch);
  return (q.filter === null || q.filter(hit.rel)) && !linked(hit.rel) ? hit : null;
}

const longLines = (files: Set<string>): string[] =>
  [...files].map(
    (rel) =>
      `${rel}: a matching line over ${MAX_RECORD_CHARS} characters is not shown (read_file reads it in a line range)`,
  );

/**
 * Whether a matching file has other names (q.onLinked), asked once per file: ripgrep does not say,
 * so its matching files are statted here (a few hundred at most per page).
 */
function linkedFiles(scope: Scope, q: SearchQuery): (rel: string) => boolean {
  const onLinked = q.onLinked;
  if (typeof onLinked !== 'function') return () => false;
  const known = new Map<string, boolean>();
  return (rel) => {
    let linked = known.get(rel);
    if (linked === undefined) {
      const st = lstatSync(path.join(scope.root, rel), { throwIfNoEntry: false });
      linked = st !== undefined && st.isFile() && st.nlink > 1;
      known.set(rel, linked);
      if (linked) onLinked(rel);
    }
    return linked;
  };
}

function result(hits: Hit[], q: SearchQuery, deadline: boolean, warnings: string[]): SearchResult {
  const stopped = deadline
    ? { kind: 'deadline' as const, searchedFiles: null, totalFiles: null, currentFile: null }
    : null;
  return { hits: hits.slice(0, q.limit), more: hits.length > q.limit, stopped, warnings };
}

/** ripgrep's `--sort path` order: component by component, names compared as strings. */
export function byPathThenLine(a: Hit, b: Hit): number {
  if (a.rel !== b.rel) {
    const pa = a.rel.split('/');
    const pb = b.rel.split('/');
    for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
      const x = pa[i] as string;
      const y = pb[i] as string;
      if (x !== y) return x < y ? -1 : 1;
    }
    return pa.length - pb.length;
  }
  return a.line - b.line;
}

interface RgText {
  text?: string;
  bytes?: string;
}
interface RgMatch {
  data: { path: RgText; line_number: number; lines: RgText; submatches: { start: number }[] };
}

const decode = (t: RgText): string => t.text ?? Buffer.from(t.bytes ?? '', 'base64').toString('utf8');

function toHit(m: RgMatch): Hit {
  const raw = decode(m.data.lines);
  const line = raw.replace(/\r?\n$/, '');
  // ripgrep gives byte offsets; the display (and the fallback) count UTF-16 units.
  const startByte = m.data.submatches[0]?.start ?? 0;
  const column = Buffer.from(line, 'utf8').subarray(0, startByte).toString('utf8').length;
  // A long line is held as the window the display needs, copied: a slice would keep the whole line.
  const start = line.length <= MAX_POSTED_LINE ? 0 : Math.max(0, column - MAX_POSTED_LINE / 2);
  const text =
    start === 0 && line.length <= MAX_POSTED_LINE ? line : copied(line.slice(start, start + MAX_POSTED_LINE));
  return {
    rel: clean(decode(m.data.path)),
    line: m.data.line_number,
    text,
    textStart: start,
    lineLength: line.length,
    column,
  };
}

const copied = (s: string): string => Buffer.from(s, 'utf16le').toString('utf16le');

interface RunOutcome {
  deadline: boolean;
  warnings: string[];
}

/**
 * Spawns rg in the workspace root and hands each record (split on `sep`) to `onRecord` until it
 * says 'stop'; then kills the process. Resolves after the process has exited.
 */
function runRipgrep(
  rg: string,
  scope: Scope,
  args: string[],
  sep: string,
  deadline: number | null,
  onRecord: (rec: RgRecord) => 'more' | 'stop',
): Promise<RunOutcome> {
  return new Promise((resolve, reject) => {
    if (scope.signal.aborted) return reject(new ToolFailure('Cancelled.'));
    const child = spawn(rg, args, { cwd: scope.root, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const split = new RecordSplitter(sep);
    let stderr = '';
    let records = 0;
    let stoppedBy: 'enough' | 'deadline' | 'cancel' | null = null;
    const stop = (why: 'enough' | 'deadline' | 'cancel'): void => {
      stoppedBy ??= why;
      child.kill('SIGKILL');
    };
    const timer = deadline === null ? null : setTimeout(() => stop('deadline'), Math.max(0, deadline - Date.now()));
    const onAbort = (): void => stop('cancel');
    scope.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stoppedBy !== null) return;
      for (const rec of split.push(chunk)) {
        records++;
        if ((rec.cut || rec.text !== '') && onRecord(rec) === 'stop') return stop('enough');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < MAX_STDERR) stderr += chunk;
    });
    let spawnError: NodeJS.ErrnoException | null = null;
    child.on('error', (e: NodeJS.ErrnoException) => (spawnError = e));
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      scope.signal.removeEventListener('abort', onAbort);
      if (spawnError) return reject(new RipgrepUnavailable(`ripgrep (${rg}) could not start: ${spawnError.message}`));
      const last = stoppedBy === null ? split.end() : null;
      if (last) {
        records++;
        onRecord(last);
      }
      if (stoppedBy === 'cancel') return reject(new ToolFailure('Cancelled.'));
      const warnings = stderr
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      // Exit code 2 is "an error happened"; without a single record nothing ran (a bad pattern).
      if (code === 2 && records === 0 && stoppedBy === null)
        return reject(new ToolFailure(`ripgrep could not run the search: ${warnings.join(' ') || 'exit code 2'}`));
      resolve({ deadline: stoppedBy === 'deadline', warnings });
    });
  });
}
