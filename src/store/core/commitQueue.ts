// One run's write queue: which ops ride on which durable barrier (docs/design.md, "Durable
// barriers"). Deferred ops (progress checkpoints, and what a caller handed over with durability
// 'next-barrier') are already applied to the model and wait here; a durable op joins them and they
// all go out in one commit — one appended, fdatasync'd frame. A durable op is applied to the model
// only after its commit is on disk, so a failed write leaves the run exactly as it was.
import type { Engine } from './engine';
import { RunNotOwnedError, StoreWriteError } from '../api/errors';
import { errCode } from '../disk/fsLayer';
import type { RunModel } from './runModel';
import type { CommitOp } from './storedSchema';

interface Pending {
  op: CommitOp;
  /** Applied to the model only once its commit is written (else: already applied, waiting here). */
  durable: boolean;
  /** Handed over with durability 'next-barrier': its caller was promised the next barrier (settle()). */
  owed?: boolean;
  /** Durable only as far as a written, not yet synced commit is (written()). */
  unsynced?: boolean;
  resolve?: () => void;
  reject?: (err: Error) => void;
}

export interface CommitHooks {
  /** A durable op reached disk and was applied to the model. */
  applied(op: CommitOp): void;
  /**
   * A commit reached disk (the run's commit count grew by one; `synced`: it is a barrier); its
   * callers are told after this settles. `prepared`: prepare() ran for this very commit.
   */
  committed(synced: boolean, prepared: boolean): Promise<void> | void;
  /**
   * A commit of ops already applied to the model is on its way to disk: what committed() will
   * record can be built now, while the disk makes it durable (the caller's thread would only wait).
   */
  prepare?(synced: boolean): void;
  /** Every commit written so far was made durable without a commit of its own (syncCommits). */
  synced(): Promise<void> | void;
  writeError(err: Error): void;
}

export class CommitQueue {
  private queue: Pending[] = [];
  private inflight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** When the oldest op in the queue was queued (Date.now): the backstop counts from it. */
  private queuedSince = 0;
  /** The commit in flight carries an op handed over with durability 'next-barrier'. */
  private writingOwed = false;
  /**
   * A write-behind commit (written()) took ops handed over with durability 'next-barrier' along: they
   * are written, not yet durable, so the next settle() owes a barrier though nothing is queued.
   */
  private owedUnsynced = false;
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

  /**
   * Queue an op the caller already applied to the model: it rides on the next barrier, or is
   * written on its own after deferMs (a backstop: the runner makes a barrier every step).
   */
  defer(op: CommitOp, owed = false): void {
    if (this.queue.length === 0) this.queuedSince = Date.now();
    this.queue.push({ op, durable: false, owed });
    if (this.timer || this.failed) return; // after a failure, retry waits for the next write or flush
    this.arm(this.deferMs);
  }

  /**
   * The backstop timer: what is queued is written on its own once the oldest of it has waited
   * deferMs. A barrier does not disarm it (a setTimeout and a clearTimeout twice a step cost the
   * step more than the timer's rare turn): when it fires it looks at what waits, and sleeps again
   * for what is left of the wait, or ends when nothing does.
   */
  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.queue.length === 0 || this.failed) return; // (after a failure: the next write or flush retries)
      const left = this.queuedSince + this.deferMs - Date.now();
      if (left > 0) return this.arm(left);
      this.kick().catch(() => undefined); // reported through hooks.writeError and `failed`
    }, ms);
    this.timer.unref();
  }

  /** Resolves once `ops` (and everything queued before them) are on disk and applied, in one commit. */
  durable(ops: readonly CommitOp[]): Promise<void> {
    return this.push(ops, false);
  }

  /**
   * Resolves once `ops` are written (a crash of the process keeps them) and applied, without a
   * barrier of their own: the run's next barrier makes them durable. For what is worthless after a
   * power loss anyway (the process a command started). Ops queued before them go in the same commit;
   * if one was owed a barrier, the next settle() makes it (a sync of what was written, no commit).
   * `owed`: these ops too were promised the next barrier (a result written ahead of it).
   */
  written(ops: readonly CommitOp[], owed = false): Promise<void> {
    return this.push(ops, true, owed);
  }

  private push(ops: readonly CommitOp[], unsynced: boolean, owed = false): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) this.queuedSince = Date.now();
      ops.forEach((op, i) =>
        this.queue.push({
          op,
          durable: true,
          unsynced,
          owed,
          resolve: i === ops.length - 1 ? resolve : undefined,
          reject,
        }),
      );
      this.kick().catch(() => undefined); // the ops' own promise carries the error
    });
  }

  /** One barrier if an op handed over with durability 'next-barrier' waits; else nothing. */
  async settle(): Promise<void> {
    if (this.writingOwed || this.owedUnsynced || this.queue.some((p) => p.owed)) await this.flush();
  }

  /** Resolves when nothing is in flight (a commit, or a compaction: exclusive()); writes nothing. */
  async idle(): Promise<void> {
    while (this.inflight) await this.inflight.catch(() => undefined);
  }

  /** Makes everything queued durable (and what an owed op rode on unsynced); rejects with the write error. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.inflight) await this.inflight;
      else if (this.queue.length > 0) await this.kick();
      else if (this.owedUnsynced) await this.kickSync();
      else return;
    }
  }

  /** A barrier without a commit: what write-behind commits carried becomes durable. */
  private kickSync(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        await this.engine.syncCommits(this.model.meta.run_id);
      } catch (err) {
        const e = toWriteError(this.model.meta.run_id, err);
        this.hooks.writeError(e);
        throw e;
      }
      this.owedUnsynced = false;
      await this.hooks.synced();
    })().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /**
   * Runs `fn` with no commit in flight and nothing queued, so the model it reads is exactly what is
   * on disk (compaction while the run works). Meanwhile deferred ops queue as usual and durable ones
   * wait; both are written after it. Its failure is returned to the caller, never to the ops.
   */
  exclusive(fn: () => Promise<void>): Promise<void> {
    return (async () => {
      while (this.inflight) await this.inflight.catch(() => undefined);
      let result: Promise<void> | undefined;
      this.inflight = (async () => {
        while (this.queue.length > 0) await this.loop();
        result = fn(); // started synchronously once the queue drained: nothing is applied in between
        await result.catch(() => undefined);
        await this.loop();
      })().finally(() => {
        this.inflight = null;
      });
      await this.inflight.catch(() => undefined);
      if (!result) throw this.failed ?? new Error('a write failed before it could start');
      return result;
    })();
  }

  /**
   * Runs `fn` with no commit in flight (a commit handed over meanwhile waits for it), writing nothing
   * that is queued: deferred ops keep waiting for their barrier. For upkeep of the log that must not
   * overlap an append but must not cost the run a barrier either (DiskEngine.reserve). Its failure is
   * returned to the caller, never to the ops.
   */
  beside(fn: () => Promise<void>): Promise<void> {
    return (async () => {
      while (this.inflight) await this.inflight.catch(() => undefined);
      const result = fn();
      this.inflight = (async () => {
        await result.catch(() => undefined);
        // What came meanwhile: a durable op is written now (its callers wait, with what it carries);
        // deferred ones alone keep waiting, their backstop timer armed again if it fired meanwhile.
        if (this.queue.some((p) => p.durable)) await this.loop();
        else if (this.queue.length > 0 && !this.timer && !this.failed) this.arm(this.deferMs);
      })().finally(() => {
        this.inflight = null;
      });
      await this.inflight.catch(() => undefined);
      return result;
    })();
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
      const batch = this.queue.splice(0);
      this.writingOwed = batch.some((p) => p.owed);
      // A barrier unless every durable op only asked to be written (deferred ones then ride along unsynced).
      const sync = !batch.some((p) => p.unsynced) || batch.some((p) => p.durable && !p.unsynced);
      // Ops already applied (deferred ones): the model is now what it will be after the commit.
      const prepare = this.hooks.prepare && !batch.some((p) => p.durable) ? this.hooks.prepare : undefined;
      let prepared = false;
      try {
        await this.engine.writeCommit(
          this.model.meta.run_id,
          batch.map((p) => p.op),
          this.metaWritten ? undefined : this.model.meta,
          sync,
          prepare &&
            (() => {
              prepared = true;
              prepare(sync);
            }),
        );
      } catch (err) {
        throw this.fail(batch, err);
      } finally {
        this.writingOwed = false;
      }
      this.metaWritten = true;
      if (sync) this.owedUnsynced = false;
      else if (batch.some((p) => p.owed)) this.owedUnsynced = true;
      this.failed = null; // anything that had failed before was in this batch
      for (const p of batch) {
        if (!p.durable) continue;
        this.model.apply([p.op]);
        this.hooks.applied(p.op);
      }
      await this.hooks.committed(sync, prepared); // after applying: what it records (index, witness) is the run after the commit
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
