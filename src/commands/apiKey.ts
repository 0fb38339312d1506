import * as vscode from 'vscode';
import { CommandIds } from './ids';
import { registerCommand } from './register';

/** The SecretStorage key. The API key lives there and nowhere else (never settings, checkpoints or logs). */
export const API_KEY_SECRET = 'agentWaypoints.apiKey';

export function registerApiKeyCommands(secrets: vscode.SecretStorage, log: vscode.LogOutputChannel): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.setApiKey, async (value?: string) => {
      const key =
        typeof value === 'string'
          ? value
          : await vscode.window.showInputBox({
              title: 'Agent Waypoints: API key',
              prompt: 'Stored in VS Code SecretStorage only; never in settings, checkpoints or logs.',
              password: true,
              ignoreFocusOut: true,
              validateInput: (v) => (v.trim() === '' ? 'Enter a key, or press Escape to cancel.' : undefined),
            });
      if (key === undefined || key.trim() === '') return false;
      await secrets.store(API_KEY_SECRET, key.trim());
      log.info('API key stored in SecretStorage.');
      void vscode.window.showInformationMessage('Agent Waypoints: API key saved in SecretStorage.');
      return true;
    }),
    registerCommand(CommandIds.clearApiKey, async () => {
      await secrets.delete(API_KEY_SECRET);
      log.info('API key removed from SecretStorage.');
      void vscode.window.showInformationMessage('Agent Waypoints: API key cleared.');
      return true;
    }),
  );
}
