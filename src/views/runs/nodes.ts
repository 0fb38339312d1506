// Tree nodes: each knows how to render itself as a TreeItem. The model owns the data.
import * as vscode from 'vscode';
import type { CheckpointRecord, RestoreRecord, RunSummary } from '../../store/api/schema';
import { whyNotHandOff, whyNotResume, type RunFacts } from '../../actions/guards';
import { CommandIds, ContextValues } from '../../contributes';
import { checkpointSummary, PHASE_ICONS, relativeTime, runDescription, STATE_ICONS } from './format';
import { escapeMarkdown as escape } from '../shared/markdown';
import { STATE_LABELS } from '../shared/runs';
import { restoreCounts, restoreMarkdown } from '../restore/summary';
import type { McpTreeNode } from './servers';
import { StepNode } from './stepNode';
import { threadFocus, type RunGroup, type Thread } from './threads';

export { StepNode };

const GROUP_LABELS: Record<RunGroup, string> = {
  attention: 'Needs attention',
  running: 'Running',
  finished: 'Finished',
  failed: 'Failed',
};

const GROUP_ICONS: Record<RunGroup, string> = {
  attention: 'bell-dot',
  running: 'sync',
  finished: 'pass',
  failed: 'error',
};

export class GroupNode {
  readonly kind = 'group';
  constructor(
    readonly group: RunGroup,
    readonly count: number,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem(
      GROUP_LABELS[this.group],
      this.group === 'finished' || this.group === 'failed'
        ? vscode.TreeItemCollapsibleState.Collapsed
        : vscode.TreeItemCollapsibleState.Expanded,
    );
    item.id = `group:${this.group}`;
    item.description = String(this.count);
    item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[this.group]);
    item.contextValue = ContextValues.group;
    return item;
  }
}

/** A conversation of more than one run (follow-up turns): its turns inside, oldest first. */
export class ThreadNode {
  readonly kind = 'thread';
  constructor(
    /** Replaced in place when one of its runs changes, so VS Code keeps the node's identity. */
    public thread: Thread,
    readonly parent: GroupNode,
  ) {}

  /** The run commands on the thread act on (Resume, Show pending approvals, Open run). */
  get runId(): string {
    return threadFocus(this.thread).run_id;
  }

  toTreeItem(): vscode.TreeItem {
    const t = this.thread;
    const first = t.runs[0]!;
    const latest = t.latest;
    const item = new vscode.TreeItem(first.title, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `thread:${t.id}`;
    const pending = t.runs.reduce((n, r) => n + r.pending_approvals, 0);
    item.description = [
      `${t.runs.length} turns`,
      STATE_LABELS[latest.state],
      ...(pending > 0 ? [`${pending} to approve`] : []),
      relativeTime(t.updated_ms),
    ].join(' · ');
    item.iconPath = new vscode.ThemeIcon('comment-discussion', stateColor(latest, pending));
    const turns = t.runs.map((r, i) => `${i + 1}. ${escape(r.title)} — ${STATE_LABELS[r.state]}`);
    item.tooltip = new vscode.MarkdownString(
      [`**${escape(first.title)}**`, `A conversation of ${t.runs.length} turns:`, turns.join('\n\n')].join('\n\n'),
    );
    const focus = threadFocus(t);
    item.contextValue = ContextValues.thread(focus.state, {
      resumable: whyNotResume({ run: focus }) === null,
      approvals: pending > 0,
    });
    return item;
  }
}

export class RunNode {
  readonly kind = 'run';
  constructor(
    /** Replaced in place when the run's summary changes, so VS Code keeps the node's identity. */
    public run: RunSummary,
    readonly parent: GroupNode | ThreadNode,
    /** 1-based position in its thread (shown only inside a thread node). */
    readonly turn = 1,
    /** Where the run lives and whether the workers have it; renewed with the summary. */
    public where: { shared: boolean; workers: RunFacts['withWorkers'] } = { shared: false, workers: null },
  ) {}

  toTreeItem(): vscode.TreeItem {
    const r = this.run;
    const w = this.where.workers;
    const inThread = this.parent.kind === 'thread';
    const item = new vscode.TreeItem(
      inThread ? `Turn ${this.turn} · ${r.title}` : r.title,
      vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = `run:${r.run_id}`;
    item.description = [runDescription(r), ...(w ? [workersLabel(w)] : [])].join(' · ');
    item.iconPath = new vscode.ThemeIcon(
      w && r.state !== 'running' && r.pending_approvals === 0 ? 'cloud' : STATE_ICONS[r.state],
      stateColor(r, r.pending_approvals),
    );
    const tooltip = new vscode.MarkdownString(
      [
        `**${escape(r.title)}**`,
        '',
        escape(r.task),
        '',
        `${runDescription(r)}`,
        `\`${r.run_id}\` · model ${escape(r.model)}`,
        ...(w ? [escape(`With the workers: ${workersLabel(w)}.`)] : []),
      ]
        .concat(r.state_detail ? ['', escape(r.state_detail)] : [])
        .join('\n\n'),
    );
    item.tooltip = tooltip;
    const facts = { run: r, shared: this.where.shared, withWorkers: w };
    item.contextValue = ContextValues.run(r.state, {
      resumable: whyNotResume(facts) === null,
      approvals: r.pending_approvals > 0,
      background: this.where.shared && whyNotHandOff(facts) === null,
      workers: w !== null,
    });
    return item;
  }
}

/** "held by worker-a", "waiting for a worker", … (the Runs tree's words for a run of the workers). */
export function workersLabel(w: NonNullable<RunFacts['withWorkers']>): string {
  if (w.holder) return `held by ${w.holder.label}`;
  if (w.status === 'waiting') return 'with the workers, waiting for a decision';
  if (w.status === 'stopped') return 'stopped with the workers';
  return 'waiting for a worker';
}

/** One phase checkpoint inside its step. */
export class CheckpointNode {
  readonly kind = 'checkpoint';
  constructor(
    readonly record: CheckpointRecord,
    readonly parent: StepNode<RunNode>,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const r = this.record;
    const item = new vscode.TreeItem(`${r.phase}`, vscode.TreeItemCollapsibleState.None);
    item.id = `cp:${r.run_id}:${r.seq}`;
    item.description = `#${r.seq} · ${relativeTime(r.timestamp_ms)}`;
    item.iconPath = new vscode.ThemeIcon(PHASE_ICONS[r.phase]);
    item.tooltip = new vscode.MarkdownString(checkpointSummary(r));
    item.contextValue = ContextValues.checkpoint;
    item.command = { command: CommandIds.openCheckpoint, title: 'Open checkpoint', arguments: [this] };
    return item;
  }
}

/** A restore of the run's files (an audit record): what it did, per file, in the tooltip. */
export class RestoreNode {
  readonly kind = 'restore';
  constructor(
    readonly restore: RestoreRecord,
    readonly parent: RunNode,
  ) {}

  /** Restoring to the checkpoint this restore followed undoes it (its writes are journaled after it). */
  get runId(): string {
    return this.parent.run.run_id;
  }

  get seq(): number {
    return this.restore.checkpoint_seq;
  }

  toTreeItem(): vscode.TreeItem {
    const r = this.restore;
    const item = new vscode.TreeItem(`Files restored to #${r.to_seq}`, vscode.TreeItemCollapsibleState.None);
    item.id = `restore:${this.parent.run.run_id}:${r.id}`;
    item.description = `${restoreCounts(r)} · ${relativeTime(r.created_ms)}`;
    item.iconPath = new vscode.ThemeIcon('discard');
    item.tooltip = new vscode.MarkdownString(restoreMarkdown(r));
    item.contextValue = ContextValues.restore;
    return item;
  }
}

export class LoadMoreNode {
  readonly kind = 'loadMore';
  constructor(readonly parent: RunNode) {}

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem('Load more…', vscode.TreeItemCollapsibleState.None);
    item.id = `more:${this.parent.run.run_id}`;
    item.iconPath = new vscode.ThemeIcon('ellipsis');
    item.contextValue = ContextValues.loadMore;
    item.command = { command: CommandIds.loadMoreCheckpoints, title: 'Load more', arguments: [this] };
    return item;
  }
}

/** After the groups when older runs are left to read: reads the next page of them. */
export class MoreRunsNode {
  readonly kind = 'moreRuns';

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem('Load more runs…', vscode.TreeItemCollapsibleState.None);
    item.id = 'more-runs';
    item.iconPath = new vscode.ThemeIcon('ellipsis');
    item.tooltip = 'Older finished runs';
    item.command = { command: CommandIds.loadMoreCheckpoints, title: 'Load more runs', arguments: [this] };
    return item;
  }
}

export type RunsTreeNode =
  | GroupNode
  | ThreadNode
  | RunNode
  | StepNode<RunNode>
  | CheckpointNode
  | RestoreNode
  | LoadMoreNode
  | MoreRunsNode
  | McpTreeNode;

function stateColor(r: RunSummary, pending: number): vscode.ThemeColor | undefined {
  const color =
    r.state === 'failed' ? 'errorForeground' : pending > 0 ? 'notificationsWarningIcon.foreground' : undefined;
  return color ? new vscode.ThemeColor(color) : undefined;
}
