// VS Code's file watcher as the command scan's hint source (runner/fileJournal/watcher.ts). The workspace
// folder's recursive watcher reports creates, changes and deletes, but not everything: it leaves
// out files.watcherExclude (so the scan stats those files every time), it drops events when too
// many come at once, and it says nothing about that through the API — which is why the scan trusts
// it only to pick what to stat *before* a command, and stats every file after one.
import * as vscode from 'vscode';
import { Emitter } from './common/emitter';
import type { WatchEvent, WorkspaceWatcher } from './runner/fileJournal/watcher';
import { enabledExcludes } from './runner/tools/finder/excludes';

export function watchWorkspaceFolder(folder: vscode.WorkspaceFolder): WorkspaceWatcher {
  const events = new Emitter<WatchEvent>();
  const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**'));
  const changed = (uri: vscode.Uri) => {
    if (uri.scheme === 'file') events.emit({ kind: 'changed', path: uri.fsPath });
  };
  const subs = [watcher.onDidCreate(changed), watcher.onDidChange(changed), watcher.onDidDelete(changed)];
  return {
    onEvent: (listener) => events.on(listener),
    unwatched: () =>
      enabledExcludes(vscode.workspace.getConfiguration('files', folder.uri).get<unknown>('watcherExclude')),
    dispose: () => {
      for (const s of subs) s.dispose();
      watcher.dispose();
      events.dispose();
    },
  };
}
