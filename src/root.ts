import * as vscode from 'vscode';
import { registerApiKeyCommands } from './commands/apiKey';
import { CommandIds } from './commands/ids';
import { registerCommand } from './commands/register';
import { DisposableStore } from './lifecycle';

/** What the extension returns from activate(); used by the in-host tests. */
export interface ExtensionApi {
  /** Folder of this workspace's checkpoint storage, or undefined when no folder is open. */
  readonly storageDir: string | undefined;
  /** Extension host process id (tests use it to simulate a crash). */
  readonly pid: number;
}

/**
 * The composition root: builds every service once, owns every disposable,
 * disposes them in reverse order. extension.ts stays a two-liner around it.
 */
export class ExtensionRoot extends DisposableStore {
  readonly api: ExtensionApi;
  readonly log: vscode.LogOutputChannel;

  constructor(context: vscode.ExtensionContext) {
    super();
    this.log = this.register(vscode.window.createOutputChannel('Agent Waypoints', { log: true }));
    const storageDir = context.storageUri?.fsPath;
    this.api = { storageDir, pid: process.pid };
    this.log.info(`activated (storage: ${storageDir ?? 'none, no folder open'})`);

    this.register(registerApiKeyCommands(context.secrets, this.log));
    this.register(registerCommand(CommandIds.showLog, () => this.log.show()));
  }

  /** Called from deactivate(): bounded flush of pending work, then dispose. */
  async shutdown(): Promise<void> {
    this.dispose();
  }
}
