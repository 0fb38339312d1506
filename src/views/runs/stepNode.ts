// A step of a run in the tree: "Step 3 · edit_file src/slugify.js · approved", its phase
// checkpoints inside; clicking it opens the run view at that step.
import * as vscode from 'vscode';
import { CommandIds, ContextValues } from '../../contributes';
import { relativeTime } from './format';
import type { RunSummary } from '../../store/api/schema';
import type { StepOutcome, StepView } from './steps';
import { escapeMarkdown as escape } from '../shared/markdown';
import { DECISION_WORDS } from '../shared/stepSummary';

const OUTCOME_ICONS: Record<StepOutcome, [icon: string, color?: string]> = {
  start: ['rocket'],
  working: ['sync~spin'],
  waiting: ['bell-dot', 'notificationsWarningIcon.foreground'],
  stopped: ['debug-pause'],
  rejected: ['close', 'errorForeground'],
  failed: ['error', 'errorForeground'],
  replayed: ['history'],
  edited: ['edit'],
  approved: ['check'],
  auto: ['tools'],
  answer: ['comment'],
  final: ['pass'],
};

/** A step of a run; `Parent` is the run's node (nodes.ts RunNode: typed there, so this file does not import it back). */
export class StepNode<Parent extends { run: RunSummary } = { run: RunSummary }> {
  readonly kind = 'step';
  constructor(
    readonly view: StepView,
    readonly parent: Parent,
  ) {}

  /** Read by the openRun command (with runIdOf's `parent.run`): the run view opens at this step. */
  get step(): number {
    return this.view.step;
  }

  toTreeItem(): vscode.TreeItem {
    const v = this.view;
    const item = new vscode.TreeItem(v.label, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `step:${v.runId}:${v.step}`;
    const first = v.records[0]!;
    const last = v.records[v.records.length - 1]!;
    item.description = `${first.seq === last.seq ? `#${first.seq}` : `#${first.seq}–${last.seq}`} · ${relativeTime(last.timestamp_ms)}`;
    const [icon, color] = OUTCOME_ICONS[v.outcome];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = new vscode.MarkdownString(tooltip(v));
    item.contextValue = ContextValues.step;
    item.command = { command: CommandIds.openRun, title: 'Open run at this step', arguments: [this] };
    return item;
  }
}

function tooltip(v: StepView): string {
  const lines = [`**${escape(v.label)}**`, ''];
  for (const c of v.calls)
    lines.push(`- ${escape(c.title)}: ${DECISION_WORDS[c.decision]}${c.reason ? ` (“${escape(c.reason)}”)` : ''}`);
  if (v.failures > 0) lines.push(`- ${v.failures} call${v.failures > 1 ? 's' : ''} failed`);
  if (v.replayed > 0)
    lines.push(`- ${v.replayed} call${v.replayed > 1 ? 's' : ''} replayed from the effect journal (not run again)`);
  lines.push(
    '',
    `Checkpoints: ${v.records.map((r) => `${r.phase} #${r.seq}`).join(', ')}`,
    '',
    'Click to open the run view at this step.',
  );
  return lines.join('\n');
}
