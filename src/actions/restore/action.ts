// "Restore files to checkpoint…", optionally "and rewind the conversation" (a fork from the
// checkpoint), and Undo restore — the whole action in one place, vscode-free. The tree, the palette,
// the notification and the run view all call it; the editor shows what it is handed (ports.ts).
//
// plan (plan.ts, over the journal and each file now; unsaved editors are conflicts) → preview (the
// user ticks) → the transaction: nothing changed since the plan, the run's lease, what each write
// replaces kept as blobs, the writes (files.ts RestoreWriter), the fork, the record → the notification.
import { errorMessage } from '../../common/errors';
import type { AppliedInto, RestoreRecord } from '../../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';
import type { CheckpointTarget } from '../fork';
import type { RunGuards } from '../guards';
import type { ActionLog, Notices, RestoreEditor } from '../ports';
import { prepareRestore, type RestoreScope, type RestoreWriter } from './files';
import { applyChoices, restoreOutcome, restoreWrote, type RestorePlan } from './plan';

/** The files changed between the preview and the click: plan again. */
export class RestoreOutdatedError extends Error {
  constructor(readonly paths: string[]) {
    super(`These files changed while the preview was open: ${paths.join(', ')}. Look at the new preview.`);
  }
}

export interface ApplyOptions {
  /** Journaled files the user chose to overwrite with their checkpoint version. */
  overwrite: ReadonlySet<string>;
  /** Runs after the files are written, before the record (a fork): its run id goes into the record. */
  fork?: () => Promise<string>;
  /** A bring-back (or its undo): the record says into which checkout. */
  applied?: AppliedInto;
}

/**
 * The transaction a restore and a bring-back share: nothing changed since the plan, the run's lease,
 * what each write replaces kept as blobs of the run, the writes, the fork, the record.
 */
export async function applyPlan(
  d: { store: CheckpointStore; owner: OwnerInfo; writer: RestoreWriter },
  runId: string,
  plan: RestorePlan,
  o: ApplyOptions,
): Promise<RestoreRecord> {
  const { store, writer } = d;
  const changed = await writer.changedSince(plan);
  if (changed.length > 0) throw new RestoreOutdatedError(changed);
  const lease = await store.acquire(runId, d.owner);
  try {
    const replaced = await writer.keepReplaced(runId, plan, o.overwrite);
    await writer.write(runId, plan, o.overwrite);
    const forkedRunId = o.fork ? await o.fork() : null;
    return await store.recordRestore(runId, {
      to_seq: plan.toSeq,
      files: restoreOutcome(plan, o.overwrite, replaced),
      forked_run_id: forkedRunId,
      notes: plan.notes,
      ...(o.applied ? { applied: o.applied } : {}),
    });
  } finally {
    await lease.release();
  }
}

export interface RestoreOptions {
  /** Also fork the conversation from the checkpoint; absent: asked. */
  rewind?: boolean;
  /**
   * The ticks, in place of the preview — the in-host tests only, through the extension's test API
   * (root.ts). No command passes it: any extension can call a command, and a restore always previews.
   */
  ticked?: ReadonlySet<string>;
}

export interface RestoreDeps {
  store: CheckpointStore;
  owner: OwnerInfo;
  scope: RestoreScope;
  writer: RestoreWriter;
  guards: RunGuards;
  editor: RestoreEditor;
  notices: Notices;
  log: ActionLog;
  /** Forks the run at the checkpoint, paused, for a restore that rewinds (fork.ts forkPaused). */
  forkRestored(from: CheckpointTarget): Promise<string>;
  /** Resumes a run (the notification's Resume fork). */
  resume(runId: string): Promise<unknown>;
}

const ATTEMPTS = 3;

export class RestoreAction {
  constructor(private readonly deps: RestoreDeps) {}

  /** What a restore to checkpoint `toSeq` would do, file by file, with the editors' unsaved files as conflicts. */
  plan(runId: string, toSeq: number): Promise<RestorePlan> {
    const { store, scope, editor } = this.deps;
    return prepareRestore({ store, runId, toSeq, ...scope, dirty: editor.dirtyPaths() });
  }

  /** The transaction: writes the plan's files and records the restore. Needs the run (refused while another window holds it). */
  apply(runId: string, plan: RestorePlan, o: ApplyOptions): Promise<RestoreRecord> {
    return applyPlan(this.deps, runId, plan, o);
  }

  /**
   * The action as the user meets it: the guard, the rewind question, the preview, the transaction
   * (planned again when files changed under the preview), the notification. Resolves to the record,
   * or undefined when refused (said in a warning), cancelled or failed (said in an error).
   */
  async run(to: CheckpointTarget, o: RestoreOptions = {}): Promise<RestoreRecord | undefined> {
    if (await this.refused(this.deps.guards.restore(to.runId, to.seq))) return undefined;
    const rewind = o.rewind ?? (await this.askRewind());
    if (rewind === undefined) return undefined;
    return this.restore(to, { rewind, ticked: o.ticked });
  }

  /** Undo = restore to the checkpoint the restore followed: its writes are journaled after it, so the same preview and checks apply. */
  async undo(runId: string, record: RestoreRecord): Promise<RestoreRecord | undefined> {
    if (await this.refused(this.deps.guards.undoRestore(runId, record))) return undefined;
    return this.run({ runId, seq: record.checkpoint_seq }, { rewind: false });
  }

  /** The record, every file and why, as a document. */
  showDetails(record: RestoreRecord, o: { beside?: boolean } = {}): Promise<void> {
    return this.deps.editor.showDetails(record, o);
  }

  private async restore(
    to: CheckpointTarget,
    o: { rewind: boolean; ticked: ReadonlySet<string> | undefined },
  ): Promise<RestoreRecord | undefined> {
    const { runId, seq } = to;
    const { log, notices } = this.deps;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const plan = await this.plan(runId, seq);
        const title = `Restore files to checkpoint #${seq}${o.rewind ? ' and rewind the conversation' : ''}`;
        const ticked = o.ticked ?? (await this.deps.editor.preview(plan, { runId, title }));
        if (!ticked) return undefined;
        const chosen = applyChoices(plan, ticked);
        const fork = o.rewind ? () => this.deps.forkRestored(to) : undefined;
        const record = await this.apply(runId, chosen.plan, { overwrite: chosen.overwrite, ...(fork ? { fork } : {}) });
        log.info(
          `restored files of run ${runId} to checkpoint #${seq}: ${record.files.map((f) => `${f.path} ${f.action}`).join(', ') || 'nothing to do'}`,
        );
        void this.notifyRestored(runId, record);
        return record;
      } catch (err) {
        if (err instanceof RestoreOutdatedError && !o.ticked) {
          void notices.warn(`Agent Waypoints: ${err.message}`);
          continue;
        }
        log.error(`restore of run ${runId} to #${seq} failed: ${errorMessage(err)}`);
        notices.error(`Agent Waypoints: could not restore the files: ${errorMessage(err)}`);
        return undefined;
      }
    }
    return undefined;
  }

  /** A guard's answer: a reason is said in a warning (true: refused). */
  private async refused(answer: Promise<string | null>): Promise<boolean> {
    const reason = await answer.catch((err: unknown) => errorMessage(err));
    if (reason) void this.deps.notices.warn(`Agent Waypoints: ${reason}`);
    return reason !== null;
  }

  private askRewind(): Promise<boolean | undefined> {
    return this.deps.notices.choose(
      [
        {
          label: 'Restore files',
          detail: 'Put back the files the agent changed after this checkpoint; the conversation stays as it is.',
          value: false,
        },
        {
          label: 'Restore files and rewind the conversation',
          detail:
            'Also fork the run from this checkpoint, so the agent continues from files and conversation that match.',
          value: true,
        },
      ],
      { title: 'Restore files to this checkpoint', placeHolder: 'A preview shows every file before anything changes' },
    );
  }

  private async notifyRestored(runId: string, r: RestoreRecord): Promise<void> {
    const n = (a: RestoreRecord['files'][number]['action'][]) => r.files.filter((f) => a.includes(f.action)).length;
    const written = n(['reverted', 'partly_reverted', 'overwritten']);
    const kept = n(['kept', 'unrestorable']);
    const text =
      `Restored ${written} file${written === 1 ? '' : 's'} to checkpoint #${r.to_seq}` +
      (kept ? `; ${kept} kept (changed since, or not restorable)` : '') +
      '.' +
      (r.forked_run_id ? ' The conversation continues in a fork: resume it to go on.' : '');
    const buttons = [
      ...(restoreWrote(r) ? (['Undo restore'] as const) : []),
      'Show details' as const,
      ...(r.forked_run_id ? (['Resume fork'] as const) : []),
    ];
    const pick = await this.deps.notices.info(text, ...buttons);
    if (pick === 'Undo restore') await this.undo(runId, r);
    if (pick === 'Show details') await this.showDetails(r);
    if (pick === 'Resume fork' && r.forked_run_id) await this.deps.resume(r.forked_run_id);
  }
}
