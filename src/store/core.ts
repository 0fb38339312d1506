// The store's semantics, shared by both backends (memory.ts, lowdbStore.ts): validation, seqs,
// durability classes, ownership checks, events, deep copies at the edge. An Engine underneath owns
// the bytes. Ops that build or ship whole runs (fork, export, import) are in portable.ts.
import crypto from 'node:crypto';
import { copyJson } from './copy';
import type { Engine, EngineLock } from './engine';
import { CheckpointNotFoundError, InvalidInputError, InvalidKeyError, RunLockedError, RunNotOwnedError, StoreClosedError, StoreConflictError } from './errors';
import { exportRun, forkRun, importRun, type PortableHost } from './portable';
import { RunHandle, Lease, notOwned } from './runHandle';
import { RunModel } from './runModel';
import { RunWriter, toWriteError } from './runWriter';
import { ApprovalDecision, RunState, type Approval, type CheckpointRecord, type Effect, type EffectResult, type RunMeta, type RunSummary } from './schema';
import type { CommitOp } from './storedSchema';
import type * as T from './types';
import { checkBlobHash, checkRunId, isDurableAppend, parseInput, prepareAppend } from './validate';
import { z } from 'zod';
import { StoreReads, type CoreOptions } from './coreReads';

export type { CoreOptions };

const NewRun = z.object({
  run_id: z.string().optional(),
  thread_id: z.string().optional(),
  title: z.string(),
  task: z.string(),
  agent_name: z.string(),
  model: z.string(),
  parent_run_id: z.string().nullable().optional(),
});
const NewApprovalInput = z.object({
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  category: z.enum(['read', 'write', 'command', 'subagent']),
  arguments: z.unknown(),
  input_hash: z.string(),
  uncertain: z.boolean(),
  reason: z.string(),
});
const NewIntent = z.object({
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  input_hash: z.string(),
  side_effecting: z.boolean(),
});
const ResultInput = z.object({ output: z.string(), output_hash: z.string(), is_error: z.boolean(), blob: z.string().nullable() });
const DecisionInput = ApprovalDecision.omit({ decided_ms: true });

export const newRunId = (now: number): string => `${now.toString(36)}-${crypto.randomBytes(5).toString('hex')}`;

export class StoreCore extends StoreReads implements T.CheckpointStore, PortableHost {
  readonly deferMs: number;
  private readonly compactAfter: number;

  constructor(engine: Engine, opts: CoreOptions = {}) {
    super(engine, opts);
    this.deferMs = opts.deferMs ?? 200;
    this.compactAfter = opts.compactAfterCommits ?? 64;
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────────
  async createRun(input: T.NewRunInput, owner: T.OwnerInfo): Promise<{ run: RunSummary; lease: T.RunLease }> {
    await this.opened();
    const i = parseInput(NewRun, input, 'new run');
    if (i.run_id !== undefined) checkRunId(i.run_id);
    if (i.parent_run_id != null) checkRunId(i.parent_run_id);
    const build = (runId: string) => ({
      meta: {
        run_id: runId,
        thread_id: i.thread_id ?? runId,
        title: i.title,
        task: i.task,
        agent_name: i.agent_name,
        model: i.model,
        created_ms: this.now(),
        forked_from: null,
        parent_run_id: i.parent_run_id ?? null,
      },
      ops: [],
    });
    const r = await this.adoptNewRun(build, i.run_id, owner, { keepLease: true, renameOnCollision: i.run_id === undefined });
    return { run: r.run, lease: r.lease! };
  }

  async setRunState(runId: string, state: RunState, detail: string | null = null): Promise<RunSummary> {
    const s = parseInput(RunState, state, 'state');
    if (detail !== null && typeof detail !== 'string') throw new InvalidInputError('state detail must be a string or null');
    return this.write(runId, async (h) => {
      await h.writer!.durable([{ op: 'state', state: s, detail, ms: this.now() }]);
      return h.model.summary();
    });
  }

  async deleteRun(runId: string): Promise<void> {
    await this.opened();
    checkRunId(runId);
    const mine = this.runs.get(runId);
    let lease = mine?.owned ? mine.lease : undefined;
    if (!lease) {
      if (!(await this.peek(runId)) && !this.index.get(runId)) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
      await this.acquire(runId, { owner_id: `delete-${crypto.randomUUID()}`, label: 'deleting', pid: process.pid, hostname: 'local' });
      lease = this.runs.get(runId)!.lease!;
    }
    const h = this.runs.get(runId)!;
    await h.serial(async () => {
      h.writer?.discard(new CheckpointNotFoundError(`Run ${runId} was deleted.`, runId));
      await this.engine.deleteRun(runId);
      await lease.forceRelease();
      this.runs.delete(runId);
      this.index.delete(runId);
    });
    this.emit({ kind: 'run-deleted', run_id: runId });
  }

  async pruneFinished(ttlMs: number): Promise<string[]> {
    await this.opened();
    if (!(ttlMs >= 0)) throw new InvalidInputError('ttlMs must be a non-negative number');
    const cutoff = this.now() - ttlMs;
    const deleted: string[] = [];
    for (const e of [...this.index.entries.values()]) {
      if (!['completed', 'failed'].includes(e.state) || e.updated_ms >= cutoff) continue;
      const exact = await this.getRun(e.run_id).catch(() => undefined);
      if (!exact || !['completed', 'failed'].includes(exact.state) || exact.updated_ms >= cutoff) continue;
      try {
        await this.deleteRun(e.run_id);
        deleted.push(e.run_id);
      } catch (err) {
        if (!(err instanceof RunLockedError)) throw err; // another window holds it: keep it
      }
    }
    return deleted;
  }

  // ── ownership ─────────────────────────────────────────────────────────────────────────────
  async acquire(runId: string, owner: T.OwnerInfo): Promise<T.RunLease> {
    await this.opened();
    checkRunId(runId);
    const held = this.runs.get(runId);
    if (held?.owned) throw new RunLockedError(runId, held.lease!.owner);
    const lock = await this.engine.lock(runId, owner);
    let h: RunHandle | undefined;
    try {
      this.runs.delete(runId); // the owner reads the run fresh from disk, repairing what is broken
      h = await this.load(runId, true);
      if (!h) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    } catch (err) {
      await lock.release().catch(() => undefined);
      throw err;
    }
    return this.own(h, lock, owner);
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

  // ── checkpoints ───────────────────────────────────────────────────────────────────────────
  async append(runId: string, input: T.AppendInput): Promise<CheckpointRecord> {
    return this.write(runId, async (h) => {
      if (typeof input !== 'object' || input === null) throw new InvalidInputError('append input must be an object');
      const op = prepareAppend(h.model, input, this.now());
      if (isDurableAppend(input)) await h.writer!.durable([op]);
      else {
        h.model.apply([op]);
        h.writer!.defer(op);
        this.afterDurable(h, op, false);
      }
      return copyJson(op.record);
    });
  }

  // ── approvals ─────────────────────────────────────────────────────────────────────────────
  async requestApproval(runId: string, input: T.NewApproval): Promise<Approval> {
    const a = parseInput(NewApprovalInput, input, 'approval');
    return this.write(runId, async (h) => {
      const prev = h.model.approvals.get(a.tool_call_id);
      if (prev && prev.decision === null && prev.input_hash === a.input_hash) return copyJson(prev); // re-shown after a reload
      if (prev && prev.decision === null) throw new StoreConflictError(`Run ${runId} already has a pending approval for ${a.tool_call_id} with other arguments.`, runId);
      const approval: Approval = { run_id: runId, ...a, requested_ms: this.now(), decision: null };
      await h.writer!.durable([{ op: 'approval', approval }]);
      return copyJson(approval);
    });
  }

  async decideApproval(runId: string, toolCallId: string, decision: Omit<ApprovalDecision, 'decided_ms'>): Promise<Approval> {
    const d = parseInput(DecisionInput, decision, 'decision');
    if (d.kind === 'approve_edited' && (d.arguments === undefined || d.input_hash === null)) {
      throw new InvalidInputError('approve_edited needs the edited arguments and their input_hash');
    }
    return this.write(runId, async (h) => {
      const prev = h.model.approvals.get(toolCallId);
      if (!prev) throw new StoreConflictError(`Run ${runId} has no approval request for tool call ${JSON.stringify(toolCallId)}.`, runId);
      if (prev.decision) throw new StoreConflictError(`The approval for ${toolCallId} in run ${runId} was already decided (${prev.decision.kind}).`, runId);
      const approval: Approval = { ...prev, decision: { ...d, decided_ms: this.now() } };
      await h.writer!.durable([{ op: 'approval', approval }]);
      return copyJson(approval);
    });
  }

  // ── effects ───────────────────────────────────────────────────────────────────────────────
  async recordIntent(runId: string, input: T.NewEffectIntent): Promise<Effect> {
    const i = parseInput(NewIntent, input, 'effect intent');
    return this.write(runId, async (h) => {
      const prev = h.model.effects.get(i.tool_call_id);
      if (prev?.result) throw new StoreConflictError(`Tool call ${i.tool_call_id} of run ${runId} already has a result; it must be replayed, not run again.`, runId);
      if (prev && prev.input_hash === i.input_hash) return copyJson(prev); // intent re-recorded after resume
      const effect: Effect = {
        run_id: runId,
        ...i,
        idempotency_key: `${runId}/${i.step}/${i.tool_call_id}`,
        intent_ms: this.now(),
        result: null,
      };
      await h.writer!.durable([{ op: 'effect', effect }]);
      return copyJson(effect);
    });
  }

  async recordResult(runId: string, toolCallId: string, input: Omit<EffectResult, 'finished_ms'>): Promise<Effect> {
    const r = parseInput(ResultInput, input, 'effect result');
    return this.write(runId, async (h) => {
      const prev = h.model.effects.get(toolCallId);
      if (!prev) throw new StoreConflictError(`Tool call ${JSON.stringify(toolCallId)} of run ${runId} has no intent; record the intent before running it.`, runId);
      if (prev.result) {
        if (prev.result.output_hash === r.output_hash) return copyJson(prev);
        throw new StoreConflictError(`Tool call ${toolCallId} of run ${runId} already has a different result.`, runId);
      }
      const effect: Effect = { ...prev, result: { ...r, finished_ms: this.now() } };
      await h.writer!.durable([{ op: 'effect', effect }]);
      return copyJson(effect);
    });
  }

  // ── blobs ─────────────────────────────────────────────────────────────────────────────────
  async putBlob(runId: string, content: string): Promise<string> {
    await this.opened();
    this.ownedHandle(runId);
    if (typeof content !== 'string') throw new InvalidInputError('blob content must be a string');
    const hash = crypto.createHash('sha256').update(content, 'utf8').digest('hex');
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
  private async compactIfDue(h: RunHandle): Promise<void> {
    const runId = h.model.meta.run_id;
    const shape = this.engine.logShape(runId);
    if (shape.singles < this.compactAfter || shape.singles < shape.covered) return;
    try {
      await this.engine.compact(runId, h.model.rebuildOps(), h.model.meta);
    } catch (err) {
      this.emit({ kind: 'write-error', run_id: runId, error: toWriteError(runId, err) });
    }
  }

  // ── fork / export / import ────────────────────────────────────────────────────────────────
  async fork(runId: string, seq: number, owner: T.OwnerInfo, opts?: { title?: string }): Promise<{ run: RunSummary; lease: T.RunLease }> {
    await this.opened();
    return forkRun(this, checkRunId(runId), seq, owner, opts);
  }

  async exportRun(runId: string): Promise<unknown> {
    await this.opened();
    return exportRun(this, checkRunId(runId));
  }

  async importRun(data: unknown, owner: T.OwnerInfo): Promise<RunSummary> {
    await this.opened();
    return importRun(this, data, owner);
  }

  /** Creates a run from a meta and ops (one durable commit). Used by create, fork and import. */
  async adoptNewRun(
    build: (runId: string) => { meta: RunMeta; ops: CommitOp[] },
    preferredId: string | undefined,
    owner: T.OwnerInfo,
    opts: { keepLease: boolean; renameOnCollision: boolean },
  ): Promise<{ run: RunSummary; lease?: Lease }> {
    let runId = preferredId ?? newRunId(this.now());
    for (let attempt = 0; ; attempt++) {
      const { meta, ops } = build(runId);
      const model = new RunModel(meta);
      model.check(ops, true);
      const lock = await this.engine.createRun(meta, owner).catch((err: unknown) => {
        throw toWriteError(runId, err);
      });
      if (lock === 'exists') {
        if (!opts.renameOnCollision || attempt > 5) throw new InvalidKeyError(`A run with id ${runId} already exists.`);
        runId = newRunId(this.now());
        continue;
      }
      const h = new RunHandle(model, 0);
      const lease = this.own(h, lock, owner);
      try {
        // Meta, records, lists, approvals, effects: one durable commit (the first, so it carries the meta).
        if (ops.length > 0) await h.serial(() => h.writer!.durable(ops));
      } catch (err) {
        await lease.forceRelease();
        throw toWriteError(runId, err);
      }
      this.index.set(model.summary(), h.durableCommits, true);
      this.emit({ kind: 'run-created', run_id: runId });
      if (!opts.keepLease) await lease.release();
      return { run: model.summary(), lease: opts.keepLease ? lease : undefined };
    }
  }

  readHandle(runId: string): Promise<RunHandle> {
    return this.mustPeek(checkRunId(runId));
  }

  /** Writes a blob under its known hash (import; the hash was verified by the caller). */
  async putBlobAs(runId: string, hash: string, content: string): Promise<void> {
    this.ownedHandle(runId);
    await this.engine.putBlob(runId, checkBlobHash(hash), content).catch((err: unknown) => {
      throw toWriteError(runId, err);
    });
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────
  async flush(timeoutMs = 10_000): Promise<void> {
    await this.opened();
    await this.bounded(timeoutMs, 'flush', async () => {
      await Promise.all([...this.runs.values()].filter((h) => h.writer).map((h) => h.writer!.flush()));
      await this.index.save();
    });
  }

  async close(timeoutMs = 10_000): Promise<void> {
    if (this.closed) return;
    let error: unknown;
    await this.flush(timeoutMs).catch((err: unknown) => (error = err));
    if (!error) {
      const owned = [...this.runs.values()].filter((h) => h.owned && !h.lease!.lost);
      await this.bounded(timeoutMs, 'close', async () => {
        for (const h of owned) await h.serial(() => this.compactIfDue(h));
      }).catch(() => undefined); // compaction is an optimisation: a slow one must not block closing
    }
    this.closed = true;
    this.index.stop();
    for (const h of this.runs.values()) {
      h.writer?.discard(new StoreClosedError());
      await h.lease?.forceRelease();
    }
    await this.engine.close();
    if (error) throw error;
  }

  private async bounded(ms: number, what: string, fn: () => Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(toWriteError(null, Object.assign(new Error(`${what} did not finish within ${ms} ms`), { code: 'ETIMEDOUT' }))), ms);
    });
    try {
      await Promise.race([fn(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  // ── internals ─────────────────────────────────────────────────────────────────────────────
  private ownedHandle(runId: string): RunHandle {
    checkRunId(runId);
    const h = this.runs.get(runId);
    if (!h?.owned) throw notOwned(runId);
    return h;
  }

  /** Every write: owned, one at a time, and refused once after an unreported write-behind failure. */
  private async write<R>(runId: string, fn: (h: RunHandle) => Promise<R>): Promise<R> {
    await this.opened();
    const h = this.ownedHandle(runId);
    return h.serial(async () => {
      if (!h.owned) throw notOwned(runId);
      const failed = h.writer!.failed;
      if (failed) await this.retryAfterFailure(h, failed);
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
    throw toWriteError(runId, Object.assign(new Error(`an earlier write-behind failed (${failed.message}); the retry succeeded, so the queued checkpoints are now durable, but this write was not applied — repeat it`), { code: (failed as { code?: string }).code }));
  }

  private afterDurable(h: RunHandle, op: CommitOp, durable = true): void {
    const runId = h.model.meta.run_id;
    const structural = op.op !== 'record' || op.record.phase === 'run_terminal';
    this.index.set(h.model.summary(), h.durableCommits, structural && durable);
    if (op.op === 'record') this.emit({ kind: 'checkpoint', run_id: runId, record: copyJson(op.record) });
    else if (op.op === 'approval') this.emit({ kind: 'approval', run_id: runId, approval: copyJson(op.approval) });
    else if (op.op === 'effect') this.emit({ kind: 'effect', run_id: runId, effect: copyJson(op.effect) });
    if (op.op !== 'record' || op.record.phase === 'run_terminal') this.emit({ kind: 'run-updated', run_id: runId });
  }
}
