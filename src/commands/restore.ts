// "Restore files to checkpoint…" (tree, palette): picks the checkpoint and calls the restore action
// (actions/restore/action.ts), which asks whether to rewind the conversation too (a fork) and always
// shows the preview. Arguments: a checkpoint node, or { runId, seq }, and { rewind }. Nothing passed
// to the command can skip the preview (any extension can call a command).
import type * as vscode from 'vscode';
import { CommandIds } from '../contributes';
import type { CommandContext } from './context';
import { pickCheckpointTarget } from './pickers';
import { registerCommand } from './register';

export interface RestoreCommandOptions {
  /** Also fork the conversation from the checkpoint (asked when absent). The preview is shown either way. */
  rewind?: boolean;
}

export function registerRestoreCommands(c: CommandContext): vscode.Disposable {
  return registerCommand(CommandIds.restoreFiles, async (arg?: unknown, opts?: RestoreCommandOptions) => {
    const target = await pickCheckpointTarget(c, arg, {
      title: 'Restore files to a checkpoint',
      placeHolder: 'Of which run?',
      checkpointTitle: (run) => `Restore the files “${run.title}” changed to…`,
    });
    if (!target) return undefined;
    // Only a boolean `rewind` is read from the caller's options; anything else in them is ignored.
    return c.actions.restore.run(target, typeof opts?.rewind === 'boolean' ? { rewind: opts.rewind } : {});
  });
}
