// Set API key / Clear API key / Forget where the API key may go. The key is typed by the user in a
// password box and bound to the origin of the base URL in effect; no command takes the key as an
// argument (any extension can run a command). Tests set it through ApiKeys (apiKeysForTests).
import * as vscode from 'vscode';
import { redactUrl } from '../common/redact';
import type { ApiKeys } from '../models/apiKeys';
import { originOf } from '../runner/provider/keyOrigin';
import { readBaseUrl } from '../settings';
import { CommandIds } from '../contributes';
import { registerCommand } from './register';

export function registerApiKeyCommands(keys: ApiKeys, log: vscode.LogOutputChannel): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.setApiKey, () => setApiKey(keys, log)),
    registerCommand(CommandIds.clearApiKey, async () => {
      await keys.clear();
      log.info('API key removed from SecretStorage; remembered origins forgotten.');
      void vscode.window.showInformationMessage('Agent Waypoints: API key cleared.');
      return true;
    }),
    registerCommand(CommandIds.forgetKeyOrigins, (origins?: unknown) => forgetOrigins(keys, log, origins)),
  );
}

async function setApiKey(keys: ApiKeys, log: vscode.LogOutputChannel): Promise<boolean> {
  const setting = readBaseUrl();
  const origin = originOf(setting.value);
  if (origin === null) {
    void vscode.window.showErrorMessage(
      `Agent Waypoints: the base URL ${redactUrl(setting.value)} is not a valid URL; fix agentWaypoints.provider.baseUrl first.`,
    );
    return false;
  }
  const fromWorkspace = setting.source === 'workspace' || setting.source === 'folder';
  const key = await vscode.window.showInputBox({
    title: `Agent Waypoints: API key for ${origin}`,
    prompt:
      `Sent to ${origin} only${fromWorkspace ? ' (the base URL this workspace’s settings name)' : ''}. ` +
      'Stored in VS Code SecretStorage only; never in settings, checkpoints or logs.',
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() === '' ? 'Enter a key, or press Escape to cancel.' : undefined),
  });
  if (key === undefined || key.trim() === '') return false;
  await keys.set(key.trim(), origin);
  log.info(`API key stored in SecretStorage, for ${origin}.`);
  void vscode.window.showInformationMessage(`Agent Waypoints: API key saved in SecretStorage, for ${origin}.`);
  return true;
}

/** Forgets remembered answers: the origins given (forgetting only makes it ask again), or those picked. */
async function forgetOrigins(keys: ApiKeys, log: vscode.LogOutputChannel, arg: unknown): Promise<number> {
  const grants = keys.grants();
  let origins: string[];
  if (Array.isArray(arg)) origins = arg.filter((o): o is string => typeof o === 'string' && o in grants);
  else {
    const items = Object.entries(grants).map(([origin, grant]) => ({
      label: origin,
      description: grant === 'allow' ? 'the key is sent there' : 'the key is not sent there',
    }));
    if (items.length === 0) {
      void vscode.window.showInformationMessage('Agent Waypoints: no answers about other origins are remembered.');
      return 0;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Forget where the API key may go',
      placeHolder: 'Pick the origins to be asked about again',
      canPickMany: true,
    });
    origins = (picked ?? []).map((p) => p.label);
  }
  if (origins.length === 0) return 0;
  await keys.forget(origins);
  log.info(`API key: forgot the answers for ${origins.join(', ')}.`);
  return origins.length;
}
