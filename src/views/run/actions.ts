// What the run view's buttons open in the editor (controller.ts RunViewEditor): a checkpoint as a
// document, another run's view, the tree at a run, the export dialog, and VS Code's diff editor for
// edits (the proposed change while it waits, the edit itself once decided). The actions on a run
// (decide, restore, fork, resume) are typed calls to src/actions, not here.
import type * as vscode from 'vscode';
import type { CheckpointStore } from '../../store/api/types';
import { openCheckpointDocument } from '../checkpointDocument';
import { parseToolArgs } from '../shared/toolCalls';
import type { RunViewEditor } from './actionRequests';
import type { ProposedDocuments } from './proposed';

export function runViewEditor(d: {
  store: CheckpointStore;
  proposed: ProposedDocuments;
  workspaceRoot: vscode.Uri;
  openRun(runId: string): Promise<unknown>;
  exportRun(runId: string): Promise<unknown>;
  revealInTree(runId: string): Promise<void>;
}): RunViewEditor {
  return {
    openCheckpoint: (runId, seq) => openCheckpointDocument(runId, seq),
    openRun: (runId) => d.openRun(runId),
    exportRun: (runId) => d.exportRun(runId),
    revealInTree: (runId) => d.revealInTree(runId),
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
      const args =
        approval?.decision?.kind === 'approve_edited'
          ? (approval.decision.arguments as Record<string, unknown>)
          : parseToolArgs(call.function.arguments);
      if (!args) throw new Error(`${toolCallId} of run ${runId} has no arguments to show as an edit`);
      await d.proposed.showEdit({ runId, toolCallId, toolName: call.function.name, args });
    },
  };
}
