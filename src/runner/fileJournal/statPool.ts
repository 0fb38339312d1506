// Statting many files on two threads. A command scan stats every file of the workspace after the
// command (and before it too when no watcher says what changed): one `lstat` per file, nearly all
// of its time the system call, which one thread cannot overlap. git does the same refresh with
// threads (`core.preloadIndex`); so does this: the main thread and one worker take chunks of the
// list from a shared counter until it is used up, each writing what it found into one shared
// array. The benchmark measures what it gains (bench/files.ts, "command scan").
//
// Every answer is a hint the caller may ignore: a slot the worker did not fill (it failed to
// start, died, or the scan stopped) reads as StatKind.NotStatted and the caller stats that file itself, so
// the worker can never change what the scan concludes, only how soon.
import { availableParallelism } from 'node:os';
import { lstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Disposable } from '../../common/disposable';
import type { StatLike } from './scanTree';

/** Numbers per path in the result: kind, size, mtimeMs, ctimeMs, ino, mode. */
export const STAT_WIDTH = 6;
export const StatKind = {
  /** Not statted (the caller stats it). */
  NotStatted: 0,
  File: 1,
  /** Gone, not a regular file, or not statable (ENOTDIR, EACCES …): not a file the scan can see. */
  NotAFile: 2,
} as const;
/** Paths a chunk holds: small enough that the two threads finish close together. */
const CHUNK = 256;
/** Workers lost (errors, exits) before the pool stops starting new ones. */
const MAX_LOSSES = 3;
/** Below this many paths the main thread alone is as fast (no hand-over). */
export const PARALLEL_MIN = 4_000;

/**
 * Self-contained (the extension is one bundle). Per job: the paths joined by NUL (or null: the
 * previous job's again), the shared counter (next index; index 1 a stop flag; index 2 how many it
 * took) and the results; it takes chunks until none is left.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const W = ${STAT_WIDTH};
let paths = [];
parentPort.on('message', (job) => {
  if (job.paths !== null) paths = job.paths.split('\\0');
  const next = new Int32Array(job.counter);
  const out = new Float64Array(job.results);
  const n = paths.length;
  const pause = job.pauseMs > 0 ? new Int32Array(new SharedArrayBuffer(4)) : null;
  for (;;) {
    if (pause) Atomics.wait(pause, 0, 0, job.pauseMs);
    if (Atomics.load(next, 1) !== 0) break;
    const from = Atomics.add(next, 0, job.chunk);
    if (from >= n) break;
    const to = Math.min(n, from + job.chunk);
    Atomics.add(next, 2, to - from);
    for (let i = from; i < to; i++) {
      const o = i * W;
      let st;
      try { st = fs.lstatSync(paths[i], { throwIfNoEntry: false }); } catch { out[o] = 2; continue; }
      if (!st || !st.isFile()) { out[o] = 2; continue; }
      out[o + 1] = st.size; out[o + 2] = st.mtimeMs; out[o + 3] = st.ctimeMs; out[o + 4] = st.ino; out[o + 5] = st.mode;
      out[o] = 1;
    }
  }
  parentPort.postMessage(job.id);
});
`;

export interface StatOptions {
  /**
   * Called after each chunk the main thread did: false stops the job (a deadline, a cancel).
   * `helped()`: how many paths the worker has taken so far.
   */
  tick: (n: number, helped: () => number) => Promise<boolean>;
}

export interface StatPoolOptions {
  /** Fewer paths than this are statted on the main thread alone (PARALLEL_MIN; tests lower it). */
  min?: number;
  /** Paths per chunk (tests lower it so that a few files are shared). */
  chunk?: number;
  /** The main thread starts once the worker has taken its first chunk (tests: the worker's part is certain). */
  workerFirst?: boolean;
  /** The worker waits this long before each chunk (tests: a stop finds it mid-job however busy the machine). */
  workerPauseMs?: number;
}

export interface StatResult {
  /** Per path STAT_WIDTH numbers: StatKind, size, mtimeMs, ctimeMs, ino, mode. */
  stats: Float64Array;
  /** How many of the paths the worker took. */
  helped: number;
}

export class StatPool implements Disposable {
  readonly min: number;
  private readonly chunk: number;
  private readonly workerFirst: boolean;
  private readonly workerPauseMs: number;
  private worker: Worker | null = null;
  private ready = false;
  private online: Promise<boolean> = Promise.resolve(false);
  private onOnline: (up: boolean) => void = () => undefined;
  private broken = !canShare();
  private losses = 0;
  private jobs = 0;
  /** The paths the worker holds (sent with an earlier job): a scan of the same files sends none. */
  private sent: readonly string[] | null = null;

  constructor(opts: StatPoolOptions = {}) {
    this.min = opts.min ?? PARALLEL_MIN;
    this.chunk = Math.max(1, opts.chunk ?? CHUNK);
    this.workerFirst = opts.workerFirst === true;
    this.workerPauseMs = opts.workerPauseMs ?? 0;
  }

  /** Resolves once the worker is up (true), or when there will be none (false). Starts it. */
  whenReady(): Promise<boolean> {
    this.warm();
    const w = this.worker;
    if (this.broken || !w) return Promise.resolve(false);
    if (this.ready) return Promise.resolve(true);
    w.ref(); // an unref'd worker's boot does not keep the process alive for the caller waiting on it
    return this.online.finally(() => w.unref());
  }

  /** Starts the worker ahead of its first job (booting a V8 isolate takes a while on a slow machine). */
  warm(): void {
    if (this.worker || this.broken) return;
    this.online = new Promise((resolve) => (this.onOnline = resolve));
    try {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.unref();
      w.once('online', () => {
        this.ready = this.worker === w;
        this.onOnline(this.ready);
      });
      w.on('error', () => this.lose(w));
      w.on('exit', () => this.lose(w));
      this.worker = w;
    } catch {
      this.broken = true;
      this.onOnline(false);
    }
  }

  /**
   * lstat of every path: per path STAT_WIDTH numbers (StatKind, size, mtimeMs, ctimeMs, ino,
   * mode). The worker helps once it is up; until then (or without one) the main thread does all.
   */
  async statMany(paths: readonly string[], opts: StatOptions): Promise<StatResult> {
    const n = paths.length;
    const shared = !this.broken && n >= this.min;
    const counter = new SharedArrayBuffer(12);
    const results = new SharedArrayBuffer(n * STAT_WIDTH * 8);
    const next = new Int32Array(counter);
    const out = new Float64Array(results);
    let helping: Promise<void> | null = null;
    if (shared) {
      this.warm();
      if (this.worker && this.ready) helping = this.post(this.sameAsSent(paths) ? null : paths, counter, results);
    }
    const helped = (): number => Atomics.load(next, 2);
    let gone = false;
    void helping?.then(() => (gone = true));
    if (helping && this.workerFirst)
      while (helped() === 0 && Atomics.load(next, 0) < n && !gone) await new Promise((r) => setImmediate(r));
    try {
      for (;;) {
        const from = Atomics.add(next, 0, this.chunk);
        if (from >= n) break;
        const to = Math.min(n, from + this.chunk);
        for (let i = from; i < to; i++) statInto(paths[i]!, out, i);
        if (!(await opts.tick(to - from, helped))) break;
      }
    } finally {
      Atomics.store(next, 1, 1); // stopped or done: the worker takes no further chunk
    }
    if (helping) await helping;
    return { stats: out, helped: helped() };
  }

  dispose(): void {
    this.broken = true;
    const w = this.worker;
    this.lose(w);
    if (w) void w.terminate();
  }

  /** The worker's part of one job; resolves when it took its last chunk (or is gone). */
  private post(paths: readonly string[] | null, counter: SharedArrayBuffer, results: SharedArrayBuffer): Promise<void> {
    const w = this.worker!;
    const id = ++this.jobs;
    return new Promise<void>((resolve) => {
      const onMessage = (done: unknown): void => {
        if (done === id) finish();
      };
      const finish = (): void => {
        w.off('message', onMessage);
        w.off('exit', finish);
        w.unref();
        resolve();
      };
      // Referenced while it works: the scan awaits its answer, and nothing else may keep the process alive.
      w.ref();
      w.on('message', onMessage);
      w.once('exit', finish);
      try {
        w.postMessage({
          id,
          paths: paths && paths.join('\0'),
          counter,
          results,
          chunk: this.chunk,
          pauseMs: this.workerPauseMs,
        });
        if (paths) this.sent = paths;
      } catch {
        finish();
      }
    });
  }

  /**
   * Whether the worker holds these paths already. The caller keeps each folder's path strings
   * between scans (scanRefresh.ts), so an unchanged list compares string by string as pointers.
   */
  private sameAsSent(paths: readonly string[]): boolean {
    const sent = this.sent;
    if (!sent || sent.length !== paths.length) return false;
    for (let i = 0; i < paths.length; i++) if (sent[i] !== paths[i]) return false;
    return true;
  }

  /** The worker is gone (an error, an exit, dispose): the next job starts another. */
  private lose(w: Worker | null): void {
    if (w === null || this.worker !== w) return;
    this.worker = null;
    this.sent = null;
    this.ready = false;
    this.onOnline(false);
    if (++this.losses >= MAX_LOSSES) this.broken = true; // it keeps dying: the main thread stats alone
  }
}

function statInto(abs: string, out: Float64Array, i: number): void {
  let st;
  try {
    st = lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    out[i * STAT_WIDTH] = StatKind.NotAFile; // ENOTDIR, EACCES …: as the caller's own lstat would judge it
    return;
  }
  const o = i * STAT_WIDTH;
  if (!st?.isFile()) {
    out[o] = StatKind.NotAFile;
    return;
  }
  out[o + 1] = st.size;
  out[o + 2] = st.mtimeMs;
  out[o + 3] = st.ctimeMs;
  out[o + 4] = st.ino;
  out[o + 5] = st.mode;
  out[o] = StatKind.File;
}

/** Slot `i`'s stat (its kind must be StatKind.File). */
export function statOfSlot(stats: Float64Array, i: number): StatLike {
  const o = i * STAT_WIDTH;
  return {
    size: stats[o + 1]!,
    mtimeMs: stats[o + 2]!,
    ctimeMs: stats[o + 3]!,
    ino: stats[o + 4]!,
    mode: stats[o + 5]!,
  };
}

/** Whether a second thread can help here at all (more than one core). */
function canShare(): boolean {
  return availableParallelism() > 1;
}
