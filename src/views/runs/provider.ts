// TreeDataProvider over RunsModel: groups → runs → checkpoints (paged, "Load more").
import * as vscode from 'vscode';
import { formatBytes } from './format';
import { CheckpointNode, GroupNode, LoadMoreNode, RestoreNode, RunNode, type RunsTreeNode } from './nodes';
import { GROUPS, groupOf, type RunsModel } from './model';

export class RunsTreeProvider implements vscode.TreeDataProvider<RunsTreeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<RunsTreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  /** The node objects last handed to VS Code, so a single run can be refreshed. */
  private readonly runNodes = new Map<string, RunNode>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly model: RunsModel) {
    this.subscription = model.onDidChange((runId) => {
      const node = runId ? this.runNodes.get(runId) : undefined;
      // A run VS Code has not seen yet is new: refresh the whole tree.
      this.emitter.fire(node && this.model.get(runId!) ? this.renew(node) : undefined);
    });
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: RunsTreeNode): vscode.TreeItem {
    return node.toTreeItem();
  }

  /** On hover: a run's tooltip also says how much storage it takes (read only when asked). */
  async resolveTreeItem(item: vscode.TreeItem, node: RunsTreeNode): Promise<vscode.TreeItem> {
    if (node.kind !== 'run' || !(item.tooltip instanceof vscode.MarkdownString)) return item;
    const bytes = await this.model.storageBytes(node.run.run_id).catch(() => undefined);
    if (bytes !== undefined) item.tooltip.appendMarkdown(`\n\nStorage on disk: ${formatBytes(bytes)}`);
    return item;
  }

  getParent(node: RunsTreeNode): RunsTreeNode | undefined {
    return node.kind === 'group' ? undefined : node.parent;
  }

  async getChildren(node?: RunsTreeNode): Promise<RunsTreeNode[]> {
    await this.model.load();
    if (!node) {
      this.runNodes.clear();
      return GROUPS.map((g) => new GroupNode(g, this.model.inGroup(g).length)).filter((g) => g.count > 0);
    }
    if (node.kind === 'group') {
      return this.model.inGroup(node.group).map((run) => {
        const n = new RunNode(run, node);
        this.runNodes.set(run.run_id, n);
        return n;
      });
    }
    if (node.kind === 'run') {
      const page = await this.model.checkpoints(node.run.run_id);
      const restores = await this.model.restores(node.run.run_id);
      const children: RunsTreeNode[] = [...restores.map((r) => new RestoreNode(r, node)), ...page.records.map((r) => new CheckpointNode(r, node))];
      if (!page.exhausted) children.push(new LoadMoreNode(node));
      return children;
    }
    return [];
  }

  /** The node of a run (for reveal), if VS Code has rendered its group. */
  runNode(runId: string): RunNode | undefined {
    return this.runNodes.get(runId);
  }

  /** A fresh node for a run whose summary changed, keeping its place in the tree. */
  private renew(node: RunNode): RunNode | undefined {
    const run = this.model.get(node.run.run_id)!;
    if (groupOf(run) !== node.parent.group) return undefined;
    node.run = run;
    return node;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
