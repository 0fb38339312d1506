// After a reload or a crash: runs left `running` without a live owner are marked interrupted and
// offered for resume; pending approvals are announced. Nothing executes without the user's click
// (setting agentWaypoints.resumeOnStartup: ask | never).
import * as vscode from 'vscode';
import { CommandIds, ViewIds } from '../contributes';
import type { AgentRunner } from '../runner/runner';
import type { Settings } from '../settings';
import type { RunViewPanels } from './run/panel';
import type { RunsTreeModel } from './runs/treeModel';

export interface StartupDeps {
  runner: AgentRunner;
  model: RunsTreeModel;
  panels: RunViewPanels;
  log: vscode.LogOutputChannel;
  settings(): Settings;
  /** Remembers interrupted runs the user chose "Not now" for, so a reload does not ask again. */
  memento: vscode.Memento;
  /** The Resume action (actions/resume.ts) for one run. */
  resume(runId: string): Promise<unknown>;
}

const DISMISSED_KEY = 'agentWaypoints.dismissedInterrupted';

export async function restoreOnStartup(d: StartupDeps): Promise<void> {
  const marked = await d.runner.markInterrupted();
  for (const id of marked)
    d.log.warn(`run ${id} was interrupted (its window closed or crashed mid-run); it can be resumed`);
  if (marked.length > 0) await d.model.reload();
  if (d.settings().resumeOnStartup === 'never') return;

  const dismissed = new Set(d.memento.get<string[]>(DISMISSED_KEY, []));
  const interrupted = d.model.all().filter((r) => r.state === 'interrupted' && !dismissed.has(r.run_id));
  const waiting = d.model.all().filter((r) => r.pending_approvals > 0);
  if (interrupted.length > 0) {
    const n = interrupted.length;
    void vscode.window
      .showWarningMessage(
        `${n} agent run${n > 1 ? 's were' : ' was'} interrupted when VS Code closed or crashed. Nothing has run since.`,
        'Resume',
        'Show',
        'Not now',
      )
      .then((pick) => {
        // One run resumes at once; several: the command's picker asks which.
        if (pick === 'Resume' && n === 1) void d.resume(interrupted[0]!.run_id);
        if (pick === 'Resume' && n > 1) void vscode.commands.executeCommand(CommandIds.resumeRun);
        if (pick === 'Show' && n === 1) void d.panels.show(interrupted[0]!.run_id);
        if (pick === 'Show' && n > 1) void vscode.commands.executeCommand(ViewIds.focusRuns);
        if (pick === 'Not now')
          void d.memento.update(DISMISSED_KEY, [...dismissed, ...interrupted.map((r) => r.run_id)]);
      });
  }
  if (waiting.length > 0) {
    const calls = waiting.reduce((s, r) => s + r.pending_approvals, 0);
    void vscode.window
      .showInformationMessage(
        `${calls} tool call${calls > 1 ? 's are' : ' is'} waiting for your approval in ${waiting.length} agent run${waiting.length > 1 ? 's' : ''}.`,
        'Show approvals',
      )
      .then((pick) => {
        if (pick)
          void vscode.commands.executeCommand(
            CommandIds.showApprovals,
            waiting.length === 1 ? waiting[0]!.run_id : undefined,
          );
      });
  }
}
