// The Runs view: the tree, its badge (calls waiting for approval) and the context keys it drives.
import * as vscode from 'vscode';
import type { Emitter } from '../../common/emitter';
import { DisposableBase, toDisposable } from '../../common/disposable';
import type { SharedState } from '../../store/pg/combined';
import { sharedStateText } from '../../storeChoice';
import { ContextKeys, ViewIds } from '../../contributes';
import type { RunsTreeModel } from './treeModel';
import { RunsTreeProvider } from './provider';
import type { McpSource } from './servers';

export function approvalsBadge(n: number): vscode.ViewBadge | undefined {
  return n > 0 ? { value: n, tooltip: `${n} tool call${n > 1 ? 's' : ''} waiting for approval` } : undefined;
}

export class RunsView extends DisposableBase {
  readonly tree: RunsTreeProvider;
  private readonly view: vscode.TreeView<unknown>;

  constructor(
    private readonly model: RunsTreeModel,
    /** MCP servers and always-allowed tools, shown below the runs. */
    mcp?: McpSource & { onDidChange: Emitter<void> },
  ) {
    super();
    this.tree = this._register(new RunsTreeProvider(model, mcp));
    if (mcp) {
      let timer: NodeJS.Timeout | undefined;
      this._register(
        mcp.onDidChange.on(() => (timer ??= setTimeout(() => ((timer = undefined), this.tree.refresh()), 100))),
      );
      this._register(toDisposable(() => clearTimeout(timer)));
    }
    this.view = this._register(
      vscode.window.createTreeView(ViewIds.runs, { treeDataProvider: this.tree, showCollapseAll: true }),
    ) as vscode.TreeView<unknown>;
    this._register(model.onDidChange(() => this.update()));
  }

  update(): void {
    this.view.badge = approvalsBadge(this.model.pendingApprovals());
    void vscode.commands.executeCommand('setContext', ContextKeys.hasRuns, this.model.all().length > 0);
  }

  /** The shared store's state above the tree: "Shared store unreachable (…). Retrying …", nothing once connected. */
  showSharedStore(source: {
    readonly state: SharedState;
    onState(l: (s: SharedState) => void): vscode.Disposable;
  }): void {
    const show = (s: SharedState) => {
      this.view.message = sharedStateText(s);
      void vscode.commands.executeCommand('setContext', ContextKeys.sharedStore, s.kind);
    };
    show(source.state);
    this._register(source.onState(show));
  }

  /** Shows a run in the tree (the run view's "Open in tree"). */
  async reveal(runId: string): Promise<void> {
    await vscode.commands.executeCommand(ViewIds.focusRuns);
    const node = await this.tree.findRunNode(runId);
    if (node) await this.view.reveal(node, { select: true, focus: true, expand: true });
  }
}
