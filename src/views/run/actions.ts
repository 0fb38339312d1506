// What the run view's buttons do in the editor: commands for run, waypoint and restore actions (the
// same flows as the tree and the palette: Fork asks conversation only / conversation and files,
// Restore asks whether to rewind too and previews every file), VS Code's diff editor for edits (the
// proposed change while it waits, the edit itself once decided).
import * as vscode from 'vscode';
import { CommandIds } from '../../commands/ids';
import { restoreMarkdown } from '../restore/summary';
import type { CheckpointStore } from '../../store/api/types';
import type { RunViewDeps } from './controller';
import type { ProposedDocuments } from './proposed';

export function runViewActions(d: {
  store: CheckpointStore;
  proposed: ProposedDocuments;
  workspaceRoot: vscode.Uri;
  revealInTree(runId: string): Promise<void>;
}): RunViewDeps['actions'] {
  return {
    async run(runId, action) {
      switch (action) {
        case 'cancel':
          return void (await vscode.commands.executeCommand(CommandIds.cancelRun, runId));
        case 'resume':
          return void (await vscode.commands.executeCommand(CommandIds.resumeRun, runId));
        case 'fork': {
          const run = await d.store.getRun(runId);
          return void (await vscode.commands.executeCommand(CommandIds.forkFromCheckpoint, {
            runId,
            seq: run?.last_seq ?? 1,
          }));
        }
        case 'export':
          return void (await vscode.commands.executeCommand(CommandIds.exportRun, runId));
        case 'openInTree':
          return d.revealInTree(runId);
      }
    },
    async waypoint(runId, seq, action) {
      const command = {
        openCheckpoint: CommandIds.openCheckpoint,
        forkHere: CommandIds.forkFromCheckpoint,
        restoreFiles: CommandIds.restoreFiles,
      }[action];
      await vscode.commands.executeCommand(command, { runId, seq });
    },
    async restore(runId, record, action) {
      switch (action) {
        // Undo = restore to the checkpoint the restore followed: its writes are journaled after it (as the notification's Undo restore).
        case 'undo':
          return void (await vscode.commands.executeCommand(
            CommandIds.restoreFiles,
            { runId, seq: record.checkpoint_seq },
            { rewind: false },
          ));
        case 'showDetails': {
          const doc = await vscode.workspace.openTextDocument({
            language: 'markdown',
            content: restoreMarkdown(record),
          });
          return void (await vscode.window.showTextDocument(doc, {
            preview: true,
            viewColumn: vscode.ViewColumn.Beside,
          }));
        }
        case 'openFork':
          return void (await vscode.commands.executeCommand(CommandIds.openRun, record.forked_run_id));
      }
    },
    async showDiff(runId, toolCallId) {
      const approval = (await d.store.listApprovals(runId)).find((a) => a.tool_call_id === toolCallId);
      if (approval?.decision === null && (approval.tool_name === 'write_file' || approval.tool_name === 'edit_file')) {
        return d.proposed.showDiff(d.workspaceRoot, approval);
      }
      const messages = (await d.store.loadSnapshot(runId)).snapshot.messages;
      const call = messages
        .flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []))
        .find((c) => c.id === toolCallId);
      if (!call || (call.function.name !== 'write_file' && call.function.name !== 'edit_file')) {
        throw new Error(`${toolCallId} is not a write_file/edit_file call of run ${runId}`);
      }
      const args = (
        approval?.decision?.kind === 'approve_edited'
          ? approval.decision.arguments
          : JSON.parse(call.function.arguments)
      ) as Record<string, unknown>;
      await d.proposed.showEdit({ runId, toolCallId, toolName: call.function.name, args });
    },
  };
}
