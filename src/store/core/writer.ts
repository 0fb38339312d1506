// The writes of the store: checkpoints, the approval and effect journal (rules in journal.ts), the
// inbox, restores, blobs and compaction — and the rule every write follows: owned, one at a time,
// refused once after an unreported write-behind failure. A run this store owns has a commit queue
// (commitQueue.ts) that decides which ops ride on which durable barrier.
import { endToKeep } from './end';
import { sha256 } from '../../common/hash';
import { copyJson } from './copy';
import type { EngineLock } from './engine';
import { InvalidInputError, RunNotOwnedError } from '../api/errors';
import * as J from './journal';
import { Lease, notOwned, type RunHandle } from './runHandle';
import { CommitQueue, toWriteError } from './commitQueue';
import { NeedsWholeRunError, omittable } from './runModel';
import { Compactor } from './compaction';
import {
  RunState,
  type ApprovalDecision,
  type Approval,
  type CheckpointRecord,
  type Effect,
  type EffectProcess,
  type InboxMessage,
  type RestoreRecord,
  type RunSummary,
} from '../api/schema';
import type { CommitOp, TailWitness } from './storedSchema';
import type * as T from '../api/types';
import type { StoreContext } from './context';
import { checkBlobHash, checkRunId, isDurableAppend, parseInput, prepareAppend } from './validate';

/**
 * The backstop of deferred checkpoints: written on their own after this long without a barrier of
 * their run. The runner makes at least one barrier per step, so in a run this never fires between
 * steps; it bounds how far another window (or a crash) can lag behind a caller that makes none.
 */
export const DEFAULT_DEFER_MS = 5_000;

export class StoreWriter {
  private readonly deferMs: number;
  private readonly compactor: Compactor;

  constructor(
    private readonly c: StoreContext,
    opts: { deferMs?: number; compactAfterCommits?: number },
  ) {
    this.deferMs = opts.deferMs ?? DEFAULT_DEFER_MS;
    this.compactor = new Compactor(c, opts.compactAfterCommits ?? 64);
  }

  /** Makes `h` owned by this store: a lease over `lock`, and a commit queue for its writes. */
  own(h: RunHandle, lock: EngineLock, owner: T.OwnerInfo): Lease {
    const { engine, index, events, loader } = this.c;
    const runId = h.model.meta.run_id;
    /** The witness committed() writes, built while the commit's barrier was in flight (prepare). */
    let ahead: { revision: number; witness: TailWitness } | null = null;
    h.writer = new CommitQueue(
      engine,
      h.model,
      {
        applied: (op) => this.afterDurable(h, op),
        prepare: (synced) => {
          if (!synced) return;
          try {
            const witness = this.witnessOf(h, h.durableCommits + 1);
            ahead = { revision: h.model.revision, witness };
            engine.prepareWitness?.(runId, witness);
          } catch {
            ahead = null; // (built again after the commit, as without it)
          }
        },
        committed: (synced, prepared) => {
          h.durableCommits++;
          // Built ahead for this very commit from the same model (nothing applied since), or now.
          const ready = prepared && ahead?.revision === h.model.revision ? ahead : null;
          ahead = null;
          index.follow(h.model, runId, h.durableCommits);
          // The witness never counts a commit that is not durable yet (a synced one makes all before it
          // durable), and a commit is acknowledged once its witness is written: a lost tail after an
          // acknowledged write is always seen.
          const witnessed = synced ? engine.writeWitness(runId, ready?.witness ?? this.witnessOf(h)) : undefined;
          if (synced) this.pointIfDue(h);
          return witnessed;
        },
        synced: () => engine.writeWitness(runId, this.witnessOf(h)),
        writeError: (error) => events.emit({ kind: 'write-error', run_id: runId, error }),
      },
      this.deferMs,
      h.durableCommits > 0,
    );
    h.lease = new Lease(runId, { ...owner }, lock, () =>
      h.serial(async () => {
        // A lease that was taken over can write nothing more: what it queued dies with it (never durable).
        if (lock.lost) h.writer!.discard(new RunNotOwnedError(runId));
        else {
          await h.writer!.flush();
          await this.settleForClose(h);
        }
      }),
    );
    loader.runs.set(runId, h);
    return h.lease;
  }

  /** What the run holds now, as its tail witness records it (disk/witness.ts), with `commits` durable. */
  witnessOf(h: RunHandle, commits = h.durableCommits): TailWitness {
    const m = h.model;
    return {
      commits,
      seq: m.lastSeq,
      step: m.lastRecord?.step ?? 0,
      state: m.state,
      intents: m.effectCount,
      results: m.results,
      ms: this.c.now(),
    };
  }

  async setRunState(runId: string, state: RunState, detail: string | null = null): Promise<RunSummary> {
    const s = parseInput(RunState, state, 'state');
    if (detail !== null && typeof detail !== 'string')
      throw new InvalidInputError('state detail must be a string or null');
    return this.write(runId, async (h) => {
      await h.writer!.durable([{ op: 'state', state: s, detail, ms: this.c.now() }]);
      return h.model.summary();
    });
  }

  // ── checkpoints ───────────────────────────────────────────────────────────────────────────
  async append(runId: string, input: T.AppendInput, opts: T.WriteOptions = {}): Promise<CheckpointRecord> {
    const later = laterBarrier(opts);
    return this.write(runId, async (h) => {
      if (typeof input !== 'object' || input === null) throw new InvalidInputError('append input must be an object');
      const now = this.c.now();
      const op = prepareAppend(h.model, input, now);
      // Delivered messages and the checkpoint holding them: one commit, so neither exists without the other.
      const delivered = input.deliver === undefined ? [] : J.inboxDelivered(h.model, input.deliver, op.record, now);
      const durable = isDurableAppend(input) || delivered.length > 0;
      if (durable && !later) await h.writer!.durable([op, ...delivered]);
      else this.queue(h, [op, ...delivered], durable);
      return copyJson(op.record);
    });
  }

  /** When the run's background work (a compaction, room for the log, a resume point) is done; writes nothing of its own. */
  async whenIdle(runId: string): Promise<void> {
    const h = this.c.loader.runs.get(runId);
    await h?.upkeep;
    await h?.compaction;
    await h?.writer?.idle();
    await h?.pointWrite;
  }

  /**
   * A resume point (disk/resumePoint.ts) after the commit just made, when the engine says one is due
   * and the model is exactly what is on disk (nothing queued meanwhile): taken now, between two commits — the parts are references to stored items, which never
   * change — and written once the caller has gone on. Never fails the caller: a point not written
   * only means the next resume reads the run whole.
   */
  private pointIfDue(h: RunHandle): void {
    const { engine } = this.c;
    const runId = h.model.meta.run_id;
    // (not after its history was found damaged: its next load reads it whole and judges that)
    if (h.pointWrite || h.wholeFailed || (h.writer?.queued ?? 0) > 0 || !engine.resumePointDue?.(runId)) return;
    let parts;
    try {
      parts = h.model.pointParts(omittable(h.model));
    } catch {
      return; // (a record this model left on disk: the next point, after the run is read whole)
    }
    if (!parts) return;
    const at = engine.markResumePoint?.(runId);
    if (at === undefined) return;
    h.pointWrite = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => engine.writeResumePoint!(runId, at, parts))
      .catch(() => undefined)
      .finally(() => {
        h.pointWrite = null;
      });
  }

  /** One barrier for what the run was handed with durability 'next-barrier' (nothing waiting: none). */
  async makeDurable(runId: string, opts: { toolsNext?: boolean } = {}): Promise<void> {
    await this.write(runId, async (h) => {
      await h.writer!.settle();
      // The runner is about to wait for the model: a good moment to compact, off the caller's clock.
      // Not before tool calls: their writes would wait for it.
      if (!opts.toolsNext) this.upkeepSoon(h);
    });
  }

  /**
   * Starts the run's upkeep (a compaction when due, room for the log) once the caller has gone on:
   * begun here, its first synchronous part (rebuilding and encoding the whole run, for a compaction)
   * ran in the microtasks before the caller's await returned, delaying the request it was about to
   * send. On the next turn of the event loop the request is on its way and the model is answering.
   * Nothing is scheduled when neither is due (most barriers): a scheduled turn costs the caller too.
   */
  private upkeepSoon(h: RunHandle): void {
    if (h.upkeep || !(this.compactor.dueInBackground(h) || this.c.engine.needsRoom?.(h.model.meta.run_id))) return;
    h.upkeep = new Promise<void>((resolve) =>
      setImmediate(() => {
        h.upkeep = null;
        if (h.owned) {
          this.compactor.inBackground(h);
          this.reserveInBackground(h);
        }
        resolve();
      }),
    );
  }

  /**
   * Room ahead of the log's next appends (DiskEngine.reserve: zeros written and synced past the
   * segment's end), so the barriers of the next steps write their data alone. Between commits, as a
   * compaction is, and after one this barrier started (its fresh segment has no room yet: early in a
   * run that is every few steps). A failure is not the run's: the appends then grow the file themselves.
   */
  private reserveInBackground(h: RunHandle): void {
    const runId = h.model.meta.run_id;
    const engine = this.c.engine;
    if (!engine.reserve || (!h.compacting && !engine.needsRoom?.(runId))) return;
    // (after a compaction under way: its fresh segment is the one that needs room)
    const reserve = () => (h.owned ? h.writer!.beside(() => engine.reserve!(runId)) : undefined);
    const run = h.compaction ? h.compaction.then(reserve) : reserve();
    run?.catch(() => undefined);
  }

  /** Applies ops at once and queues them for the next barrier (`owed`: a caller was promised that barrier). */
  private queue(h: RunHandle, ops: CommitOp[], owed: boolean): void {
    h.model.apply(ops);
    for (const op of ops) {
      h.writer!.defer(op, owed);
      this.afterDurable(h, op);
    }
    // The index is saved soon only when what a listing shows changed (state, approvals, title): IndexCache.follow.
    this.c.index.follow(h.model, h.model.meta.run_id, h.durableCommits);
  }

  // ── approvals and effects (rules in journal.ts) ───────────────────────────────────────────
  requestApproval(runId: string, input: T.NewApproval): Promise<Approval> {
    return this.journal(runId, (h) => J.approvalRequest(h.model, input, this.c.now()));
  }

  decideApproval(runId: string, toolCallId: string, decision: Omit<ApprovalDecision, 'decided_ms'>): Promise<Approval> {
    return this.journal(runId, (h) => J.approvalDecision(h.model, toolCallId, decision, this.c.now()));
  }

  /** `next-barrier`: an intent written ahead of its batch; the caller makes the barrier before any call runs. */
  recordIntent(runId: string, input: T.NewEffectIntent, opts: T.WriteOptions = {}): Promise<Effect> {
    return this.journal(runId, (h) => J.effectIntent(h.model, input, this.c.now()), durability(opts));
  }

  /** Rides on the next barrier: lost in a crash, the intent stays and resume asks (never runs it silently). */
  withdrawIntent(runId: string, toolCallId: string): Promise<Effect> {
    return this.journal(runId, (h) => J.effectWithdrawn(h.model, toolCallId, this.c.now()), 'next-barrier');
  }

  /** Written without a barrier: a process record matters only while the process may still run, which a power loss rules out. */
  recordProcess(runId: string, toolCallId: string, process: EffectProcess): Promise<Effect> {
    return this.write(runId, async (h) => {
      const out = J.effectProcess(h.model, toolCallId, process);
      if (out.op) await h.writer!.written([out.op]);
      return copyJson(out.value);
    });
  }

  recordResult(
    runId: string,
    toolCallId: string,
    input: T.NewEffectResult,
    opts: T.WriteOptions = {},
  ): Promise<Effect> {
    return this.journal(runId, (h) => J.effectResult(h.model, toolCallId, input, this.c.now()), durability(opts, true));
  }

  recordRetry(runId: string, toolCallId: string, input: T.NewEffectRetry): Promise<Effect> {
    return this.journal(runId, (h) => J.effectRetry(h.model, toolCallId, input, this.c.now()));
  }

  postMessage(runId: string, message: T.NewInboxMessage): Promise<InboxMessage> {
    return this.journal(runId, (h) => J.inboxPost(h.model, message, this.c.now()));
  }

  /** Durable; allowed on a finished run (an audit record beside it, not a change of its history). */
  recordRestore(runId: string, input: T.NewRestore): Promise<RestoreRecord> {
    return this.journal(runId, (h) => J.restoreRecord(h.model, input, this.c.now()));
  }

  /** Validates (before taking the run's turn), then writes the op durably — or returns what is already there. */
  private async journal<V extends Approval | Effect | InboxMessage | RestoreRecord>(
    runId: string,
    decide: (h: RunHandle) => J.Outcome<V>,
    when: Durability = 'now',
  ): Promise<V> {
    return this.write(runId, async (h) => {
      const out = decide(h);
      if (out.op && when === 'next-barrier') this.queue(h, [out.op], true);
      else if (out.op && when === 'written') await h.writer!.written([out.op], true);
      else if (out.op) await h.writer!.durable([out.op]);
      return copyJson(out.value);
    });
  }

  // ── blobs ─────────────────────────────────────────────────────────────────────────────────
  async putBlob(runId: string, content: string | Uint8Array, known?: string): Promise<string> {
    await this.c.gate.opened();
    this.ownedHandle(runId);
    if (typeof content !== 'string' && !(content instanceof Uint8Array))
      throw new InvalidInputError('blob content must be a string or UTF-8 bytes');
    const hash = known !== undefined && typeof content !== 'string' ? checkBlobHash(known) : sha256(content);
    try {
      await this.c.engine.putBlob(runId, hash, content);
    } catch (err) {
      throw toWriteError(runId, err);
    }
    return hash;
  }

  /** Writes a blob under its known hash (import, fork; the hash was verified by the caller). */
  async putBlobAs(runId: string, hash: string, content: string): Promise<void> {
    this.ownedHandle(runId);
    await this.c.engine.putBlob(runId, checkBlobHash(hash), content).catch((err: unknown) => {
      throw toWriteError(runId, err);
    });
  }

  // ── retention ─────────────────────────────────────────────────────────────────────────────
  async compact(runId: string): Promise<void> {
    await this.write(runId, async (h) => {
      await h.compaction;
      await h.writer!.flush();
      await this.c.loader.fillWhole(h);
      try {
        await this.c.engine.compact(runId, h.model.rebuildOps(), h.model.meta, endToKeep(h.model, this.c.keepEndFrom));
      } catch (err) {
        throw toWriteError(runId, err);
      }
    });
  }

  /**
   * When the run is let go, or the store closes (inside the run's turn, its queue flushed): a
   * compaction when due (compaction.ts), then a resume point when one is due — a compaction replaced
   * the segment the last one was in — written before the run goes, for its next resume to start from.
   */
  async settleForClose(h: RunHandle): Promise<void> {
    await this.compactor.ifDue(h);
    await h.pointWrite;
    this.pointIfDue(h);
    await h.pointWrite;
  }

  /** Makes every run's queued writes durable. */
  async flushAll(): Promise<void> {
    await Promise.all([...this.c.loader.runs.values()].filter((h) => h.writer).map((h) => h.writer!.flush()));
  }

  /** Before a side effect starts: the run is this store's at this moment (engine.ts, assertOwner). */
  async assertOwner(runId: string): Promise<void> {
    await this.write(runId, async (h) => {
      await this.c.engine.assertOwner(runId).catch((err: unknown) => {
        throw toWriteError(runId, err);
      });
      if (!h.owned) throw notOwned(runId);
    });
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────
  ownedHandle(runId: string): RunHandle {
    const h = this.c.loader.runs.get(runId);
    // (a run held here has a valid id: anything else is checked, and refused as invalid if it is not)
    if (h?.owned) return h;
    checkRunId(runId);
    throw notOwned(runId);
  }

  /**
   * Every write: owned, one at a time, and refused once after an unreported write-behind failure. A
   * write that needs what a run resumed from its resume point left on disk (NeedsWholeRunError, thrown
   * before anything changed) is made again once the run is read whole.
   */
  private async write<R>(runId: string, fn: (h: RunHandle) => Promise<R>): Promise<R> {
    if (!this.c.gate.isOpen) await this.c.gate.opened();
    const h = this.ownedHandle(runId);
    return h.serial(async () => {
      if (!h.owned) throw notOwned(runId);
      const failed = h.writer!.failed;
      if (failed) await this.retryAfterFailure(h, failed);
      try {
        return await fn(h);
      } catch (err) {
        if (!(err instanceof NeedsWholeRunError) || !h.model.partial) throw err;
      }
      await this.c.loader.fillWhole(h);
      return fn(h);
    });
  }

  private async retryAfterFailure(h: RunHandle, failed: Error): Promise<never> {
    const runId = h.model.meta.run_id;
    try {
      await h.writer!.flush();
    } catch (err) {
      throw toWriteError(runId, err);
    }
    throw toWriteError(
      runId,
      Object.assign(
        new Error(
          `an earlier write-behind failed (${failed.message}); the retry succeeded, so the queued checkpoints are now durable, but this write was not applied — repeat it`,
        ),
        { code: (failed as { code?: string }).code },
      ),
    );
  }

  private afterDurable(h: RunHandle, op: CommitOp): void {
    const { index, events } = this.c;
    // Nobody listens: nothing to build (the index is set once per commit, or per batch queued).
    if (!events.listening) return;
    const runId = h.model.meta.run_id;
    // A listener may list runs: the index shows the run as of this op first.
    index.follow(h.model, runId, h.durableCommits);
    if (op.op === 'record') events.emit({ kind: 'checkpoint', run_id: runId, record: copyJson(op.record) });
    else if (op.op === 'approval') events.emit({ kind: 'approval', run_id: runId, approval: copyJson(op.approval) });
    else if (op.op === 'effect') events.emit({ kind: 'effect', run_id: runId, effect: copyJson(op.effect) });
    else if (op.op === 'inbox') events.emit({ kind: 'inbox', run_id: runId, message: copyJson(op.message) });
    else if (op.op === 'restore') events.emit({ kind: 'restore', run_id: runId, restore: copyJson(op.restore) });
    if (op.op !== 'record' || op.record.phase === 'run_terminal') events.emit({ kind: 'run-updated', run_id: runId });
  }
}

type Durability = NonNullable<T.WriteOptions['durability']>;

function laterBarrier(opts: T.WriteOptions | undefined): boolean {
  return durability(opts) === 'next-barrier';
}

/** `written` only where it is offered (a result). */
function durability(opts: T.WriteOptions | undefined, written = false): Durability {
  const d = opts?.durability ?? 'now';
  if (d === 'now' || d === 'next-barrier' || (written && d === 'written')) return d;
  throw new InvalidInputError(`durability must be 'now'${written ? ", 'written'" : ''} or 'next-barrier'`);
}
