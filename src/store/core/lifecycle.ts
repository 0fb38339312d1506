// The life of a run in the store: created (or adopted from a fork, an import, a follow-up turn),
// acquired by one owner (loaded fresh, repaired, its damage recorded), deleted and pruned.
import { endToKeep } from './end';
import crypto from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';
import { CheckpointNotFoundError, InvalidInputError, InvalidKeyError, RunLockedError } from '../api/errors';
import { RunHandle, type Lease } from './runHandle';
import { RunModel } from './runModel';
import { toWriteError } from './commitQueue';
import type { Damage, RunMeta, RunSummary } from '../api/schema';
import type { CommitOp } from './storedSchema';
import type * as T from '../api/types';
import { checkRunId, parseInput } from './validate';
import type { StoreContext } from './context';
import type { StoreReader } from './reader';
import type { StoreWriter } from './writer';

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

export class RunLifecycle {
  constructor(
    private readonly c: StoreContext,
    private readonly reader: StoreReader,
    private readonly writer: StoreWriter,
  ) {}

  async createRun(input: T.NewRunInput, owner: T.OwnerInfo): Promise<{ run: RunSummary; lease: T.RunLease }> {
    await this.c.gate.opened();
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
        created_ms: this.c.now(),
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

  /** Creates a run from a meta and ops (one durable commit). Used by create, fork, import and follow-ups. */
  async adoptNewRun(
    build: (runId: string) => { meta: RunMeta; ops: CommitOp[] },
    preferredId: string | undefined,
    owner: T.OwnerInfo,
    opts: { keepLease: boolean; renameOnCollision: boolean },
  ): Promise<{ run: RunSummary; lease?: Lease }> {
    let runId = preferredId ?? newRunId(this.c.now());
    for (let attempt = 0; ; attempt++) {
      const { meta, ops } = build(runId);
      const model = new RunModel(meta);
      model.check(ops, true);
      const lock = await this.c.engine.createRun(meta, owner).catch((err: unknown) => {
        throw toWriteError(runId, err);
      });
      if (lock === 'exists') {
        if (!opts.renameOnCollision || attempt > 5) throw new InvalidKeyError(`A run with id ${runId} already exists.`);
        runId = newRunId(this.c.now());
        continue;
      }
      const h = new RunHandle(model, 0);
      const lease = this.writer.own(h, lock, owner);
      try {
        // Meta, records, lists, approvals, effects: one durable commit (the first, so it carries the meta).
        if (ops.length > 0) await h.serial(() => h.writer!.durable(ops));
      } catch (err) {
        await lease.forceRelease();
        throw toWriteError(runId, err);
      }
      this.c.index.set(model.summary(), h.durableCommits, true);
      this.c.events.emit({ kind: 'run-created', run_id: runId });
      if (!opts.keepLease) await lease.release();
      return { run: model.summary(), lease: opts.keepLease ? lease : undefined };
    }
  }

  async deleteRun(runId: string): Promise<void> {
    await this.c.gate.opened();
    checkRunId(runId);
    const { loader, engine, index } = this.c;
    const mine = loader.runs.get(runId);
    let lease = mine?.owned ? mine.lease : undefined;
    if (!lease) {
      if (!(await loader.peek(runId)) && !index.get(runId))
        throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
      await this.acquire(runId, {
        owner_id: `delete-${crypto.randomUUID()}`,
        label: 'deleting',
        pid: process.pid,
        hostname: 'local',
      });
      lease = loader.runs.get(runId)!.lease!;
    }
    const h = loader.runs.get(runId)!;
    await h.serial(async () => {
      h.writer?.discard(new CheckpointNotFoundError(`Run ${runId} was deleted.`, runId));
      await engine.deleteRun(runId);
      await lease.forceRelease();
      loader.runs.delete(runId);
      index.delete(runId);
    });
    this.c.events.emit({ kind: 'run-deleted', run_id: runId });
  }

  async pruneFinished(ttlMs: number): Promise<string[]> {
    await this.c.gate.opened();
    if (!(ttlMs >= 0)) throw new InvalidInputError('ttlMs must be a non-negative number');
    const cutoff = this.c.now() - ttlMs;
    const deleted: string[] = [];
    for (const e of [...this.c.index.entries.values()]) {
      if (!['completed', 'failed'].includes(e.state) || e.updated_ms >= cutoff) continue;
      const exact = await this.reader.getRun(e.run_id).catch(() => undefined);
      if (!exact || !['completed', 'failed'].includes(exact.state) || exact.updated_ms >= cutoff) continue;
      // A decision still owed, or a side effect whose outcome was never recorded, keeps the run.
      if (exact.pending_approvals > 0 || (await this.reader.listEffects(e.run_id)).some((x) => x.result === null))
        continue;
      try {
        await this.deleteRun(e.run_id);
        deleted.push(e.run_id);
      } catch (err) {
        if (!(err instanceof RunLockedError)) throw err; // another window holds it: keep it
      }
    }
    return deleted;
  }

  async acquire(runId: string, owner: T.OwnerInfo): Promise<T.RunLease> {
    await this.c.gate.opened();
    return this.take(checkRunId(runId), owner);
  }

  /** acquire() without waiting for the store to open (the opening itself may repair a run). */
  private async take(runId: string, owner: T.OwnerInfo): Promise<Lease> {
    const { loader, engine, events } = this.c;
    const held = loader.runs.get(runId);
    if (held?.owned) {
      // A lease its owner let go while its queue could not be flushed is given back once it can be.
      if (!held.lease!.releaseRequested) throw new RunLockedError(runId, held.lease!.owner);
      await held.lease!.release().catch((err: unknown) => {
        if (held.owned) throw toWriteError(runId, err); // lost meanwhile: the engine's lock names the new holder
      });
    }
    const lock = await engine.lock(runId, owner);
    let h: RunHandle | undefined;
    try {
      // The owner reads the run fresh from disk, repairing what is broken — from its resume point when
      // one fits (what it left on disk is read, and judged, when first asked for).
      loader.runs.delete(runId);
      h = await loader.load(runId, true, true);
      if (!h) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    } catch (err) {
      await lock.release().catch(() => undefined);
      throw err;
    }
    const lease = this.writer.own(h, lock, owner);
    try {
      await h.serial(() => this.settleLoad(h));
    } catch (err) {
      await lease.forceRelease();
      throw toWriteError(runId, err);
    } finally {
      if (h.loadReport) events.report(h.loadReport);
    }
    return lease;
  }

  /**
   * After an owner's load: lost data is recorded in the run's own log (a damage op: what was lost,
   * what the run had reached), so the fallback is never taken for the whole truth — not after a
   * reload, not after the quarantined files are gone. Then the tail witness is made to match.
   */
  private async settleLoad(h: RunHandle): Promise<void> {
    const { engine } = this.c;
    const runId = h.model.meta.run_id;
    // A compacted part read from its spare copy is written whole again before anything else.
    if (engine.needsRewrite(runId))
      await engine.compact(runId, h.model.rebuildOps(), h.model.meta, endToKeep(h.model, this.c.keepEndFrom));
    const r = h.loadReport;
    if (r?.data_lost) {
      const damage: Damage = {
        ms: this.c.now(),
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
    const now = this.writer.witnessOf(h);
    const seen = h.loadWitness;
    if (
      !seen ||
      seen.commits !== now.commits ||
      seen.seq !== now.seq ||
      seen.intents !== now.intents ||
      seen.results !== now.results
    ) {
      await engine.writeWitness(runId, now, { reset: true });
    }
  }

  /** Repairs a damaged run nobody holds: taken under its lock like an owner would, then let go. */
  async repairUnowned(runId: string): Promise<boolean> {
    if (await this.c.engine.holder(runId)) return false;
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
}
