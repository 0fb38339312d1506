// The pure-Node engine: used where no ripgrep binary is found (plain-Node tests, other hosts).
// The regex runs in a worker thread with a deadline: a model-written pattern that backtracks
// catastrophically (e.g. "(a+)+$") would otherwise freeze the extension host; here the worker is
// terminated and the answer says where it stopped, with the matches found until then.
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import { ToolFailure } from '../types';
import { walkFiles } from './nodeWalk';
import {
  type FileList,
  fileLimits,
  type Hit,
  type ListLimits,
  MAX_POSTED_LINE,
  type Scope,
  type SearchQuery,
  type SearchResult,
} from './types';

/**
 * The fallback reads whole files in its worker (the bytes and their decoded text, in this process):
 * bigger ones are skipped, and the answer says so. The cap keeps a repository's largest file from
 * costing the host more than a few times itself.
 */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export async function nodeList(scope: Scope, limits: ListLimits = {}): Promise<FileList> {
  return walkFiles(scope, {
    filter: null,
    maxFiles: limits.maxFiles ?? fileLimits.maxFiles,
    deadline: limits.deadline ?? null,
  });
}

export async function nodeSearch(scope: Scope, q: SearchQuery): Promise<SearchResult> {
  const deadline = Date.now() + fileLimits.deadlineMs;
  const walk = await walkFiles(scope, { filter: q.filter, maxFiles: fileLimits.maxFiles, deadline });
  if (walk.stoppedBy === 'deadline') {
    return {
      hits: [],
      more: false,
      stopped: { kind: 'deadline', searchedFiles: 0, totalFiles: null, currentFile: null },
      warnings: [],
    };
  }
  const job: SearchJob = {
    pattern: q.pattern,
    flags: q.caseSensitive ? '' : 'i',
    files: walk.files.map((rel) => ({ rel, abs: path.join(scope.root, rel) })),
    skip: q.offset,
    want: q.limit + 1,
    maxFileBytes: MAX_FILE_BYTES,
    maxPostedLine: MAX_POSTED_LINE,
    skipLinked: typeof q.onLinked === 'function',
  };
  const r = await searchInWorker(job, deadline, scope.signal, q.onLinked ?? null);
  const more = r.hits.length > q.limit;
  const stopped =
    r.stopped ?? (walk.stoppedBy === 'limit' ? { kind: 'walk_limit' as const, walkedFiles: walk.files.length } : null);
  return { hits: r.hits.slice(0, q.limit), more, stopped, warnings: r.warnings };
}

interface SearchJob {
  pattern: string;
  flags: string;
  files: { abs: string; rel: string }[];
  skip: number;
  want: number;
  maxFileBytes: number;
  maxPostedLine: number;
  skipLinked: boolean;
}

/** Self-contained (the extension is one bundle). Writes the index of the file it is in to `progress`. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { pattern, flags, files, skip, want, maxFileBytes, maxPostedLine, skipLinked, progress } = workerData;
const at = new Int32Array(progress);
const re = new RegExp(pattern, flags);
let seen = 0;
let sent = 0;
outer: for (let i = 0; i < files.length; i++) {
  Atomics.store(at, 0, i);
  const f = files[i];
  let buf;
  try {
    const st = fs.statSync(f.abs);
    if (!st.isFile()) continue;
    if (skipLinked && st.nlink > 1) {
      parentPort.postMessage({ type: 'linked', rel: f.rel });
      continue;
    }
    if (st.size > maxFileBytes) {
      parentPort.postMessage({ type: 'warning', text: f.rel + ': not searched (' + st.size + ' bytes; the built-in search reads files up to ' + maxFileBytes + ' bytes)' });
      continue;
    }
    buf = fs.readFileSync(f.abs);
  } catch (e) {
    parentPort.postMessage({ type: 'warning', text: f.rel + ': ' + e.message });
    continue;
  }
  if (buf.includes(0)) continue; // binary
  const text = buf.toString('utf8');
  const lines = text.split('\\n');
  if (text.endsWith('\\n')) lines.pop();
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].endsWith('\\r') ? lines[n].slice(0, -1) : lines[n];
    const m = re.exec(line);
    if (!m || seen++ < skip) continue;
    const col = m.index;
    const start = line.length <= maxPostedLine ? 0 : Math.max(0, col - maxPostedLine / 2);
    const shown = start === 0 && line.length <= maxPostedLine ? line : line.slice(start, start + maxPostedLine);
    parentPort.postMessage({ type: 'hit', hit: { rel: f.rel, line: n + 1, text: shown, textStart: start, lineLength: line.length, column: col } });
    if (++sent >= want) break outer;
  }
}
Atomics.store(at, 0, files.length);
parentPort.postMessage({ type: 'done' });
`;

type WorkerMessage =
  { type: 'hit'; hit: Hit } | { type: 'warning'; text: string } | { type: 'linked'; rel: string } | { type: 'done' };

interface WorkerOutcome {
  hits: Hit[];
  warnings: string[];
  stopped: SearchResult['stopped'];
}

function searchInWorker(
  job: SearchJob,
  deadline: number,
  signal: AbortSignal,
  onLinked: ((rel: string) => void) | null,
): Promise<WorkerOutcome> {
  return new Promise((resolve, reject) => {
    const progress = new SharedArrayBuffer(4);
    const at = new Int32Array(progress);
    const out: WorkerOutcome = { hits: [], warnings: [], stopped: null };
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ...job, progress } });
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const onDeadline = (): void => {
      const i = Atomics.load(at, 0);
      out.stopped = {
        kind: 'deadline',
        searchedFiles: i,
        totalFiles: job.files.length,
        currentFile: job.files[i]?.rel ?? null,
      };
      finish(() => resolve(out));
    };
    const timer = setTimeout(onDeadline, Math.max(0, deadline - Date.now()));
    const onAbort = (): void => finish(() => reject(new ToolFailure('Cancelled.')));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort);
    worker.on('message', (m: WorkerMessage) => {
      if (m.type === 'hit') out.hits.push(m.hit);
      else if (m.type === 'warning') out.warnings.push(m.text);
      else if (m.type === 'linked') onLinked?.(m.rel);
      else finish(() => resolve(out));
    });
    worker.once('error', (err) => finish(() => reject(new ToolFailure(`search_text failed: ${err.message}`))));
    worker.once('exit', (code) =>
      finish(() => reject(new ToolFailure(`search_text failed: the search worker exited with code ${code}`))),
    );
  });
}
