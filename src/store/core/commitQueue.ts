// One run's write queue. Deferred ops (write-behind checkpoints) are already applied to the model
// and wait here; a durable op joins them and they all go out in one commit (so a step costs one
// fsync'd file per durable point, not one per checkpoint). A durable op is applied to the model
// only after its commit is on disk, so a failed write leaves the run exactly as it was.
import type { Engine } from './engine';
import { RunNotOwnedError, StoreWriteError } from '../api/errors';
import { errCode } from '../disk/fsLayer';
import type { RunModel } from './runModel';
import type { CommitOp } from './storedSchema';

interface Pending {
  op: CommitOp;
  durable: boolean;
  resolve?: () => void;
  reject?: (err: Error) => void;
}

export interface CommitHooks {
  /** A durable op reached disk and was applied to the model. */
  applied(op: CommitOp): void;
  /** A commit reached disk (the run's durable commit count grew by one); its callers are told after this settles. */
  committed(): Promise<void> | void;
  writeError(err: Error): void;
}

export class CommitQueue {
  private queue: Pending[] = [];
  private inflight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A write-behind commit failed and nobody was told yet: the run's next write rejects. */
  failed: Error | null = null;
  private metaWritten: boolean;

  constructor(
    private readonly engine: Engine,
    private readonly model: RunModel,
    private readonly hooks: CommitHooks,
    private readonly deferMs: number,
    hasCommits: boolean,
  ) {
    this.metaWritten = hasCommits;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Queue an op the caller already applied to the model; it becomes durable within deferMs. */
  defer(op: CommitOp): void {
    this.queue.push({ op, durable: false });
    if (this.timer || this.failed) return; // after a failure, retry waits for the next write or flush
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick().catch(() => undefined); // reported through hooks.writeError and `failed`
    }, this.deferMs);
    this.timer.unref();
  }

  /** Resolves once `ops` (and everything queued before them) are on disk and applied, in one commit. */
  durable(ops: readonly CommitOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      ops.forEach((op, i) =>
        this.queue.push({ op, durable: true, resolve: i === ops.length - 1 ? resolve : undefined, reject }),
      );
      this.kick().catch(() => undefined); // the ops' own promise carries the error
    });
  }

  /** Makes everything queued durable; rejects with the write error. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.inflight) await this.inflight;
      else if (this.queue.length === 0) return;
      else await this.kick();
    }
  }

  /** Drops the queue (run deleted or lease gone); queued durable ops reject. */
  discard(reason: Error): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const p of this.queue.splice(0)) p.reject?.(reason);
  }

  private kick(): Promise<void> {
    this.inflight ??= this.loop().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async loop(): Promise<void> {
    while (this.queue.length > 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      const batch = this.queue.splice(0);
      try {
        await this.engine.writeCommit(
          this.model.meta.run_id,
          batch.map((p) => p.op),
          this.metaWritten ? undefined : this.model.meta,
        );
      } catch (err) {
        throw this.fail(batch, err);
      }
      this.metaWritten = true;
      this.failed = null; // anything that had failed before was in this batch
      for (const p of batch) {
        if (!p.durable) continue;
        this.model.apply([p.op]);
        this.hooks.applied(p.op);
      }
      await this.hooks.committed(); // after applying: what it records (index, witness) is the run after the commit
      for (const p of batch) if (p.durable) p.resolve?.();
    }
  }

  /** Deferred ops go back to the front (they were never acknowledged as durable); durable ones reject. */
  private fail(batch: Pending[], cause: unknown): Error {
    const err = toWriteError(this.model.meta.run_id, cause);
    const rejected = [...batch, ...this.queue].filter((p) => p.durable);
    this.queue = [...batch, ...this.queue].filter((p) => !p.durable);
    for (const p of rejected) p.reject?.(err);
    if (rejected.length === 0) this.failed = err;
    this.hooks.writeError(err);
    return err;
  }
}

export function toWriteError(runId: string | null, cause: unknown): Error {
  if (cause instanceof StoreWriteError || cause instanceof RunNotOwnedError) return cause;
  const code = errCode(cause);
  const what = runId ? `run ${runId}` : 'the store';
  return new StoreWriteError(
    `Could not write ${what} to disk (${code ?? 'error'}: ${(cause as Error)?.message ?? String(cause)}). Nothing acknowledged was lost; the run should pause until the disk is writable again.`,
    runId,
    code,
    { cause },
  );
}
