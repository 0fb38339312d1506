// The store's semantics, shared by both backends (memory/, disk/): validation, seqs,
// durability classes, ownership checks, events, copies at the edge — over an Engine that owns the
// bytes. Reads in reads.ts, writes in writes.ts; here the lifecycle of runs (create, acquire,
// delete, prune, fork/export/import via portable.ts) and of the store (flush, close).
import crypto from 'node:crypto';
import os from 'node:os';
import { type CoreOptions } from './reads';
import { StoreWrites } from './writes';
import type { Engine } from './engine';
import {
  CheckpointNotFoundError,
  InvalidInputError,
  InvalidKeyError,
  RunLockedError,
  StoreClosedError,
} from '../api/errors';
import { continueRun } from '../portable/continue';
import { exportRun, forkRun, importRun, type PortableHost } from '../portable/portable';
import { copyJson } from './copy';
import { RunHandle, type Lease } from './runHandle';
import { RunModel } from './runModel';
import { toWriteError } from './runWriter';
import type { Damage, InboxMessage, RestoreRecord, RunMeta, RunSummary } from '../api/schema';
import type { CommitOp } from './storedSchema';
import type * as T from '../api/types';
import { checkRunId, parseInput } from './validate';
import { z } from 'zod';

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

export const newRunId = (now: number): string => `${now.toString(36)}-${crypto.randomBytes(5).toString('hex')}`;

export class StoreCore extends StoreWrites implements T.CheckpointStore, PortableHost {
  constructor(engine: Engine, opts: CoreOptions = {}) {
    super(engine, opts);
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
    const r = await this.adoptNewRun(build, i.run_id, owner, {
      keepLease: true,
      renameOnCollision: i.run_id === undefined,
    });
    return { run: r.run, lease: r.lease! };
  }

  async deleteRun(runId: string): Promise<void> {
    await this.opened();
    checkRunId(runId);
    const mine = this.runs.get(runId);
    let lease = mine?.owned ? mine.lease : undefined;
    if (!lease) {
      if (!(await this.peek(runId)) && !this.index.get(runId))
        throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
      await this.acquire(runId, {
        owner_id: `delete-${crypto.randomUUID()}`,
        label: 'deleting',
        pid: process.pid,
        hostname: 'local',
      });
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
      // A decision still owed, or a side effect whose outcome was never recorded, keeps the run.
      if (exact.pending_approvals > 0 || (await this.listEffects(e.run_id)).some((x) => x.result === null)) continue;
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
    return this.take(checkRunId(runId), owner);
  }

  /** acquire() without waiting for the store to open (the opening itself may repair a run). */
  private async take(runId: string, owner: T.OwnerInfo): Promise<Lease> {
    const held = this.runs.get(runId);
    if (held?.owned) {
      // A lease its owner let go while its queue could not be flushed is given back once it can be.
      if (!held.lease!.releaseRequested) throw new RunLockedError(runId, held.lease!.owner);
      await held.lease!.release().catch((err: unknown) => {
        if (held.owned) throw toWriteError(runId, err); // lost meanwhile: the engine's lock names the new holder
      });
    }
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
    const lease = this.own(h, lock, owner);
    try {
      await h.serial(() => this.settleLoad(h));
    } catch (err) {
      await lease.forceRelease();
      throw toWriteError(runId, err);
    } finally {
      if (h.loadReport) this.report(h.loadReport);
    }
    return lease;
  }

  /**
   * After an owner's load: lost data is recorded in the run's own log (a damage op: what was lost,
   * what the run had reached), so the fallback is never taken for the whole truth — not after a
   * reload, not after the quarantined files are gone. Then the tail witness is made to match.
   */
  private async settleLoad(h: RunHandle): Promise<void> {
    const runId = h.model.meta.run_id;
    // An older on-disk format is converted before anything is written (one snapshot + a segment).
    if (this.engine.needsConversion(runId)) await this.engine.compact(runId, h.model.rebuildOps(), h.model.meta);
    const r = h.loadReport;
    if (r?.data_lost) {
      const damage: Damage = {
        ms: this.now(),
        file: r.file,
        reason: r.reason,
        lost_seqs: r.lost_seqs,
        effects_lost: r.effects_lost,
        state_before: r.state_before,
        step_before: r.step_before,
        lost_calls: r.lost_calls,
        lost: r.lost,
      };
      await h.writer!.durable([{ op: 'damage', damage }]);
    }
    const now = this.witnessOf(h);
    const seen = h.loadWitness;
    if (
      !seen ||
      seen.commits !== now.commits ||
      seen.seq !== now.seq ||
      seen.intents !== now.intents ||
      seen.results !== now.results
    ) {
      await this.engine.writeWitness(runId, now, { reset: true });
    }
  }

  protected async repairUnowned(runId: string): Promise<boolean> {
    if (await this.engine.holder(runId)) return false;
    const repairer: T.OwnerInfo = {
      owner_id: `repair-${crypto.randomUUID()}`,
      label: 'Agent Waypoints (repairing a damaged run)',
      pid: process.pid,
      hostname: os.hostname(),
    };
    try {
      const lease = await this.take(runId, repairer);
      await lease.release();
      return true;
    } catch (err) {
      if (err instanceof RunLockedError) return false;
      throw err;
    }
  }

  // ── restores (an audit trail beside the run; written by writes.ts recordRestore) ───────────
  async listRestores(runId: string): Promise<RestoreRecord[]> {
    const h = await this.mustPeek(runId);
    return h.model.restores.map((r) => copyJson(r));
  }

  // ── fork / export / import ────────────────────────────────────────────────────────────────
  async fork(
    runId: string,
    seq: number,
    owner: T.OwnerInfo,
    opts?: T.ForkOptions,
  ): Promise<{ run: RunSummary; lease: T.RunLease }> {
    await this.opened();
    return forkRun(this, checkRunId(runId), seq, owner, opts);
  }

  async continueRun(input: T.ContinueRunInput, owner: T.OwnerInfo): Promise<{ run: RunSummary; lease: T.RunLease }> {
    await this.opened();
    return continueRun(this, input, owner);
  }

  // ── inbox reads (writes are in writes.ts) ─────────────────────────────────────────────────
  async listInbox(runId: string, opts: { pendingOnly?: boolean } = {}): Promise<InboxMessage[]> {
    const h = await this.mustPeek(runId);
    return [...h.model.inbox.values()].filter((m) => !opts.pendingOnly || m.delivered === null).map((m) => copyJson(m));
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
      timer = setTimeout(
        () =>
          reject(
            toWriteError(
              null,
              Object.assign(new Error(`${what} did not finish within ${ms} ms`), { code: 'ETIMEDOUT' }),
            ),
          ),
        ms,
      );
    });
    try {
      await Promise.race([fn(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
