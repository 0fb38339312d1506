// "Check model connection": one small request to the model a run would use, and a message that says
// exactly what is wrong (the key, the model, tool calling, the base URL), with the next step on it.
import * as vscode from 'vscode';
import type { ModelRef } from '../runner/modelRef';
import { PROVIDER_ADAPTER } from '../runner/provider';
import type { CheckResult } from '../runner/provider/check';
import type { ModelProviders } from '../models/providers';
import type { Settings } from '../settings';
import { CommandIds } from '../contributes';
import { registerCommand } from './register';

export function registerModelCommands(
  models: ModelProviders,
  settings: () => Settings,
  log: vscode.LogOutputChannel,
): vscode.Disposable {
  return registerCommand(CommandIds.checkConnection, async (arg?: Partial<ModelRef>) => {
    const ref: ModelRef = { adapter: arg?.adapter ?? PROVIDER_ADAPTER, model: arg?.model ?? settings().model };
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent Waypoints: checking \`${ref.model}\`…` },
      () => models.check(ref),
    );
    (result.ok ? log.info : log.warn).call(log, `connection check (${ref.adapter} ${ref.model}): ${result.message}`);
    void report(result);
    return result;
  });
}

async function report(result: CheckResult): Promise<void> {
  if (result.ok) {
    void vscode.window.showInformationMessage(`Agent Waypoints: ${result.message}`);
    return;
  }
  const action = result.problem === 'auth' ? 'Set API key' : 'Open settings';
  const pick = await vscode.window.showErrorMessage(`Agent Waypoints: ${result.message}`, action);
  if (pick === 'Set API key') await vscode.commands.executeCommand(CommandIds.setApiKey);
  if (pick === 'Open settings')
    await vscode.commands.executeCommand('workbench.action.openSettings', 'agentWaypoints.provider');
}
