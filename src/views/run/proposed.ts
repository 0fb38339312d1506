// "Show diff" for write_file / edit_file approvals: VS Code's diff editor between the file on
// disk the tool would write (found by the tools' own resolver, proposedContent.ts) and what the
// tool call would write. The proposed side is a read-only virtual document.
import * as vscode from 'vscode';
import type { Approval } from '../../store/api/schema';
import { proposedContent } from './proposedContent';

export const PROPOSED_SCHEME = 'agent-waypoints-proposed';

/** Serves proposed contents by key; entries live as long as the extension. */
export class ProposedDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);

  /** `storageDir`: the extension's own storage folder, which no tool writes (paths.ts). */
  constructor(private readonly opts: { storageDir?: string } = {}) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.path) ?? '';
  }

  async showDiff(workspaceRoot: vscode.Uri, approval: Approval): Promise<void> {
    const { path, abs, current, proposed } = await proposedContent(workspaceRoot.fsPath, approval, this.opts);
    const key = `/${approval.run_id}/${approval.tool_call_id}/${path.replace(/^\/+/, '')}`;
    this.docs.set(key, proposed);
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: key });
    const left =
      current === null || abs === null
        ? vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `${key}.empty` })
        : vscode.Uri.file(abs);
    await vscode.commands.executeCommand(
      'vscode.diff',
      left,
      right,
      `${path} ↔ proposed by ${approval.tool_name} (${approval.tool_call_id})`,
      {
        preview: true,
        // Beside the approval panel, so the change and the decision are on screen together.
        viewColumn: vscode.ViewColumn.Beside,
      },
    );
  }

  /** An edit that already ran (or runs without asking): its own before and after, side by side. */
  async showEdit(call: {
    runId: string;
    toolCallId: string;
    toolName: string;
    args: Record<string, unknown>;
  }): Promise<void> {
    const path = String(call.args.path ?? 'file');
    const before = call.toolName === 'edit_file' ? String(call.args.old_text ?? '') : '';
    const after = call.toolName === 'edit_file' ? String(call.args.new_text ?? '') : String(call.args.content ?? '');
    const key = `/${call.runId}/${call.toolCallId}/${path.replace(/^\/+/, '')}`;
    this.docs.set(`${key}.before`, before);
    this.docs.set(`${key}.after`, after);
    const uri = (p: string) => vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: p });
    await vscode.commands.executeCommand(
      'vscode.diff',
      uri(`${key}.before`),
      uri(`${key}.after`),
      `${path}: ${call.toolName} (${call.toolCallId})`,
      {
        preview: true,
        viewColumn: vscode.ViewColumn.Beside,
      },
    );
  }

  dispose(): void {
    this.registration.dispose();
    this.docs.clear();
  }
}
