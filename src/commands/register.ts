import * as vscode from 'vscode';
import type { CommandId } from '../contributes';

/** Registers one command under its typed id. */
export function registerCommand(id: CommandId, fn: (...args: never[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, fn as (...args: unknown[]) => unknown);
}
