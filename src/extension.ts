import type * as vscode from 'vscode';
import { ExtensionRoot } from './root';

let root: ExtensionRoot | undefined;

export function activate(context: vscode.ExtensionContext): ExtensionRoot['api'] {
  root = new ExtensionRoot(context);
  context.subscriptions.push(root);
  return root.api;
}

export async function deactivate(): Promise<void> {
  const r = root;
  root = undefined;
  await r?.shutdown();
}
