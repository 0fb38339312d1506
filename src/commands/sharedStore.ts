// The shared run store's two commands: "Connect a shared run store…" (checks the connection and
// the schema, says exactly what is wrong; keeps the connection string in SecretStorage only) and
// "Copy local runs to the shared store" (idempotent, through the export format).
import * as vscode from 'vscode';
import { errorMessage } from '../common/errors';
import type { OwnerInfo } from '../store/api/types';
import { checkSharedStore, type CombinedStore, type SharedStoreCheck } from '../store';
import { identityOf, readStoreSettings, SHARED_STORE_SECRET, tlsOptions } from '../storeChoice';
import type { RunsTreeModel } from '../views/runs/treeModel';
import { CommandIds } from '../contributes';
import { registerCommand } from './register';

export interface SharedStoreDeps {
  secrets: vscode.SecretStorage;
  log: vscode.LogOutputChannel;
  workspaceRoot: string;
  /** The combined store when this window already uses the shared one (copy needs it). */
  combined: CombinedStore | undefined;
  model: RunsTreeModel;
  owner: OwnerInfo;
}

/** What the connect command did (its result, for tests and for callers). */
export type ConnectOutcome = { connected: true; check: SharedStoreCheck } | { connected: false; problems: string[] };

export function registerSharedStoreCommands(d: SharedStoreDeps): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.connectSharedStore, (url?: string) => connect(d, url)),
    registerCommand(CommandIds.copyRunsToSharedStore, () => copy(d)),
  );
}

async function connect(d: SharedStoreDeps, given?: string): Promise<ConnectOutcome | undefined> {
  const url =
    typeof given === 'string'
      ? given
      : await vscode.window.showInputBox({
          title: 'Agent Waypoints: connect a shared run store (PostgreSQL)',
          prompt:
            'The connection string is kept in VS Code SecretStorage only; never in settings, checkpoints or logs.',
          placeHolder: 'postgresql://user:password@host:5432/database?sslmode=require',
          password: true,
          ignoreFocusOut: true,
          validateInput: (v) => (v.trim() === '' ? 'Enter a connection string, or press Escape to cancel.' : undefined),
        });
  if (url === undefined || url.trim() === '') return undefined;
  const settings = readStoreSettings();
  let problems: string[];
  let check: SharedStoreCheck | undefined;
  try {
    const id = await identityOf(d.workspaceRoot, settings);
    check = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Checking the shared run store…' },
      () => checkSharedStore({ connectionString: url.trim(), ssl: tlsOptions(settings.tls), workspace: id.id }),
    );
    problems = check.problems;
  } catch (err) {
    problems = [errorMessage(err)];
  }
  if (!check || problems.length > 0) {
    d.log.warn(`shared run store: not connected: ${problems.join(' ')}`);
    void vscode.window.showErrorMessage(`Agent Waypoints: the shared run store cannot be used. ${problems.join(' ')}`);
    return { connected: false, problems };
  }
  await d.secrets.store(SHARED_STORE_SECRET, url.trim());
  await vscode.workspace
    .getConfiguration('agentWaypoints.store')
    .update('kind', 'postgres', vscode.ConfigurationTarget.Workspace);
  d.log.info(`shared run store: connected to ${check.target}; ${check.notes.join(' ')}`);
  void vscode.window
    .showInformationMessage(
      `Agent Waypoints: shared run store ready (${check.target}). ${check.notes.join(' ')} Reload the window to use it.`,
      'Reload Window',
    )
    .then((pick) => pick && vscode.commands.executeCommand('workbench.action.reloadWindow'));
  return { connected: true, check };
}

async function copy(d: SharedStoreDeps) {
  const combined = d.combined;
  if (!combined || combined.state.kind !== 'connected') {
    const why = combined
      ? 'it is not reachable right now'
      : 'this window does not use one yet (run “Connect a shared run store…”)';
    void vscode.window.showErrorMessage(`Agent Waypoints: cannot copy runs to the shared store: ${why}.`);
    return undefined;
  }
  const report = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: 'Copying local runs to the shared store',
      cancellable: false,
    },
    (p) => combined.copyLocalToShared(d.owner, (done, total) => p.report({ message: `${done}/${total}` })),
  );
  await d.model.reload();
  const failed = report.failed.map((f) => `“${f.title}”: ${f.error}`).join('; ');
  const text = `Copied ${report.copied.length} run(s) to the shared store; ${report.already.length} were there already.${failed ? ` Not copied: ${failed}` : ''} The local copies stay on this machine.`;
  d.log.info(`shared run store: ${text}`);
  void (failed ? vscode.window.showWarningMessage(text) : vscode.window.showInformationMessage(text));
  return report;
}
