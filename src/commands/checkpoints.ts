// Browsing checkpoints: open one as a read-only JSON document, page through long chains, refresh.
import * as vscode from 'vscode';
import { CommandIds } from '../contributes';
import { openCheckpointDocument } from '../views/checkpointDocument';
import type { CommandContext } from './context';
import { pickCheckpointTarget, runIdOf } from './pickers';
import { registerCommand } from './register';

export function registerCheckpointCommands(c: CommandContext): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.openCheckpoint, async (arg?: unknown) => {
      const target = await pickCheckpointTarget(c, arg, {
        title: 'Open checkpoint',
        placeHolder: 'Of which run?',
        checkpointTitle: (run) => `Checkpoints of “${run.title}”`,
      });
      if (!target) return undefined;
      return (await openCheckpointDocument(target.runId, target.seq)).uri.toString();
    }),
    // The tree's "Load more…" nodes: a run's older steps, or (after the groups) older runs.
    registerCommand(CommandIds.loadMoreCheckpoints, async (arg?: unknown) => {
      if ((arg as { kind?: unknown } | undefined)?.kind === 'moreRuns') return c.model.loadMoreRuns();
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
