// TreeDataProvider over RunsTreeModel: groups → threads (or single runs) → runs → steps (paged,
// "Load more") → phase checkpoints.
import * as vscode from 'vscode';
import { formatBytes } from './format';
import {
  CheckpointNode,
  GroupNode,
  LoadMoreNode,
  MoreRunsNode,
  RestoreNode,
  RunNode,
  StepNode,
  ThreadNode,
  type RunsTreeNode,
} from './nodes';
import { GROUPS, type RunsTreeModel } from './treeModel';
import { mcpChildren, mcpRoots, type McpSource } from './servers';

type Node = RunsTreeNode;

export class RunsTreeProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  /** The node objects last handed to VS Code, so a single run (or its thread) can be refreshed. */
  private readonly runNodes = new Map<string, RunNode>();
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly model: RunsTreeModel,
    /** The MCP servers section below the runs (absent: none). */
    private readonly mcp?: McpSource,
  ) {
    this.subscription = model.onDidChange((runId) => this.emitter.fire(runId ? this.renew(runId) : undefined));
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    return node.toTreeItem();
  }

  /** On hover: a run's tooltip also says how much storage it takes (read only when asked). */
  async resolveTreeItem(item: vscode.TreeItem, node: Node): Promise<vscode.TreeItem> {
    if (node.kind !== 'run' || !(item.tooltip instanceof vscode.MarkdownString)) return item;
    const bytes = await this.model.storageBytes(node.run.run_id).catch(() => undefined);
    if (bytes !== undefined) item.tooltip.appendMarkdown(`\n\nStorage on disk: ${formatBytes(bytes)}`);
    return item;
  }

  getParent(node: Node): Node | undefined {
    return node.kind === 'group' || node.kind === 'mcp' || node.kind === 'moreRuns' ? undefined : node.parent;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    await this.model.loadFirstPage();
    if (!node) {
      this.runNodes.clear();
      const groups = GROUPS.map((g) => new GroupNode(g, this.model.threadsIn(g).length)).filter((g) => g.count > 0);
      return [...groups, ...(this.model.hasMoreRuns ? [new MoreRunsNode()] : []), ...mcpRoots(this.mcp)];
    }
    switch (node.kind) {
      case 'group':
        // A thread of one run is that run's node: no nesting for the common case.
        return this.model
          .threadsIn(node.group)
          .map((t) => (t.runs.length > 1 ? new ThreadNode(t, node) : this.runNode(new RunNode(t.latest, node))));
      case 'thread':
        return node.thread.runs.map((r, i) => this.runNode(new RunNode(r, node, i + 1)));
      case 'run':
        return this.runChildren(node);
      case 'step':
        return node.view.records.map((r) => new CheckpointNode(r, node));
      case 'checkpoint':
      case 'restore':
      case 'loadMore':
      case 'moreRuns':
        return [];
      default:
        return mcpChildren(node);
    }
  }

  private async runChildren(node: RunNode): Promise<RunsTreeNode[]> {
    const id = node.run.run_id;
    const [page, restores] = await Promise.all([this.model.steps(id), this.model.restores(id)]);
    const children: RunsTreeNode[] = [
      ...restores.map((r) => new RestoreNode(r, node)),
      ...page.steps.map((s) => new StepNode(s, node)),
    ];
    if (!page.exhausted) children.push(new LoadMoreNode(node));
    return children;
  }

  private runNode(node: RunNode): RunNode {
    this.runNodes.set(node.run.run_id, node);
    node.where = this.where(node.run.run_id);
    return node;
  }

  private where(runId: string): RunNode['where'] {
    return { shared: this.model.isShared(runId), workers: this.model.withWorkers(runId) };
  }

  /** The node of a run, walking groups and threads as VS Code would (for reveal). */
  async findRunNode(runId: string): Promise<RunNode | undefined> {
    await this.model.load();
    const run = this.model.get(runId);
    const thread = run && this.model.thread(run.thread_id);
    if (!thread) return undefined;
    const group = (await this.getChildren()).find((g) => g.kind === 'group' && g.group === thread.group);
    if (!group) return undefined;
    for (const n of await this.getChildren(group)) {
      if (n.kind === 'run' && n.run.run_id === runId) return n;
      if (n.kind === 'thread' && n.thread.id === thread.id)
        return (await this.getChildren(n)).find((c): c is RunNode => c.kind === 'run' && c.run.run_id === runId);
    }
    return undefined;
  }

  /**
   * What to refresh when one run changed, keeping nodes' places in the tree: the run's own node, or
   * its thread's (whose description says the latest turn's state). undefined = the whole tree
   * (a run VS Code has not seen yet, or one whose thread changed shape or group).
   */
  private renew(runId: string): RunsTreeNode | undefined {
    const node = this.runNodes.get(runId);
    const run = this.model.get(runId);
    const thread = run && this.model.thread(run.thread_id);
    if (!node || !run || !thread) return undefined;
    const parent = node.parent;
    if (parent.kind === 'group') {
      if (thread.runs.length !== 1 || thread.group !== parent.group) return undefined;
      node.run = run;
      node.where = this.where(runId);
      return node;
    }
    if (thread.group !== parent.parent.group || thread.runs.length !== parent.thread.runs.length) return undefined;
    parent.thread = thread;
    node.run = run;
    node.where = this.where(runId);
    return parent;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
