// Export a run to one validated JSON file, and import it back (here or in another workspace).
import * as vscode from 'vscode';
import { errorMessage } from '../runner/errors';
import { pickRun } from './pickers';
import type { CommandContext } from './context';
import { CommandIds } from '../contributes';
import type { RunSummary } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import { registerCommand } from './register';

export function registerTransferCommands(c: CommandContext): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.exportRun, async (arg?: unknown, target?: vscode.Uri) => {
      const run = await pickRun(c.model, arg, {
        title: 'Export agent run',
        placeHolder: 'Which run?',
        empty: 'Agent Waypoints: there are no runs.',
      });
      return run ? exportRun(c.store, run, target) : undefined;
    }),
    registerCommand(CommandIds.importRun, async (source?: vscode.Uri) => {
      const uri =
        source ??
        (
          await vscode.window.showOpenDialog({
            title: 'Import agent run',
            canSelectMany: false,
            filters: { 'Agent Waypoints run': ['json'] },
          })
        )?.[0];
      if (!uri) return undefined;
      return vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Importing agent run…' },
        async () => {
          try {
            const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
            let data: unknown;
            try {
              data = JSON.parse(text);
            } catch (err) {
              throw new Error(`${uri.fsPath} is not JSON (${errorMessage(err)}).`);
            }
            const run = await c.store.importRun(data, c.runner.owner);
            await c.model.reload();
            // What the import reset (decisions made elsewhere) is said here and in the run view.
            const notes = run.imported?.notes ?? [];
            void vscode.window.showInformationMessage(
              [`Imported “${run.title}” (${run.last_seq} checkpoints).`, ...notes].join(' '),
            );
            c.log.info(`imported run ${run.run_id} from ${uri.fsPath}${notes.length ? `: ${notes.join(' ')}` : ''}`);
            return run.run_id;
          } catch (err) {
            void vscode.window.showErrorMessage(
              `Agent Waypoints: import failed, nothing was changed: ${errorMessage(err)}`,
            );
            return undefined;
          }
        },
      );
    }),
  );
}

/** Writes the run to `target`, or to where the save dialog says (the command, the run view's Export); the path written, or undefined. */
export async function exportRun(
  store: CheckpointStore,
  run: RunSummary,
  target?: vscode.Uri,
): Promise<string | undefined> {
  const uri =
    target ??
    (await vscode.window.showSaveDialog({
      title: `Export “${run.title}”`,
      defaultUri: vscode.Uri.joinPath(
        vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file('/'),
        `${run.run_id}.waypoints.json`,
      ),
      filters: { 'Agent Waypoints run': ['json'] },
    }));
  if (!uri) return undefined;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Exporting “${run.title}”…` },
    async () => {
      try {
        const data = await store.exportRun(run.run_id);
        await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(JSON.stringify(data)));
        void vscode.window.showInformationMessage(`Exported “${run.title}” to ${uri.fsPath}.`);
        return uri.fsPath;
      } catch (err) {
        void vscode.window.showErrorMessage(`Agent Waypoints: export failed: ${errorMessage(err)}`);
        return undefined;
      }
    },
  );
}
