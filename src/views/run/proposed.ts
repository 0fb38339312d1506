// "Show diff" for write_file / edit_file approvals: VS Code's diff editor between the file on
// disk and what the tool call would write. The proposed side is a read-only virtual document.
import * as vscode from 'vscode';
import type { Approval } from '../../store/api/schema';

export const PROPOSED_SCHEME = 'agent-waypoints-proposed';

/** The proposed text of a write/edit approval, or an explanation when it cannot be computed. */
export async function proposedContent(
  workspaceRoot: vscode.Uri,
  approval: Approval,
): Promise<{ path: string; current: string | null; proposed: string }> {
  const args = (
    approval.decision?.kind === 'approve_edited' ? approval.decision.arguments : approval.arguments
  ) as Record<string, unknown>;
  const path = String(args.path ?? '');
  const uri = vscode.Uri.joinPath(workspaceRoot, path);
  let current: string | null = null;
  try {
    current = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    current = null; // a new file
  }
  if (approval.tool_name === 'write_file') return { path, current, proposed: String(args.content ?? '') };
  const oldText = String(args.old_text ?? '');
  const newText = String(args.new_text ?? '');
  if (current === null) return { path, current, proposed: `// ${path} does not exist: edit_file would fail.` };
  const at = current.indexOf(oldText);
  if (at < 0 || oldText === '')
    return {
      path,
      current,
      proposed: `// The text to replace was not found in ${path}: edit_file would fail.\n${current}`,
    };
  return { path, current, proposed: current.slice(0, at) + newText + current.slice(at + oldText.length) };
}

/** Serves proposed contents by key; entries live as long as the extension. */
export class ProposedDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, string>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.path) ?? '';
  }

  async showDiff(workspaceRoot: vscode.Uri, approval: Approval): Promise<void> {
    const { path, current, proposed } = await proposedContent(workspaceRoot, approval);
    const key = `/${approval.run_id}/${approval.tool_call_id}/${path.replace(/^\/+/, '')}`;
    this.docs.set(key, proposed);
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: key });
    const left =
      current === null
        ? vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `${key}.empty` })
        : vscode.Uri.joinPath(workspaceRoot, path);
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
