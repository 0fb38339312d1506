// The product's store: the shared core over the on-disk engine (README.md). Opening reads the
// index's head (index_head.json) when it is current, else index.json and lists runs/ — never a run's
// log; a run's log is read when the run is touched.
import os from 'node:os';
import { Store, type CoreOptions } from '../core/store';
import { DiskEngine } from './engine';
import { defaultLockOptions, type LockOptions } from './lock';
import { nodeFs, type FsLayer } from './fsLayer';

export interface DiskStoreOptions extends CoreOptions {
  /** The file-system layer (tests inject faults here). */
  fs?: FsLayer;
  /** Owner-lock heartbeat and staleness (defaults 5 s / 30 s). */
  heartbeatMs?: number;
  staleMs?: number;
  /** Backoff between retries of a rename/link failing with EPERM/EBUSY. */
  retryDelaysMs?: readonly number[];
  /**
   * A compaction of a run's log of at least this many bytes makes its snapshot in a worker thread
   * (default 1 MiB; Infinity: never), when the log is on the real file system.
   */
  compactOffThreadFrom?: number;
  /**
   * Resume points (disk/resumePoint.ts): from a log of `from` bytes on, one each time the log grows
   * by `every` bytes (or by as much as the last point). Default: engine.ts RESUME_POINTS.
   */
  resumePoints?: { from: number; every: number };
}

/** The store over the disk engine (no subclass: the same façade as every backend). */
export type DiskStore = Store<DiskEngine>;

/** The store in `dir`, usable at once (calls wait for the open to finish; its errors surface there). */
export function openDiskStore(dir: string, opts: DiskStoreOptions = {}): DiskStore {
  const now = opts.now ?? Date.now;
  const lock: LockOptions = {
    ...defaultLockOptions(),
    hostname: os.hostname(),
    now,
    ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}),
    ...(opts.staleMs !== undefined ? { staleMs: opts.staleMs } : {}),
  };
  const engine = new DiskEngine(dir, {
    fs: opts.fs ?? nodeFs,
    lock,
    retryDelaysMs: opts.retryDelaysMs,
    now,
    ...(opts.headRuns !== undefined ? { headRuns: opts.headRuns } : {}),
    ...(opts.compactOffThreadFrom !== undefined ? { compactOffThreadFrom: opts.compactOffThreadFrom } : {}),
    ...(opts.resumePoints !== undefined ? { resumePoints: opts.resumePoints } : {}),
  });
  return new Store(engine, opts).start();
}

/** The same, resolved once open (rejects if the folder cannot be opened). */
export async function openDiskStoreReady(dir: string, opts: DiskStoreOptions = {}): Promise<DiskStore> {
  const store = openDiskStore(dir, opts);
  await store.whenOpen();
  return store;
}
