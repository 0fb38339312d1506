// The run view (host side, vscode part): one webview panel per thread (a conversation), opened at a
// run; restored after a reload by its serializer (the webview keeps only ids and its scroll
// position). The logic is in controller.ts; here: panels, HTML with a strict CSP, editor actions.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { errorMessage } from '../../common/errors';
import { DisposableBase, toDisposable } from '../../common/disposable';
import type { CheckpointStore } from '../../store/api/types';
import type { OpenAt } from '../../actions/ports';
import { ViewIds } from '../../contributes';
import { RunViewController, type RunViewDeps } from './controller';
import type { HostMessage } from './protocol';

export const RUN_VIEW_TYPE = ViewIds.runView;

export interface RunViewPanelsDeps extends RunViewDeps {
  extensionUri: vscode.Uri;
  store: CheckpointStore;
}

export class RunViewPanels extends DisposableBase {
  private readonly panels = new Map<string, RunViewPanel>();

  constructor(private readonly deps: RunViewPanelsDeps) {
    super();
    for (const viewType of [RUN_VIEW_TYPE, ViewIds.legacyApprovals]) {
      this._register(
        vscode.window.registerWebviewPanelSerializer(viewType, {
          deserializeWebviewPanel: (panel, state: unknown) => this.restore(panel, state),
        }),
      );
    }
    this._register(toDisposable(() => [...this.panels.values()].forEach((p) => p.panel.dispose())));
  }

  /** Opens (or reveals) the view of a run's thread, at the run's end, its first pending approval or a step. */
  async show(runId: string, at: OpenAt = { kind: 'end' }): Promise<RunViewPanel | undefined> {
    const run = await this.deps.store.indexedRun(runId); // its log is read by the view, from its end first
    if (!run) return undefined;
    let p = this.panels.get(run.thread_id);
    if (p) p.panel.reveal(undefined, false);
    else {
      const panel = vscode.window.createWebviewPanel(
        RUN_VIEW_TYPE,
        run.title,
        vscode.ViewColumn.Active,
        webviewOptions(this.deps.extensionUri),
      );
      p = this.adopt(run.thread_id, runId, panel);
    }
    p.controller.focusRunId = runId;
    await p.open(at);
    return p;
  }

  /** The open view showing a run (its thread's), if any. */
  get(runId: string): RunViewPanel | undefined {
    return [...this.panels.values()].find(
      (p) => p.controller.transcript.runList.some((r) => r.run_id === runId) || p.controller.focusRunId === runId,
    );
  }

  private async restore(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const s = typeof state === 'object' && state !== null ? (state as { runId?: unknown; threadId?: unknown }) : {};
    const runId = typeof s.runId === 'string' ? s.runId : undefined;
    const run = runId ? await this.deps.store.indexedRun(runId).catch(() => undefined) : undefined;
    if (!run || this.panels.has(run.thread_id)) {
      this.deps.log.info(
        `run view not restored: ${runId ? `run ${runId} no longer exists or is already shown` : 'it kept no run id'}`,
      );
      panel.dispose();
      return;
    }
    this.deps.log.info(`run view of run ${run.run_id} restored after a reload`);
    // The thread is read while the webview loads its script.
    void this.adopt(run.thread_id, run.run_id, panel)
      .open({ kind: 'end' })
      .catch((err: unknown) => this.deps.log.warn(`run view: reading run ${run.run_id} failed: ${errorMessage(err)}`));
  }

  private adopt(threadId: string, runId: string, panel: vscode.WebviewPanel): RunViewPanel {
    const p = new RunViewPanel(threadId, runId, panel, this.deps, () => this.panels.delete(threadId));
    this.panels.set(threadId, p);
    return p;
  }
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    retainContextWhenHidden: false,
    enableFindWidget: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
  };
}

export class RunViewPanel extends DisposableBase {
  readonly controller: RunViewController;

  constructor(
    readonly threadId: string,
    runId: string,
    readonly panel: vscode.WebviewPanel,
    deps: RunViewPanelsDeps,
    onDispose: () => void,
  ) {
    super();
    panel.webview.options = webviewOptions(deps.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(deps.extensionUri, 'media', 'icons', 'waypoints.svg');
    this.controller = this._register(new RunViewController(threadId, runId, deps, (m) => this.post(m)));
    panel.webview.html = html(panel.webview, deps.extensionUri);
    this._register(panel.webview.onDidReceiveMessage((raw: unknown) => void this.controller.receive(raw)));
    this._register(
      panel.onDidDispose(() => {
        onDispose();
        this.dispose();
      }),
    );
  }

  /** Inbound messages the controller refused. */
  get rejectedMessages(): number {
    return this.controller.rejectedMessages;
  }

  async open(at: OpenAt): Promise<void> {
    await this.controller.pushState(true);
    const runId = this.controller.focusRunId;
    // Step 0 (the run's start) has no waypoint of its own: the turn's heading is where it starts.
    const stepKey = (step: number) => (step === 0 ? `${runId}:turn` : `${runId}:w:${step}`);
    const key =
      at.kind === 'firstPending'
        ? this.controller.firstPendingKey()
        : at.kind === 'step'
          ? stepKey(at.step)
          : undefined;
    if (key) this.controller.reveal(key);
  }

  private post(message: HostMessage): Thenable<boolean> {
    if (message.type === 'state') {
      const last = message.runs[message.runs.length - 1];
      if (last)
        this.panel.title = `${message.runs[0]!.title}${message.runs.length > 1 ? ` (${message.runs.length} turns)` : ''}`;
    }
    return this.panel.webview.postMessage(message);
  }
}

function html(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const media = (...p: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', ...p));
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
  <link rel="stylesheet" href="${media('runView.css')}">
  <title>Agent run</title>
</head>
<body>
  <div id="app"><p class="empty">Loading the run…</p></div>
  <script nonce="${nonce}" src="${media('dist', 'runView.js')}"></script>
</body>
</html>`;
}
