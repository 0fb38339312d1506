// The actions' Notices (actions/ports.ts) in VS Code: notifications, a modal question, a quick
// pick, an input box. The wording is the actions'; this file only shows it.
import * as vscode from 'vscode';
import type { Choice, Notices } from '../actions/ports';

export function vscodeNotices(): Notices {
  return {
    info: async (text, ...buttons) => vscode.window.showInformationMessage(text, ...buttons),
    warn: async (text, ...buttons) => vscode.window.showWarningMessage(text, ...buttons),
    error: (text) => void vscode.window.showErrorMessage(text),
    confirm: async (text, detail, ...buttons) =>
      vscode.window.showWarningMessage(text, { modal: true, detail }, ...buttons),
    async choose<T>(choices: readonly Choice<T>[], o: { title: string; placeHolder: string }) {
      const picked = await vscode.window.showQuickPick(
        choices.map((c) => ({ label: c.label, detail: c.detail, choice: c })),
        o,
      );
      return picked?.choice.value;
    },
    input: async (o) =>
      vscode.window.showInputBox({ title: o.title, prompt: o.prompt, value: o.value, validateInput: o.validate }),
  };
}
