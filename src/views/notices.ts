// The actions' Notices (actions/ports.ts) in VS Code: notifications, a modal question, a quick
// pick, an input box. The wording is the actions'; this file only shows it. A choice or a line of
// input is a step of a longer action (a fork's "with files?", a rejection's reason): it stays open
// when the focus moves (ignoreFocusOut), so what the user chose before it is not lost — as the
// question before it closes, VS Code gives the focus back to the editor, and a webview there (the
// run view) takes it a moment later, which would close the next question on a loaded machine. Escape
// still cancels.
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
        { ...o, ignoreFocusOut: true },
      );
      return picked?.choice.value;
    },
    input: async (o) =>
      vscode.window.showInputBox({
        title: o.title,
        prompt: o.prompt,
        value: o.value,
        validateInput: o.validate,
        ignoreFocusOut: true,
      }),
  };
}
