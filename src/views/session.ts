// What the user sees of runs executing in this window: a status bar item (state, step, a spinner
// while the model works), the run view (opened when a run starts or resumes, and at its first
// pending approval when a call needs a decision), and one notification when a run finishes or
// pauses, whose buttons open the run view or resume.
import * as vscode from 'vscode';
import type { OpenAt } from '../actions/ports';
import { ContextKeys, ViewIds } from '../contributes';
import type { AgentRunner, StartedRun } from '../runner/runner';
import type { RunState } from '../store/api/schema';
import type { RunViewPanels } from './run/panel';

export class RunSessions implements vscode.Disposable {
  private readonly status = vscode.window.createStatusBarItem(
    ViewIds.activeRunStatus,
    vscode.StatusBarAlignment.Left,
    50,
  );
  private readonly activity = new Map<string, string>();
  private readonly titles = new Map<string, string>();
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly runner: AgentRunner,
    private readonly panels: RunViewPanels,
    private readonly log: vscode.LogOutputChannel,
    private readonly runTitle: (runId: string) => Promise<string>,
    /** The Resume action (actions/resume.ts), for the notification's button. */
    private readonly resume: (runId: string) => Promise<unknown>,
  ) {
    this.status.name = 'Agent Waypoints: active run';
    this.status.command = ViewIds.focusRuns;
    this.subscription = runner.events.on((e) => {
      switch (e.type) {
        case 'llm':
          this.setActivity(
            e.runId,
            e.status === 'start'
              ? `$(sync~spin) Agent: step ${e.step}, waiting for the model`
              : `$(pulse) Agent: step ${e.step}`,
          );
          break;
        case 'tool':
          this.setActivity(
            e.runId,
            e.status === 'start' ? `$(tools) Agent: step ${e.step}, ${e.toolName}` : `$(pulse) Agent: step ${e.step}`,
          );
          break;
        case 'approval-requested':
          void this.panels.show(e.runId, { kind: 'firstPending' });
          break;
        case 'state':
          if (e.state === 'running') {
            this.setActivity(e.runId, this.activity.get(e.runId) ?? '$(sync~spin) Agent: working');
          } else {
            this.setActivity(e.runId, undefined);
            // One notification per outcome of a run this window executed (started, resumed, or
            // continued from the approval panel); a subagent's parent reports for it.
            if (!e.subagent) void this.notify(e.runId, e.state, e.detail, e.finalText ?? null);
          }
          void vscode.commands.executeCommand(
            'setContext',
            ContextKeys.hasActiveRun,
            this.runner.activeRunIds().length > 0,
          );
          break;
        case 'log':
          this.log[e.level](`${e.runId ? `[${e.runId}] ` : ''}${e.message}`);
          break;
        case 'phase':
          this.log.trace(`[${e.runId}] #${e.record.seq} ${e.record.phase} (step ${e.record.step})`);
          break;
        case 'leftovers':
          if (e.status === 'waiting' && e.detail) void this.offerKill(e.runId, e.detail);
          break;
        case 'effect-replayed':
          this.log.info(
            `[${e.runId}] ${e.toolName} ${e.toolCallId}: result replayed from the effect journal (not run again)`,
          );
          break;
        case 'approval-decided':
          this.log.info(
            `[${e.runId}] ${e.approval.tool_name} ${e.approval.tool_call_id}: ${e.approval.decision?.kind}`,
          );
          break;
      }
    });
  }

  /** Shows a run started or resumed from a command: its run view, and the status bar until its first event. */
  track(handle: StartedRun, title: string): void {
    this.titles.set(handle.runId, title);
    void this.panels.show(handle.runId);
    this.setActivity(handle.runId, `$(sync~spin) Agent: ${title}`);
    void vscode.commands.executeCommand('setContext', ContextKeys.hasActiveRun, true);
  }

  private async notify(runId: string, state: RunState, detail: string | null, finalText: string | null): Promise<void> {
    const title = this.titles.get(runId) ?? (await this.runTitle(runId));
    const open = (at?: OpenAt) => void this.panels.show(runId, at);
    const visible = this.panels.get(runId)?.panel.visible === true;
    const text = notificationText(title, state, detail, finalText);
    switch (state) {
      case 'completed':
        if ((await vscode.window.showInformationMessage(text, 'Open run')) === 'Open run') open();
        return;
      case 'awaiting_approval':
        // The view opens at the card by itself (approval-requested); the notification is for a hidden view.
        if (visible) return;
        if (await vscode.window.showInformationMessage(text, 'Show approvals')) open({ kind: 'firstPending' });
        return;
      case 'interrupted':
        return; // the window is closing; the next activation offers to resume
      case 'failed':
        if ((await vscode.window.showErrorMessage(text, 'Open run')) === 'Open run') open();
        return;
      default: {
        const show = state === 'paused_error' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
        const pick = await show(text, 'Resume', 'Open run', 'Show log');
        if (pick === 'Resume') await this.resume(runId);
        if (pick === 'Open run') open();
        if (pick === 'Show log') this.log.show();
      }
    }
  }

  /** A command from before a crash is still running: the run waits for it; the user may end it. */
  private async offerKill(runId: string, detail: string): Promise<void> {
    const run = await this.runTitle(runId).catch(() => runId);
    const pick = await vscode.window.showWarningMessage(`Agent run ${run}: ${detail}`, 'Kill it', 'Keep waiting');
    if (pick === 'Kill it' && !this.runner.killLeftovers(runId))
      void vscode.window.showInformationMessage('It has finished already.');
  }

  private setActivity(runId: string, text: string | undefined): void {
    if (text) this.activity.set(runId, text);
    else this.activity.delete(runId);
    const latest = [...this.activity.values()].at(-1);
    if (!latest) {
      this.status.hide();
      return;
    }
    this.status.text = this.activity.size > 1 ? `${latest} (+${this.activity.size - 1})` : latest;
    this.status.tooltip = 'Agent Waypoints: click to show the runs';
    this.status.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.status.dispose();
  }
}

/** The notification about a run's outcome. */
export function notificationText(
  title: string,
  state: RunState,
  detail: string | null,
  finalText: string | null,
): string {
  const run = `“${title}”`;
  switch (state) {
    case 'completed': {
      const text = (finalText ?? '').trim();
      return `Agent run ${run} completed${text ? `: ${text.length > 160 ? `${text.slice(0, 157)}…` : text}` : '.'}`;
    }
    case 'awaiting_approval':
      return `Agent run ${run} is waiting for your approval.`;
    case 'failed':
      return `Agent run ${run} failed. ${detail ?? ''}`.trim();
    default:
      return `Agent run ${run}: ${detail ?? state}`;
  }
}
