// The approval panel (host side): one webview panel per run listing its pending tool calls.
// Content always comes from the store. Every inbound message is parsed with protocol.ts; unknown,
// malformed or stale messages are rejected and logged — nothing executes without a matching
// pending approval (the runner re-checks id and input hash before writing any decision).
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { AgentRunner, DecisionInput } from '../../runner/runner';
import { errorMessage } from '../../runner/errors';
import { awaitingApprovalDetail } from '../../runner/loop';
import type { Approval, RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { type ApprovalView, type HostMessage, parseWebviewMessage, type WebviewMessage } from './protocol';
import type { ProposedDocuments } from './proposed';

export const APPROVAL_VIEW_TYPE = 'agentWaypoints.approvals';

export interface ApprovalPanelDeps {
  extensionUri: vscode.Uri;
  workspaceRoot: vscode.Uri;
  store: CheckpointStore;
  runner: AgentRunner;
  log: vscode.LogOutputChannel;
  proposed: ProposedDocuments;
  /** Why decisions cannot be made in this window right now (held elsewhere, restricted mode), or null. */
  readOnlyReason(runId: string): Promise<string | null>;
}

export class ApprovalPanels implements vscode.Disposable {
  private readonly panels = new Map<string, ApprovalPanel>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly deps: ApprovalPanelDeps) {
    this.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(APPROVAL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel, state: unknown) => {
          const runId = typeof state === 'object' && state !== null ? (state as { runId?: unknown }).runId : undefined;
          if (typeof runId !== 'string' || !(await deps.store.getRun(runId).catch(() => undefined))) {
            deps.log.info(`approval panel not restored: ${typeof runId === 'string' ? `run ${runId} no longer exists` : 'it kept no run id'}`);
            panel.dispose(); // nothing to restore: the run is gone or the state is not ours
            return;
          }
          deps.log.info(`approval panel of run ${runId} restored after a reload`);
          this.adopt(runId, panel);
        },
      }),
    );
    const refresh = (runId: string) => this.panels.get(runId)?.refresh();
    this.subscriptions.push(
      deps.runner.events.on((e) => {
        if (e.type === 'approval-requested' || e.type === 'approval-decided' || e.type === 'state') refresh(e.runId);
      }),
      deps.store.onEvent((e) => {
        if (e.kind === 'approval' || e.kind === 'run-updated' || e.kind === 'run-deleted') refresh(e.run_id);
      }),
    );
  }

  /** Opens (or reveals) the panel of a run. */
  show(runId: string): ApprovalPanel {
    const existing = this.panels.get(runId);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(APPROVAL_VIEW_TYPE, 'Agent approvals', vscode.ViewColumn.Active, webviewOptions(this.deps.extensionUri));
    return this.adopt(runId, panel);
  }

  get(runId: string): ApprovalPanel | undefined {
    return this.panels.get(runId);
  }

  private adopt(runId: string, panel: vscode.WebviewPanel): ApprovalPanel {
    const p = new ApprovalPanel(runId, panel, this.deps, () => this.panels.delete(runId));
    this.panels.set(runId, p);
    return p;
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.panel.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return { enableScripts: true, retainContextWhenHidden: false, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')] };
}

export class ApprovalPanel {
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Rejected inbound messages, for tests and the log. */
  rejectedMessages = 0;

  constructor(
    readonly runId: string,
    readonly panel: vscode.WebviewPanel,
    private readonly deps: ApprovalPanelDeps,
    onDispose: () => void,
  ) {
    panel.webview.options = webviewOptions(deps.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(deps.extensionUri, 'media', 'icons', 'waypoints.svg');
    panel.webview.html = this.html();
    this.subscriptions.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)),
      panel.onDidDispose(() => {
        onDispose();
        for (const s of this.subscriptions) s.dispose();
      }),
    );
  }

  /** Sends the current state, read from the store. */
  async refresh(): Promise<void> {
    const { store } = this.deps;
    const run = await store.getRun(this.runId).catch(() => undefined);
    const approvals = run ? await store.listApprovals(this.runId, { pendingOnly: true }) : [];
    this.panel.title = run ? `Approvals: ${run.title}` : 'Agent approvals';
    await this.post({
      type: 'state',
      run: run ? { runId: run.run_id, title: run.title, state: run.state, stateDetail: detailOf(run, approvals.length), step: run.step } : null,
      approvals: approvals.map(toView),
      readOnly: run ? await this.deps.readOnlyReason(this.runId) : null,
    });
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) return this.reject(parsed.error);
    const msg = parsed.message;
    if (msg.type === 'ready') return this.refresh();
    if (msg.runId !== this.runId) return this.reject(`rejected webview message: it names run ${msg.runId}, this panel shows ${this.runId}`, msg);
    if (msg.type === 'showDiff') return this.showDiff(msg.toolCallId);
    const readOnly = await this.deps.readOnlyReason(this.runId);
    if (readOnly) return this.reject(`decision refused: ${readOnly}`, msg);
    try {
      const handle = await this.deps.runner.decide(this.runId, decisionsOf(msg));
      this.deps.log.info(`run ${this.runId}: ${msg.type} accepted${handle ? '; resuming' : ''}`);
      await this.post({ type: 'result', requestId: msg.requestId, ok: true, error: null });
    } catch (err) {
      this.reject(`decision refused: ${errorMessage(err)}`, msg);
    }
    await this.refresh();
  }

  private reject(reason: string, msg?: WebviewMessage): void {
    this.rejectedMessages += 1;
    this.deps.log.warn(reason);
    if (msg && 'requestId' in msg) void this.post({ type: 'result', requestId: msg.requestId, ok: false, error: reason });
  }

  private async showDiff(toolCallId: string): Promise<void> {
    const approval = (await this.deps.store.listApprovals(this.runId)).find((a) => a.tool_call_id === toolCallId);
    if (!approval || (approval.tool_name !== 'write_file' && approval.tool_name !== 'edit_file')) {
      return this.reject(`rejected showDiff: ${toolCallId} is not a write_file/edit_file approval of run ${this.runId}`);
    }
    await this.deps.proposed.showDiff(this.deps.workspaceRoot, approval);
  }

  private post(message: HostMessage): Thenable<boolean> {
    return this.panel.webview.postMessage(message);
  }

  private html(): string {
    const webview = this.panel.webview;
    const media = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, 'media', ...p));
    const nonce = randomBytes(16).toString('base64url');
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${media('dist', 'codicon.css')}" id="vscode-codicon-stylesheet">
  <link rel="stylesheet" href="${media('approval.css')}">
  <title>Agent approvals</title>
</head>
<body>
  <main id="app" aria-live="polite"><p class="empty">Loading approvals…</p></main>
  <script nonce="${nonce}" src="${media('dist', 'approval.js')}"></script>
</body>
</html>`;
  }
}

function decisionsOf(msg: Exclude<WebviewMessage, { type: 'ready' | 'showDiff' }>): DecisionInput[] {
  switch (msg.type) {
    case 'approve':
      return [{ kind: 'approve', toolCallId: msg.toolCallId, inputHash: msg.inputHash }];
    case 'reject':
      return [{ kind: 'reject', toolCallId: msg.toolCallId, inputHash: msg.inputHash, reason: msg.reason }];
    case 'approveEdited':
      return [{ kind: 'approve_edited', toolCallId: msg.toolCallId, inputHash: msg.inputHash, argumentsJson: msg.argumentsJson }];
    case 'approveAll':
      return msg.items.map((i) => ({ kind: 'approve' as const, toolCallId: i.toolCallId, inputHash: i.inputHash }));
  }
}

export function toView(a: Approval): ApprovalView {
  const args = (a.arguments ?? {}) as Record<string, unknown>;
  return {
    toolCallId: a.tool_call_id,
    toolName: a.tool_name,
    category: a.category,
    argumentsJson: JSON.stringify(a.arguments, null, 2),
    command: a.tool_name === 'run_command' && typeof args.command === 'string' ? args.command : null,
    path: (a.tool_name === 'write_file' || a.tool_name === 'edit_file') && typeof args.path === 'string' ? args.path : null,
    inputHash: a.input_hash,
    uncertain: a.uncertain,
    reason: a.reason,
    step: a.step,
  };
}

/** While calls wait, the count is today's, not the one stored when the run paused (some may be decided). */
function detailOf(run: RunSummary, pending: number): string | null {
  if (run.state !== 'awaiting_approval') return run.state_detail;
  return pending > 0 ? awaitingApprovalDetail(pending) : 'Decisions recorded; the run continues.';
}
