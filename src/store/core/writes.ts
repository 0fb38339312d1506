// The write half of the store core: ownership of a run (lease + writer), appends, the approval and
// effect journal, blobs, compaction, and the rule every write follows (owned, one at a time,
// refused once after an unreported write-behind failure). Run lifecycle ops are in store.ts.
import { sha256 } from '../../common/hash';
import { copyJson } from './copy';
import { StoreReads, type CoreOptions } from './reads';
import type { Engine, EngineLock } from './engine';
import { InvalidInputError, RunNotOwnedError } from '../api/errors';
import * as J from './journal';
import { Lease, notOwned, type RunHandle } from './runHandle';
import { RunWriter, toWriteError } from './runWriter';
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
import { checkBlobHash, checkRunId, isDurableAppend, parseInput, prepareAppend } from './validate';

export abstract class StoreWrites extends StoreReads {
  readonly deferMs: number;
  private readonly compactAfter: number;

  constructor(engine: Engine, opts: CoreOptions) {
    super(engine, opts);
    this.deferMs = opts.deferMs ?? 200;
    this.compactAfter = opts.compactAfterCommits ?? 64;
  }

  async setRunState(runId: string, state: RunState, detail: string | null = null): Promise<RunSummary> {
    const s = parseInput(RunState, state, 'state');
    if (detail !== null && typeof detail !== 'string')
      throw new InvalidInputError('state detail must be a string or null');
    return this.write(runId, async (h) => {
      await h.writer!.durable([{ op: 'state', state: s, detail, ms: this.now() }]);
      return h.model.summary();
    });
  }

  own(h: RunHandle, lock: EngineLock, owner: T.OwnerInfo): Lease {
    const runId = h.model.meta.run_id;
    h.writer = new RunWriter(
      this.engine,
      h.model,
      {
        applied: (op) => this.afterDurable(h, op),
        committed: () => {
          h.durableCommits++;
          this.index.set(h.model.summary(), h.durableCommits, false);
          return this.engine.writeWitness(runId, this.witnessOf(h));
        },
        writeError: (error) => this.emit({ kind: 'write-error', run_id: runId, error }),
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
          await this.compactIfDue(h);
        }
      }),
    );
    this.runs.set(runId, h);
    return h.lease;
  }

  /** What the run holds now, as its tail witness records it (disk/witness.ts). */
  protected witnessOf(h: RunHandle): TailWitness {
    const m = h.model;
    let results = 0;
    for (const e of m.effects.values()) if (e.result) results++;
    return {
      commits: h.durableCommits,
      seq: m.lastSeq,
      step: m.records[m.lastSeq - 1]?.step ?? 0,
      state: m.state,
      intents: m.effects.size,
      results,
      ms: this.now(),
    };
  }

  // ── checkpoints ───────────────────────────────────────────────────────────────────────────
  async append(runId: string, input: T.AppendInput): Promise<CheckpointRecord> {
    return this.write(runId, async (h) => {
      if (typeof input !== 'object' || input === null) throw new InvalidInputError('append input must be an object');
      const op = prepareAppend(h.model, input, this.now());
      // Delivered messages and the checkpoint holding them: one commit, so neither exists without the other.
      const delivered =
        input.deliver === undefined ? [] : J.inboxDelivered(h.model, input.deliver, op.record, this.now());
      if (isDurableAppend(input) || delivered.length > 0) await h.writer!.durable([op, ...delivered]);
      else {
        h.model.apply([op]);
        h.writer!.defer(op);
        this.afterDurable(h, op, false);
      }
      return copyJson(op.record);
    });
  }

  // ── approvals and effects (rules in journal.ts) ───────────────────────────────────────────
  requestApproval(runId: string, input: T.NewApproval): Promise<Approval> {
    return this.journal(runId, (h) => J.approvalRequest(h.model, input, this.now()));
  }

  decideApproval(runId: string, toolCallId: string, decision: Omit<ApprovalDecision, 'decided_ms'>): Promise<Approval> {
    return this.journal(runId, (h) => J.approvalDecision(h.model, toolCallId, decision, this.now()));
  }

  recordIntent(runId: string, input: T.NewEffectIntent): Promise<Effect> {
    return this.journal(runId, (h) => J.effectIntent(h.model, input, this.now()));
  }

  recordProcess(runId: string, toolCallId: string, process: EffectProcess): Promise<Effect> {
    return this.journal(runId, (h) => J.effectProcess(h.model, toolCallId, process));
  }

  recordResult(runId: string, toolCallId: string, input: T.NewEffectResult): Promise<Effect> {
    return this.journal(runId, (h) => J.effectResult(h.model, toolCallId, input, this.now()));
  }

  postMessage(runId: string, message: T.NewInboxMessage): Promise<InboxMessage> {
    return this.journal(runId, (h) => J.inboxPost(h.model, message, this.now()));
  }

  /** Durable; allowed on a finished run (an audit record beside it, not a change of its history). */
  recordRestore(runId: string, input: T.NewRestore): Promise<RestoreRecord> {
    return this.journal(runId, (h) => J.restoreRecord(h.model, input, this.now()));
  }

  /** Validates (before taking the run's turn), then writes the op durably — or returns what is already there. */
  private async journal<V extends Approval | Effect | InboxMessage | RestoreRecord>(
    runId: string,
    decide: (h: RunHandle) => J.Outcome<V>,
  ): Promise<V> {
    return this.write(runId, async (h) => {
      const out = decide(h);
      if (out.op) await h.writer!.durable([out.op]);
      return copyJson(out.value);
    });
  }

  // ── blobs ─────────────────────────────────────────────────────────────────────────────────
  async putBlob(runId: string, content: string): Promise<string> {
    await this.opened();
    this.ownedHandle(runId);
    if (typeof content !== 'string') throw new InvalidInputError('blob content must be a string');
    const hash = sha256(content);
    try {
      await this.engine.putBlob(runId, hash, content);
    } catch (err) {
      throw toWriteError(runId, err);
    }
    return hash;
  }

  async getBlob(runId: string, hash: string): Promise<string> {
    await this.opened();
    checkRunId(runId);
    checkBlobHash(hash);
    return this.engine.getBlob(runId, hash, await this.canRepair(runId));
  }

  // ── retention ─────────────────────────────────────────────────────────────────────────────
  async compact(runId: string): Promise<void> {
    await this.write(runId, async (h) => {
      await h.writer!.flush();
      try {
        await this.engine.compact(runId, h.model.rebuildOps(), h.model.meta);
      } catch (err) {
        throw toWriteError(runId, err);
      }
    });
  }

  /**
   * When a run is let go, its log is compacted once it has grown at least as much as the part
   * compacted before (and by ≥ 64 commits): each byte is rewritten O(log n) times in all, never on a
   * step's write path, and the next resume reads a few files instead of thousands. A failure here
   * is reported, not thrown: the log is intact either way.
   */
  protected async compactIfDue(h: RunHandle): Promise<void> {
    const runId = h.model.meta.run_id;
    const shape = this.engine.logShape(runId);
    if (shape.singles < this.compactAfter || shape.singles < shape.covered) return;
    try {
      await this.engine.compact(runId, h.model.rebuildOps(), h.model.meta);
    } catch (err) {
      this.emit({ kind: 'write-error', run_id: runId, error: toWriteError(runId, err) });
    }
  }

  async putBlobAs(runId: string, hash: string, content: string): Promise<void> {
    this.ownedHandle(runId);
    await this.engine.putBlob(runId, checkBlobHash(hash), content).catch((err: unknown) => {
      throw toWriteError(runId, err);
    });
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────
  protected ownedHandle(runId: string): RunHandle {
    checkRunId(runId);
    const h = this.runs.get(runId);
    if (!h?.owned) throw notOwned(runId);
    return h;
  }

  /** Every write: owned, one at a time, and refused once after an unreported write-behind failure. */
  protected async write<R>(runId: string, fn: (h: RunHandle) => Promise<R>): Promise<R> {
    await this.opened();
    const h = this.ownedHandle(runId);
    return h.serial(async () => {
      if (!h.owned) throw notOwned(runId);
      const failed = h.writer!.failed;
      if (failed) await this.retryAfterFailure(h, failed);
      return fn(h);
    });
  }

  protected async retryAfterFailure(h: RunHandle, failed: Error): Promise<never> {
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

  protected afterDurable(h: RunHandle, op: CommitOp, durable = true): void {
    const runId = h.model.meta.run_id;
    const structural = op.op !== 'record' || op.record.phase === 'run_terminal';
    this.index.set(h.model.summary(), h.durableCommits, structural && durable);
    if (op.op === 'record') this.emit({ kind: 'checkpoint', run_id: runId, record: copyJson(op.record) });
    else if (op.op === 'approval') this.emit({ kind: 'approval', run_id: runId, approval: copyJson(op.approval) });
    else if (op.op === 'effect') this.emit({ kind: 'effect', run_id: runId, effect: copyJson(op.effect) });
    else if (op.op === 'inbox') this.emit({ kind: 'inbox', run_id: runId, message: copyJson(op.message) });
    else if (op.op === 'restore') this.emit({ kind: 'restore', run_id: runId, restore: copyJson(op.restore) });
    if (op.op !== 'record' || op.record.phase === 'run_terminal') this.emit({ kind: 'run-updated', run_id: runId });
  }
}
