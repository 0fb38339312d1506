// What a restore needs from VS Code (actions/ports.ts RestoreEditor): the workspace files open with
// unsaved changes (the plan keeps them as conflicts: a restore never writes under an editor's
// unsaved text), the preview quick pick, and a restore record as a Markdown document.
import path from 'node:path';
import * as vscode from 'vscode';
import type { RestoreEditor } from '../../actions/ports';
import { previewRestore, type VersionDocuments } from './preview';
import { restoreMarkdown } from './summary';

export function vscodeRestoreEditor(d: { workspaceRoot: vscode.Uri; versions: VersionDocuments }): RestoreEditor {
  return {
    dirtyPaths: () => dirtyPaths(d.workspaceRoot.fsPath),
    preview: (plan, o) => previewRestore(plan, { ...o, workspaceRoot: d.workspaceRoot, versions: d.versions }),
    async showDetails(record, o) {
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: restoreMarkdown(record) });
      await vscode.window.showTextDocument(doc, {
        preview: true,
        ...(o?.beside ? { viewColumn: vscode.ViewColumn.Beside } : {}),
      });
    },
  };
}

/** Workspace files open with unsaved changes, relative and '/'-separated. */
function dirtyPaths(root: string): Set<string> {
  const out = new Set<string>();
  for (const d of vscode.workspace.textDocuments) {
    if (!d.isDirty || d.uri.scheme !== 'file') continue;
    const rel = path.relative(root, d.uri.fsPath);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) out.add(rel.split(path.sep).join('/'));
  }
  return out;
}
