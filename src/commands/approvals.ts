// "Show pending approvals": the run view of a run that waits for decisions, at its first pending card.
import type * as vscode from 'vscode';
import { pickRun } from './pickers';
import type { CommandContext } from './context';
import { CommandIds } from '../contributes';
import { registerCommand } from './register';

export function registerApprovalCommands(c: CommandContext): vscode.Disposable {
  return registerCommand(CommandIds.showApprovals, async (arg?: unknown) => {
    const run = await pickRun(c.model, arg, {
      title: 'Show pending approvals',
      placeHolder: 'Which run?',
      filter: (r) => r.pending_approvals > 0,
      empty: 'Agent Waypoints: no tool call is waiting for approval.',
      autoPickSingle: true,
    });
    if (!run) return false;
    await c.panels.show(run.run_id, { kind: 'firstPending' });
    return true;
  });
}
