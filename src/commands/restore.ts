// "Restore files to here" (tree, palette, and the run view's waypoint action via the command id),
// optionally "and rewind the conversation" (a fork from the checkpoint); "Fork from checkpoint"
// with files uses the same flow. Arguments: a checkpoint node, or { runId, seq }, and { rewind }.
// The public command always shows the preview: nothing passed to it can skip it (any extension
// can call a command). Ticks without a preview are for the in-host tests only, through the
// extension's test API (root.ts), never through a command.
import * as vscode from 'vscode';
import { errorMessage } from '../runner/errors';
import { applyChoices } from '../runner/files/restorePlan';
import type { RestoreRecord } from '../store/api/schema';
import { checkpointOf, pickCheckpoint, pickRun } from '../views/pickers';
import { previewRestore } from '../views/restore/preview';
import { RestoreOutdatedError } from '../views/restore/restorer';
import { restoreMarkdown } from '../views/restore/summary';
import type { CommandContext } from './context';
import { CommandIds } from './ids';
import { registerCommand } from './register';

export interface RestoreCommandOptions {
  /** Also fork the conversation from the checkpoint (asked when absent). The preview is shown either way. */
  rewind?: boolean;
}

export function registerRestoreCommands(c: CommandContext): vscode.Disposable {
  return registerCommand(CommandIds.restoreFiles, async (arg?: unknown, opts?: RestoreCommandOptions) => {
    const target = checkpointOf(arg) ?? (await pickTarget(c, arg));
    if (!target) return undefined;
    // Only a boolean `rewind` is read from the caller's options; anything else in them is ignored.
    const rewind = typeof opts?.rewind === 'boolean' ? opts.rewind : await askRewind();
    if (rewind === undefined) return undefined;
    return restoreFlow(c, target, { rewind });
  });
}

async function pickTarget(c: CommandContext, arg: unknown): Promise<{ runId: string; seq: number } | undefined> {
  const run = await pickRun(c.model, arg, {
    title: 'Restore files to a checkpoint',
    placeHolder: 'Of which run?',
    empty: 'Agent Waypoints: there are no runs.',
  });
  if (!run) return undefined;
  const record = await pickCheckpoint(c.store, run.run_id, `Restore the files “${run.title}” changed to…`);
  return record ? { runId: record.run_id, seq: record.seq } : undefined;
}

async function askRewind(): Promise<boolean | undefined> {
  const pick = await vscode.window.showQuickPick(
    [
      {
        label: 'Restore files',
        detail: 'Put back the files the agent changed after this checkpoint; the conversation stays as it is.',
        rewind: false,
      },
      {
        label: 'Restore files and rewind the conversation',
        detail:
          'Also fork the run from this checkpoint, so the agent continues from files and conversation that match.',
        rewind: true,
      },
    ],
    { title: 'Restore files to this checkpoint', placeHolder: 'A preview shows every file before anything changes' },
  );
  return pick?.rewind;
}

/**
 * Plan → preview → the writes (+ a fork) → the record. Returns the record, or undefined when
 * cancelled. `ticked` replaces the preview: only the in-host tests pass it (root.ts's test API).
 */
export async function restoreFlow(
  c: CommandContext,
  target: { runId: string; seq: number },
  o: { rewind: boolean; ticked?: string[] },
): Promise<RestoreRecord | undefined> {
  const { runId, seq } = target;
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'Agent Waypoints: restoring files writes the workspace, which Restricted Mode does not allow. Trust the workspace first.',
    );
    return undefined;
  }
  if (c.runner.isActive(runId)) {
    void vscode.window.showWarningMessage(
      'Agent Waypoints: this run is executing; cancel it before restoring its files.',
    );
    return undefined;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const plan = await c.restorer.plan(runId, seq);
      const title = `Restore files to checkpoint #${seq}${o.rewind ? ' and rewind the conversation' : ''}`;
      const ticked = o.ticked
        ? new Set(o.ticked)
        : await previewRestore(plan, { runId, title, workspaceRoot: c.restorer.workspaceRoot, versions: c.versions });
      if (!ticked) return undefined;
      const chosen = applyChoices(plan, ticked);
      const fork = o.rewind ? () => forkWithFiles(c, runId, seq) : undefined;
      const { record } = await c.restorer.apply(runId, chosen.plan, {
        overwrite: chosen.overwrite,
        ...(fork ? { fork } : {}),
      });
      c.log.info(
        `restored files of run ${runId} to checkpoint #${seq}: ${record.files.map((f) => `${f.path} ${f.action}`).join(', ') || 'nothing to do'}`,
      );
      void notifyRestored(c, runId, record);
      return record;
    } catch (err) {
      if (err instanceof RestoreOutdatedError && !o.ticked) {
        void vscode.window.showWarningMessage(`Agent Waypoints: ${err.message}`);
        continue;
      }
      c.log.error(`restore of run ${runId} to #${seq} failed: ${errorMessage(err)}`);
      void vscode.window.showErrorMessage(`Agent Waypoints: could not restore the files: ${errorMessage(err)}`);
      return undefined;
    }
  }
  return undefined;
}

/**
 * The fork of a restore: from the snapshot at/before the checkpoint. Calls whose file changes the
 * restore put back are not carried into the fork, so it runs them again (asking as the policy
 * says) instead of replaying results the files no longer show.
 */
async function forkWithFiles(c: CommandContext, runId: string, seq: number): Promise<string> {
  const omitEffects = (await c.store.listEffects(runId))
    .filter((e) => (e.checkpoint_seq ?? -1) >= seq && (e.files?.length ?? 0) > 0)
    .map((e) => e.tool_call_id);
  const { run, lease } = await c.store.fork(runId, seq, c.runner.owner, { omitEffects });
  try {
    await c.store.setRunState(
      run.run_id,
      'paused_cancelled',
      `Forked from run ${runId} at checkpoint #${seq}, with its files restored. Resume it to continue from there.`,
    );
  } finally {
    await lease.release();
  }
  return run.run_id;
}

async function notifyRestored(c: CommandContext, runId: string, r: RestoreRecord): Promise<void> {
  const n = (a: RestoreRecord['files'][number]['action'][]) => r.files.filter((f) => a.includes(f.action)).length;
  const written = n(['reverted', 'partly_reverted', 'overwritten']);
  const kept = n(['kept', 'unrestorable']);
  const text =
    `Restored ${written} file${written === 1 ? '' : 's'} to checkpoint #${r.to_seq}` +
    (kept ? `; ${kept} kept (changed since, or not restorable)` : '') +
    '.' +
    (r.forked_run_id ? ' The conversation continues in a fork: resume it to go on.' : '');
  const actions = [...(written ? ['Undo restore'] : []), 'Show details', ...(r.forked_run_id ? ['Resume fork'] : [])];
  const pick = await vscode.window.showInformationMessage(text, ...actions);
  // Undo = restore the files to how they were when this restore was applied: the restore's writes
  // are in the file journal after that checkpoint, so they are undone with the same preview and checks.
  if (pick === 'Undo restore')
    await vscode.commands.executeCommand(CommandIds.restoreFiles, { runId, seq: r.checkpoint_seq }, { rewind: false });
  if (pick === 'Show details') {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: restoreMarkdown(r) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }
  if (pick === 'Resume fork') await vscode.commands.executeCommand(CommandIds.resumeRun, r.forked_run_id);
}
