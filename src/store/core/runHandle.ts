// A run as the core holds it: the model, and while this instance owns it, the lease and writer.
import type { EngineLock } from './engine';
import { RunNotOwnedError } from '../api/errors';
import type { RunModel } from './runModel';
import type { CommitQueue } from './commitQueue';
import type { CorruptionReport, OwnerInfo, RunLease } from '../api/types';
import type { TailWitness } from './storedSchema';

export class RunHandle {
  lease: Lease | undefined;
  writer: CommitQueue | undefined;
  /** The chain stopped at a bad file that this instance could not quarantine (someone else owns the run). */
  damaged = false;
  /** What the load that built this handle found wrong (null: nothing), and the tail witness it read. */
  loadReport: CorruptionReport | null = null;
  loadWitness: TailWitness | null = null;
  /** A compaction runs in the background (Compactor.inBackground). */
  compacting = false;
  /** That compaction, settled once it is done (it never rejects: a failure is reported as an event). */
  compaction: Promise<void> | null = null;
  /** Background upkeep a barrier scheduled, not started yet (StoreWriter.upkeepSoon): settles once it has. */
  upkeep: Promise<void> | null = null;
  /** A resume point being written (StoreWriter.pointIfDue): settles once it is (it never rejects). */
  pointWrite: Promise<void> | null = null;
  /** The run, read from its resume point, being made whole (RunLoader.makeWhole). */
  whole: Promise<void> | null = null;
  /** Reading it whole failed (damage before its point, reported): not tried again while it is held here. */
  wholeFailed: Error | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    public model: RunModel,
    public durableCommits: number,
  ) {}

  get owned(): boolean {
    return !!this.lease && !this.lease.lost;
  }

  /** Runs write ops one at a time (seqs and validation see every earlier write). */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

export class Lease implements RunLease {
  private released = false;
  /** Its owner let it go, but the flush before giving it back failed (a full disk, a database away). */
  releaseRequested = false;

  constructor(
    readonly run_id: string,
    readonly owner: OwnerInfo,
    private readonly lock: EngineLock,
    private readonly onRelease: () => Promise<void>,
  ) {}

  get lost(): boolean {
    return this.released || this.lock.lost;
  }

  /** Flushes the run's queued writes, then gives the lock back. A failed flush keeps the lease. */
  async release(): Promise<void> {
    if (this.released) return;
    this.releaseRequested = true;
    await this.onRelease();
    this.released = true;
    await this.lock.release();
  }

  /** Drops the lease without flushing (store closing, run deleted). */
  async forceRelease(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.lock.release().catch(() => undefined);
  }

  dispose(): void {
    this.release().catch(() => undefined);
  }
}

export function notOwned(runId: string): RunNotOwnedError {
  return new RunNotOwnedError(runId);
}
