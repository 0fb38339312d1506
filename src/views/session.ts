// What the user sees of runs executing in this window: a status bar item (state, step, a spinner
// while the model works), approval panels that open when a call needs a decision, and one
// notification when a run finishes or pauses, with the next action on it.
import * as vscode from 'vscode';
import type { RunOutcome } from '../runner/loop';
import type { AgentRunner, RunHandle } from '../runner/runner';
import type { RunState } from '../store/api/schema';
import { CommandIds } from '../commands/ids';
import type { ApprovalPanels } from './approval/panel';
import { ContextKeys } from './contextValues';

export class RunSessions implements vscode.Disposable {
  private readonly status = vscode.window.createStatusBarItem('agentWaypoints.activeRun', vscode.StatusBarAlignment.Left, 50);
  private readonly activity = new Map<string, string>();
  private readonly titles = new Map<string, string>();
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly runner: AgentRunner,
    private readonly panels: ApprovalPanels,
    private readonly log: vscode.LogOutputChannel,
    private readonly runTitle: (runId: string) => Promise<string>,
  ) {
    this.status.name = 'Agent Waypoints: active run';
    this.status.command = 'agentWaypoints.runs.focus';
    this.subscription = runner.events.on((e) => {
      switch (e.type) {
        case 'llm':
          this.setActivity(e.runId, e.status === 'start' ? `$(sync~spin) Agent: step ${e.step}, waiting for the model` : `$(pulse) Agent: step ${e.step}`);
          break;
        case 'tool':
          this.setActivity(e.runId, e.status === 'start' ? `$(tools) Agent: step ${e.step}, ${e.toolName}` : `$(pulse) Agent: step ${e.step}`);
          break;
        case 'approval-requested':
          this.panels.show(e.runId);
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
          void vscode.commands.executeCommand('setContext', ContextKeys.hasActiveRun, this.runner.activeRunIds().length > 0);
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
          this.log.info(`[${e.runId}] ${e.toolName} ${e.toolCallId}: result replayed from the effect journal (not run again)`);
          break;
        case 'approval-decided':
          this.log.info(`[${e.runId}] ${e.approval.tool_name} ${e.approval.tool_call_id}: ${e.approval.decision?.kind}`);
          break;
      }
    });
  }

  /** Shows a run started or resumed from a command in the status bar until its first event. */
  track(handle: RunHandle, title: string): void {
    this.titles.set(handle.runId, title);
    this.setActivity(handle.runId, `$(sync~spin) Agent: ${title}`);
    void vscode.commands.executeCommand('setContext', ContextKeys.hasActiveRun, true);
  }

  private async notify(runId: string, state: RunState, detail: string | null, finalText: string | null): Promise<void> {
    const title = this.titles.get(runId) ?? (await this.runTitle(runId));
    const run = `“${title}”`;
    switch (state) {
      case 'completed': {
        const text = (finalText ?? '').trim();
        const pick = await vscode.window.showInformationMessage(
          `Agent run ${run} completed${text ? `: ${text.length > 160 ? `${text.slice(0, 157)}…` : text}` : '.'}`,
          'Show result',
        );
        if (pick) await this.showResult(runId);
        return;
      }
      case 'awaiting_approval':
        // The panel opens on its own (approval-requested); the notification is for a hidden panel.
        if (this.panels.get(runId)?.panel.visible) return;
        if (await vscode.window.showInformationMessage(`Agent run ${run} is waiting for your approval.`, 'Show approvals')) this.panels.show(runId);
        return;
      case 'interrupted':
        return; // the window is closing; the next activation offers to resume
      case 'failed':
        void vscode.window.showErrorMessage(`Agent run ${run} failed. ${detail ?? ''}`);
        return;
      default: {
        const show = state === 'paused_error' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
        const pick = await show(`Agent run ${run}: ${detail ?? state}`, 'Resume', 'Show log');
        if (pick === 'Resume') await vscode.commands.executeCommand(CommandIds.resumeRun, runId);
        if (pick === 'Show log') this.log.show();
      }
    }
  }

  /** Shows a finished run's stored result (resume of a terminal run executes nothing). */
  async showResult(runId: string): Promise<void> {
    const outcome = await (await this.runner.resume(runId)).done;
    if (!outcome.terminalResult) {
      const finished = outcome.state === 'completed' || outcome.state === 'failed';
      void vscode.window.showInformationMessage(finished ? `Agent run ${runId} finished (${outcome.state}). ${outcome.detail ?? ''}` : `Agent run ${runId} has not finished (${outcome.state}).`);
      return;
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: resultMarkdown(outcome) });
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** A command from before a crash is still running: the run waits for it; the user may end it. */
  private async offerKill(runId: string, detail: string): Promise<void> {
    const run = await this.runTitle(runId).catch(() => runId);
    const pick = await vscode.window.showWarningMessage(`Agent run ${run}: ${detail}`, 'Kill it', 'Keep waiting');
    if (pick === 'Kill it' && !this.runner.killLeftovers(runId)) void vscode.window.showInformationMessage('It has finished already.');
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

export function resultMarkdown(o: RunOutcome): string {
  const r = o.terminalResult;
  const cost = r?.total_cost_usd === null || r === null ? 'unknown' : `$${r.total_cost_usd.toFixed(4)}`;
  return [
    `# Agent run result`,
    '',
    o.finalText ?? '',
    '',
    '---',
    r ? `State: ${r.state} · steps ${r.steps} · LLM calls ${r.llm_calls} · tool calls ${r.tool_calls} · tokens ${r.usage.total_tokens} · cost ${cost}` : '',
    r && r.replayed_effect_count > 0 ? `Effects replayed from the journal on resume: ${r.replayed_effect_count}` : '',
    '',
    `Run \`${o.runId}\` — the stored result; nothing was executed to show it.`,
  ].join('\n');
}
