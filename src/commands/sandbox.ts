// The palette's sandbox commands: choose how this workspace approves commands (auto in sandbox,
// ask, auto, deny, or the user's setting), and *Check sandbox* — what this machine has for the
// sandbox, what is missing and the line that installs it, in an output channel and a notification.
import * as vscode from 'vscode';
import { type CommandApproval, MODE_LABELS } from '../commandApproval';
import { CommandIds } from '../contributes';
import { describeCheck } from '../runner/sandbox';
import type { CommandMode } from '../runner/tools/policy';
import { registerCommand } from './register';

const DESCRIPTIONS: Record<CommandMode, string> = {
  sandbox: 'Any command runs without asking, inside the OS sandbox; what it blocks asks',
  ask: 'Every command asks (the allow list runs without asking)',
  auto: 'Every command runs without asking, outside any sandbox',
  deny: 'No command runs',
};

export function registerSandboxCommands(
  approval: CommandApproval,
  channel: () => vscode.OutputChannel,
): vscode.Disposable {
  return vscode.Disposable.from(
    registerCommand(CommandIds.chooseCommandApproval, () => chooseCommandApproval(approval)),
    registerCommand(CommandIds.checkSandbox, () => checkSandboxCommand(approval, channel())),
  );
}

async function chooseCommandApproval(approval: CommandApproval): Promise<void> {
  const current = approval.choice();
  type Item = vscode.QuickPickItem & { mode: CommandMode | undefined };
  const items: Item[] = (Object.keys(DESCRIPTIONS) as CommandMode[]).map((mode) => ({
    mode,
    label: MODE_LABELS[mode],
    detail: DESCRIPTIONS[mode],
    ...(current === mode ? { description: '(this workspace)' } : {}),
  }));
  items.push({ mode: undefined, label: 'Use my user setting', detail: 'agentWaypoints.approval.command' });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Command approval for this workspace',
    placeHolder: `Now: ${approval.line().label}`,
  });
  if (!picked) return;
  await approval.choose(picked.mode);
  if (picked.mode !== 'sandbox')
    return void vscode.window.showInformationMessage(`Agent Waypoints: ${approval.line().label}.`);
  const check = await approval.probe();
  if (check.available) void vscode.window.showInformationMessage(`Agent Waypoints: ${approval.line().label}.`);
  else
    void vscode.window
      .showWarningMessage(
        `Agent Waypoints: the sandbox is not available here, so commands ask: ${check.problems[0] ?? 'it did not start'}`,
        'Check sandbox',
      )
      .then((b) => b && vscode.commands.executeCommand(CommandIds.checkSandbox));
}

async function checkSandboxCommand(approval: CommandApproval, channel: vscode.OutputChannel): Promise<void> {
  const check = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Agent Waypoints: checking the sandbox…' },
    () => approval.probe(),
  );
  channel.clear();
  channel.appendLine(describeCheck(check));
  const buttons = [...(check.install ? ['Copy install command'] : []), 'Show details'];
  const message = check.available
    ? `Agent Waypoints: the sandbox works here (${check.probe?.ms ?? '?'} ms to start a command).`
    : `Agent Waypoints: no sandbox here, commands ask. ${check.problems[0] ?? ''}`;
  const show = check.available ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const picked = await show(message, ...buttons);
  if (picked === 'Copy install command' && check.install) await vscode.env.clipboard.writeText(check.install);
  if (picked === 'Show details') channel.show(true);
}
