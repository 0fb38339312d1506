// A compaction's snapshot made in a worker thread (snapshotWorker.ts), for snapshotStage.ts: the worker
// reads the run's files as of commit `last` (the live segment only up to its length then: appends go on
// meanwhile), rebuilds the run, encodes it and hands the bytes over (transferred, not copied); this
// thread stages them through the caller's file layer; the worker reads the staged file back and checks
// it in full. The codec a load computes after the snapshot comes back a piece at a time, each piece
// asked for once the last is taken in, so no single message holds this thread for long.
//
// The worker's run is the files' run: it must hold exactly `records` records at commit `last`, or the
// worker's result is not used and the caller compacts in its own thread from the run in memory.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RunMeta } from '../api/schema';
import { advance, newCodec, type Codec, type CodecDelta } from './codec';
import { SNAPSHOT_FILE } from './load';
import { parseSegmentNames } from './segment';

/** Snapshots made in a worker thread by this process (for the tests and the bench). */
export const offThreadCounts = { snapshots: 0 };

/** The run's files as a worker reads them. */
export interface LogFiles {
  /** The run's folder. */
  dir: string;
  /** The live segment and its length at commit `last` (null: none). */
  tail: { name: string; size: number } | null;
}

export interface WorkerJob {
  runId: string;
  meta: RunMeta;
  last: number;
  /** Records the run holds at commit `last`. */
  records: number;
  end: unknown;
  files: LogFiles;
  /** Log bytes from which a worker is worth its start. */
  from: number;
  /** Nobody waits for it: the worker runs at the lowest priority (where that is its thread's alone). */
  background: boolean;
}

/** Messages from the worker (snapshotWorker.ts). */
export type FromWorker =
  | { kind: 'bytes'; bytes: ArrayBuffer; length: number; header: CodecDelta['header']; timestamp: number | null }
  | { kind: 'piece'; map: 'outputs' | 'effects' | 'payloads'; entries: [string, unknown][] }
  | { kind: 'built' }
  | { kind: 'verified' }
  | { kind: 'error'; phase: 'build' | 'verify'; message: string };

/** Messages to the worker. */
export type ToWorker =
  ({ kind: 'build' } & Omit<WorkerJob, 'from'>) | { kind: 'next' } | { kind: 'verify'; tmp: string };

/**
 * The snapshot staged and checked with a worker's help; null when the log is smaller than `from`, no
 * worker can start, or the worker's run is not the one in memory (the caller then does it all itself).
 * Throws as the caller's own check would when the staged file does not read back.
 */
export async function snapshotInWorker(
  job: WorkerJob,
  here: {
    stage: (bytes: Buffer) => Promise<string>;
    unlink: (tmp: string) => Promise<void>;
    /** The staged file checked in this thread (when the worker is gone before it answers). */
    check: (tmp: string) => Promise<void>;
  },
): Promise<{ tmp: string; codec: Codec } | null> {
  if (logBytes(job.files) < job.from) return null;
  const worker = startWorker();
  if (!worker) return null;
  const port = new Port(worker);
  try {
    const { from: _from, ...build } = job;
    port.send({ kind: 'build', ...build });
    // Until something is staged, whatever goes wrong leaves the compaction to the caller's thread.
    const built = await receive(port).catch(() => null);
    if (!built) return null;
    const tmp = await here.stage(built.bytes);
    port.send({ kind: 'verify', tmp });
    const v = await port.next().catch(() => null);
    try {
      if (v === null) await here.check(tmp);
      else if (v.kind !== 'verified')
        throw new Error(v.kind === 'error' ? v.message : `the snapshot worker answered ${v.kind}`);
    } catch (err) {
      await here.unlink(tmp).catch(() => undefined);
      throw err;
    }
    offThreadCounts.snapshots++;
    return { tmp, codec: advance(newCodec(), built.delta) };
  } finally {
    void worker.terminate();
  }
}

/** The worker's snapshot and codec delta; null when its run is not the one asked for. */
async function receive(port: Port): Promise<{ bytes: Buffer; delta: CodecDelta } | null> {
  const first = await port.next();
  if (first.kind !== 'bytes') return null;
  const delta: CodecDelta = {
    outputs: new Map(),
    header: first.header,
    effects: new Map(),
    payloads: new Map(),
    timestamp: first.timestamp,
  };
  for (;;) {
    port.send({ kind: 'next' });
    const m = await port.next();
    if (m.kind === 'built') break;
    if (m.kind !== 'piece') return null;
    const into = delta[m.map] as Map<string, unknown>;
    for (const [k, v] of m.entries) into.set(k, v);
  }
  return { bytes: Buffer.from(first.bytes, 0, first.length), delta };
}

/** Bytes of the snapshot and segments the worker would read. */
function logBytes(files: LogFiles): number {
  let n = 0;
  try {
    for (const name of [SNAPSHOT_FILE, ...parseSegmentNames(fs.readdirSync(files.dir)).map((s) => s.name)]) {
      if (name === files.tail?.name) n += files.tail.size;
      else n += fs.statSync(path.join(files.dir, name), { throwIfNoEntry: false })?.size ?? 0;
    }
  } catch {
    return 0;
  }
  return n;
}

/**
 * The worker: bundled beside this code (dist/snapshotWorker.js), or — run from source, as the tests
 * and the bench are — its TypeScript, compiled in the worker as this process compiles its own.
 */
function startWorker(): Worker | null {
  try {
    const bundled = path.join(__dirname, 'snapshotWorker.js');
    if (fs.existsSync(bundled)) return new Worker(bundled);
    const source = path.join(__dirname, 'snapshotWorker.ts');
    if (!__filename.endsWith('.ts') || !fs.existsSync(source)) return null;
    const api = 'tsx/cjs/api';
    const tsx = createRequire(__filename).resolve(api);
    return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)});`, {
      eval: true,
    });
  } catch {
    return null;
  }
}

/** The worker's messages one at a time; its crash or exit fails the one awaited. */
class Port {
  private readonly queue: FromWorker[] = [];
  private waiting: { resolve: (m: FromWorker) => void; reject: (e: Error) => void } | null = null;
  private failed: Error | null = null;

  constructor(private readonly w: Worker) {
    w.on('message', (m: FromWorker) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = null;
        w.resolve(m);
      } else this.queue.push(m);
    });
    const fail = (err: Error) => {
      this.failed ??= err;
      const w = this.waiting;
      this.waiting = null;
      w?.reject(err);
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the snapshot worker exited (${code})`)));
  }

  send(m: ToWorker): void {
    this.w.postMessage(m);
  }

  next(): Promise<FromWorker> {
    const m = this.queue.shift();
    if (m) return Promise.resolve(m);
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }
}
