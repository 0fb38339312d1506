// The run view's buttons that act on a run — the approval card's decisions, the header's run
// actions, a waypoint's, a restore card's — as typed calls to the actions (src/actions), each behind
// its guard: a forged or stale request is refused with the guard's reason before anything happens.
// vscode-free; what only the editor can do (documents, the diff editor, the tree, the export
// dialog) goes through RunViewEditor.
import type { Actions } from '../../actions';
import { RunGuards, whyNoCheckpoint } from '../../actions/guards';
import type { RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import type { RestoreAction as RestoreCardAction, RunAction, WaypointAction } from './items';
import type { RequestMessage } from './protocol';

/** The editor's side of the view's buttons: documents, the diff editor, the tree, the export dialog. */
export interface RunViewEditor {
  showDiff(runId: string, toolCallId: string): Promise<void>;
  openCheckpoint(runId: string, seq: number): Promise<unknown>;
  openRun(runId: string): Promise<unknown>;
  exportRun(runId: string): Promise<unknown>;
  revealInTree(runId: string): Promise<void>;
}

const ACTION_METHODS = [
  'approve',
  'reject',
  'approveEdited',
  'retry',
  'approveAll',
  'alwaysAllow',
  'showDiff',
  'runAction',
  'waypointAction',
  'restoreAction',
] as const;

export type ActionRequest = Extract<RequestMessage, { method: (typeof ACTION_METHODS)[number] }>;

export function isActionRequest(msg: RequestMessage): msg is ActionRequest {
  return (ACTION_METHODS as readonly string[]).includes(msg.method);
}

export interface ActionRequestDeps {
  store: Pick<CheckpointStore, 'listRestores'>;
  runner: { cancel(runId: string): boolean };
  actions: Pick<Actions, 'guards' | 'decide' | 'restore' | 'fork' | 'resume' | 'handOff'>;
  editor: RunViewEditor;
  log: { info(m: string): void };
  /** The run, from the view's thread (the controller checked the request names one). */
  runOf(runId: string): RunSummary;
}

export class RunViewActionRequests {
  constructor(private readonly deps: ActionRequestDeps) {}

  async handle(msg: ActionRequest): Promise<void> {
    const { actions, log } = this.deps;
    const { runId } = msg.params;
    switch (msg.method) {
      case 'approve':
        await actions.decide.approve(runId, msg.params);
        return log.info(`run ${runId}: ${msg.method} accepted`);
      case 'reject':
        await actions.decide.reject(runId, msg.params, msg.params.reason);
        return log.info(`run ${runId}: ${msg.method} accepted`);
      case 'approveEdited':
        await actions.decide.approveEdited(runId, msg.params, msg.params.argumentsJson);
        return log.info(`run ${runId}: ${msg.method} accepted`);
      case 'retry':
        await actions.decide.retry(runId, msg.params, msg.params.choice);
        return log.info(`run ${runId}: ${msg.method} (${msg.params.choice}) accepted`);
      case 'approveAll':
        await actions.decide.approveAll(runId, msg.params.items);
        return log.info(`run ${runId}: ${msg.method} accepted`);
      case 'alwaysAllow': {
        const what = await actions.decide.approveAndAllow(runId, msg.params);
        return log.info(`run ${runId}: approved, and always allowed from now on: ${what}`);
      }
      case 'showDiff':
        return this.deps.editor.showDiff(runId, msg.params.toolCallId);
      case 'runAction':
        return this.runAction(runId, msg.params.action);
      case 'waypointAction':
        return this.waypointAction(runId, msg.params.seq, msg.params.action);
      case 'restoreAction':
        return this.restoreAction(runId, msg.params.restoreId, msg.params.action);
    }
  }

  /** The header's buttons (Resume is offered only where its guard allows it; a forged one is refused with the reason). */
  private async runAction(runId: string, action: RunAction): Promise<void> {
    const { actions, editor } = this.deps;
    switch (action) {
      case 'cancel':
        if (!this.deps.runner.cancel(runId)) throw new Error(`run ${runId} is not executing in this window`);
        return;
      case 'resume':
        RunGuards.refuse(await actions.guards.resume(runId));
        return void (await actions.resume.run(runId));
      case 'continueInBackground':
        RunGuards.refuse(await actions.guards.handOff(runId));
        return void (await actions.handOff.continueInBackground(runId));
      case 'bringBack':
        RunGuards.refuse(await actions.guards.takeBack(runId));
        return void (await actions.handOff.bringBackHere(runId));
      case 'fork':
        return void (await actions.fork.run({ runId, seq: this.deps.runOf(runId).last_seq }));
      case 'export':
        return void (await editor.exportRun(runId));
      case 'openInTree':
        return editor.revealInTree(runId);
    }
  }

  /** A step's waypoint: open one of its checkpoints, fork from it, restore the files to it — each for a checkpoint the run has. */
  private async waypointAction(runId: string, seq: number, action: WaypointAction): Promise<void> {
    const { actions } = this.deps;
    switch (action) {
      case 'openCheckpoint':
        RunGuards.refuse(whyNoCheckpoint({ run: this.deps.runOf(runId) }, seq));
        return void (await this.deps.editor.openCheckpoint(runId, seq));
      case 'forkHere':
        RunGuards.refuse(await actions.guards.fork(runId, seq));
        return void (await actions.fork.run({ runId, seq }));
      case 'restoreFiles':
        RunGuards.refuse(await actions.guards.restore(runId, seq));
        return void (await actions.restore.run({ runId, seq }));
    }
  }

  /** A restore card: Undo (its guard), Show details, Open the fork — on a record the run has. */
  private async restoreAction(runId: string, restoreId: string, action: RestoreCardAction): Promise<void> {
    const { actions } = this.deps;
    const record = (await this.deps.store.listRestores(runId)).find((r) => r.id === restoreId);
    if (!record) throw new Error(`run ${runId} has no restore ${restoreId}`);
    switch (action) {
      case 'undo':
        RunGuards.refuse(await actions.guards.undoRestore(runId, record));
        return void (await actions.restore.undo(runId, record));
      case 'showDetails':
        return actions.restore.showDetails(record, { beside: true });
      case 'openFork':
        if (!record.forked_run_id) throw new Error(`restore ${restoreId} made no fork`);
        return void (await this.deps.editor.openRun(record.forked_run_id));
    }
  }
}
