// Browsing checkpoints: open one as a read-only JSON document, page through long chains, refresh.
import * as vscode from 'vscode';
import { checkpointUri } from '../views/checkpointDocument';
import { checkpointOf, pickCheckpoint, pickRun, runIdOf } from '../views/pickers';
import type { CommandContext } from './context';
import { CommandIds } from './ids';
import { registerCommand } from './register';

export function registerCheckpointCommands(c: CommandContext): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.openCheckpoint, async (arg?: unknown) => {
      let target = checkpointOf(arg);
      if (!target) {
        const run = await pickRun(c.model, arg, {
          title: 'Open checkpoint',
          placeHolder: 'Of which run?',
          empty: 'Agent Waypoints: there are no runs.',
        });
        if (!run) return undefined;
        const record = await pickCheckpoint(c.store, run.run_id, `Checkpoints of “${run.title}”`);
        if (!record) return undefined;
        target = { runId: record.run_id, seq: record.seq };
      }
      const doc = await vscode.workspace.openTextDocument(checkpointUri(target.runId, target.seq));
      await vscode.languages.setTextDocumentLanguage(doc, 'json');
      await vscode.window.showTextDocument(doc, { preview: true });
      return doc.uri.toString();
    }),
    registerCommand(CommandIds.loadMoreCheckpoints, async (arg?: unknown) => {
      const runId = runIdOf(arg);
      if (runId) await c.model.loadMore(runId);
    }),
    // Re-reads the storage too: another window on this workspace may have created or advanced runs.
    registerCommand(CommandIds.refreshRuns, async () => {
      await c.store.rescan();
      await c.model.reload();
    }),
  );
}
