// Bring a run's work into this checkout — the run ran elsewhere (a worker's checkout of the same
// workspace, maybe another machine) and its file journal knows every byte it changed — and undo
// that. `BringBack` is the step itself, used as is by `agent-waypoints apply`: the plan (plan.ts,
// over the run's journal and this checkout's files, every path through the tools' resolver), then
// restore's transaction (restore/action.ts applyPlan: the run's lease, what each write replaces kept
// as blobs of the run, each file replaced atomically, the record marked `applied`). A plan with
// nothing to write writes nothing, not even a record: bringing the same run back twice changes
// nothing the second time. `BringBackAction` is the window's *Bring back here*: guard, restore's
// preview, the transaction, a notification with Undo. vscode-free.
import os from 'node:os';
import { errorMessage } from '../../common/errors';
import type { RestoreRecord } from '../../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';
import type { FileRules } from '../../runner/tools/protectedFiles';
import type { RunGuards } from '../guards';
import type { ActionLog, Notices, RestoreEditor } from '../ports';
import { applyPlan, RestoreOutdatedError } from '../restore/action';
import { currentVersions, type RestoreScope, type RestoreWriter } from '../restore/files';
import { applyChoices, restoreWrites } from '../restore/plan';
import { netChanges, planBringBack, planUndo as undoPlan, type BringBackPlan } from './plan';

export interface BringBackDeps {
  store: CheckpointStore;
  owner: OwnerInfo;
  /** This checkout: where the files are written (never the extension's storage). */
  scope: RestoreScope;
  /** fsRestoreWriter(store, scope, { atomic: true }) in the product. */
  writer: RestoreWriter;
  /** The protected files (the approval policy's): written only when chosen. */
  rules(): FileRules;
  /** Paths open with unsaved changes (the window's editors; none on the command line). */
  dirty?(): ReadonlySet<string>;
}

/** The checkout a record names, `host:folder` (default: this machine and the workspace folder). */
export const checkoutOf = (scope: RestoreScope): string => `${os.hostname()}:${scope.workspaceRoot}`;

export class BringBack {
  constructor(private readonly d: BringBackDeps) {}

  /** What bringing the run's changes after checkpoint `fromSeq` (default: all of them) here would do, file by file. */
  async plan(runId: string, o: { fromSeq?: number } = {}): Promise<BringBackPlan> {
    const { store, scope } = this.d;
    const run = await store.getRun(runId);
    if (!run) throw new Error(`there is no run ${runId} in this store`);
    const fromSeq = o.fromSeq ?? 0;
    if (fromSeq > run.last_seq)
      throw new Error(`run ${runId} has no checkpoint #${fromSeq} (its last is #${run.last_seq})`);
    const [effects, restores] = await Promise.all([store.listEffects(runId), store.listRestores(runId)]);
    const { changes, notes } = netChanges(effects, restores, fromSeq);
    const { current, refused, found } = await currentVersions(
      scope,
      changes.map((c) => c.path),
    );
    const names = new Map([...found].map(([p, f]) => [p, f.names]));
    const dirty = this.d.dirty?.() ?? new Set<string>();
    const toSeq = Math.max(1, run.last_seq);
    return planBringBack({
      runId,
      fromSeq,
      toSeq,
      changes,
      current,
      refused,
      names,
      dirty,
      rules: this.d.rules(),
      notes,
    });
  }

  /** The newest bring-back of the run into this checkout that is not undone yet, if any. */
  async lastBringBack(runId: string): Promise<RestoreRecord | undefined> {
    const here = checkoutOf(this.d.scope);
    const records = (await this.d.store.listRestores(runId)).filter((r) => r.applied?.checkout === here);
    const undone = new Set(records.map((r) => r.applied!.undoes));
    return records.reverse().find((r) => r.applied!.undoes === null && !undone.has(r.id));
  }

  /** What undoing a bring-back (default: the last one here) would do; undefined when there is none to undo. */
  async planUndo(runId: string, record?: RestoreRecord): Promise<BringBackPlan | undefined> {
    const r = record ?? (await this.lastBringBack(runId));
    if (!r) return undefined;
    if (!r.applied || r.applied.undoes !== null) throw new Error(`${r.id} is not a bring-back`);
    const paths = [...new Set(r.files.map((f) => f.path))];
    const { current, refused } = await currentVersions(this.d.scope, paths);
    return undoPlan(r, runId, { current, refused, dirty: this.d.dirty?.() ?? new Set() });
  }

  /**
   * Writes the plan's files (and those chosen in `overwrite`) and records it beside the run (its
   * lease is needed: a run another process holds is refused). Null when there was nothing to write.
   */
  async apply(plan: BringBackPlan, o: { overwrite?: ReadonlySet<string> } = {}): Promise<RestoreRecord | null> {
    const overwrite = o.overwrite ?? new Set<string>();
    if (restoreWrites(plan, overwrite).size === 0) return null;
    const applied = { checkout: checkoutOf(this.d.scope), from_seq: plan.fromSeq, undoes: plan.undoes };
    return applyPlan(this.d, plan.runId, plan, { overwrite, applied });
  }
}

export interface BringBackActionDeps extends BringBackDeps {
  guards: RunGuards;
  editor: RestoreEditor;
  notices: Notices;
  log: ActionLog;
}

const ATTEMPTS = 3;

/** *Bring back here* and its Undo as the window's user meets them. */
export class BringBackAction extends BringBack {
  constructor(private readonly deps: BringBackActionDeps) {
    super({ ...deps, dirty: () => deps.editor.dirtyPaths() });
  }

  /** Guard, preview (restore's), transaction (planned again when files changed under the preview), notification. */
  run(runId: string, o: { fromSeq?: number; ticked?: ReadonlySet<string> } = {}): Promise<RestoreRecord | undefined> {
    return this.previewed(runId, () => this.plan(runId, o), o.ticked);
  }

  /** Undo the last bring-back of the run here (or `record`): its files back to the copies they replaced. */
  async undo(runId: string, record?: RestoreRecord, o: { ticked?: ReadonlySet<string> } = {}) {
    return this.previewed(
      runId,
      async () => {
        const plan = await this.planUndo(runId, record);
        if (!plan) throw new Error('nothing was brought back here from this run, or it was undone already');
        return plan;
      },
      o.ticked,
    );
  }

  private async previewed(
    runId: string,
    plan: () => Promise<BringBackPlan>,
    ticks: ReadonlySet<string> | undefined,
  ): Promise<RestoreRecord | undefined> {
    const { notices, log } = this.deps;
    const reason = await this.deps.guards.bringBack(runId).catch((err: unknown) => errorMessage(err));
    if (reason) return void notices.warn(`Agent Waypoints: ${reason}`);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const p = await plan();
        const title = p.undoes ? `Undo bringing back run ${runId}` : `Bring back the files of run ${runId} here`;
        const ticked = ticks ?? (await this.deps.editor.preview(p, { runId, title }));
        if (!ticked) return undefined;
        const chosen = applyChoices(p, ticked);
        const record = await this.apply({ ...p, files: chosen.plan.files }, { overwrite: chosen.overwrite });
        if (!record) {
          void notices.info(
            `Agent Waypoints: nothing to do — ${p.undoes ? 'nothing left to undo' : "this checkout already has the run's changes"}.`,
          );
          return undefined;
        }
        log.info(`${title}: ${record.files.map((f) => `${f.path} ${f.action}`).join(', ')}`);
        void this.notify(runId, record);
        return record;
      } catch (err) {
        if (err instanceof RestoreOutdatedError && !ticks) {
          void notices.warn(`Agent Waypoints: ${err.message}`);
          continue;
        }
        log.error(`bring back of run ${runId} failed: ${errorMessage(err)}`);
        notices.error(`Agent Waypoints: could not bring the files back: ${errorMessage(err)}`);
        return undefined;
      }
    }
    return undefined;
  }

  private async notify(runId: string, r: RestoreRecord): Promise<void> {
    const written = r.files.filter((f) => ['reverted', 'overwritten'].includes(f.action)).length;
    const kept = r.files.filter((f) => ['kept', 'unrestorable'].includes(f.action)).length;
    const what = r.applied?.undoes ? 'Undid the bring-back' : `Brought back ${written} file${written === 1 ? '' : 's'}`;
    const text = `${what} of run ${runId}${kept ? `; ${kept} kept (changed here, protected, or not known)` : ''}.`;
    const buttons = r.applied?.undoes ? (['Show details'] as const) : (['Undo bring back', 'Show details'] as const);
    const pick = await this.deps.notices.info(text, ...buttons);
    if (pick === 'Undo bring back') await this.undo(runId, r);
    if (pick === 'Show details') await this.deps.editor.showDetails(r);
  }
}
