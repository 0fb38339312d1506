// The commands' targets: a run or a checkpoint from whatever a command was invoked with (a tree node,
// a run id, `{ runId, seq }`), else from a quick pick (choose a run, choose a checkpoint). The picks
// are steps of a longer action and stay open when the focus moves (views/notices.ts says why).
import * as vscode from 'vscode';
import type { CheckpointRecord, RunSummary } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import { relativeTime, STATE_ICONS } from '../views/runs/format';
import { STATE_LABELS } from '../views/shared/runs';
import { groupOf, type RunsTreeModel } from '../views/runs/treeModel';

/** A run id from whatever a command was invoked with: a tree node (run, thread, step, checkpoint, restore), a run id, nothing. */
export function runIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'object' && arg !== null) {
    const a = arg as { run?: RunSummary; record?: CheckpointRecord; parent?: { run?: RunSummary }; runId?: unknown };
    if (a.run) return a.run.run_id;
    if (a.record) return a.record.run_id;
    if (a.parent?.run) return a.parent.run.run_id; // a step or "Load more…" under a run
    if (typeof a.runId === 'string') return a.runId; // a thread: the turn that waits, else the latest
  }
  return undefined;
}

/** The step a command was invoked for (a step node of the tree, or `{ runId, step }`). */
export function stepOf(arg: unknown): number | undefined {
  const step = typeof arg === 'object' && arg !== null ? (arg as { step?: unknown }).step : undefined;
  return typeof step === 'number' && Number.isInteger(step) && step >= 0 ? step : undefined;
}

export function checkpointOf(arg: unknown): { runId: string; seq: number } | undefined {
  if (typeof arg === 'object' && arg !== null) {
    const a = arg as { record?: CheckpointRecord; runId?: unknown; seq?: unknown };
    if (a.record) return { runId: a.record.run_id, seq: a.record.seq };
    if (typeof a.runId === 'string' && typeof a.seq === 'number') return { runId: a.runId, seq: a.seq };
  }
  return undefined;
}

interface RunItem extends vscode.QuickPickItem {
  run: RunSummary;
}

export async function pickRun(
  model: RunsTreeModel,
  arg: unknown,
  opts: {
    title: string;
    placeHolder: string;
    filter?: (r: RunSummary) => boolean;
    empty: string;
    autoPickSingle?: boolean;
  },
): Promise<RunSummary | undefined> {
  await model.load();
  const id = runIdOf(arg);
  if (id) {
    const run = await model.find(id);
    if (!run) void vscode.window.showErrorMessage(`Agent Waypoints: no run with id ${id} in this workspace.`);
    return run;
  }
  const runs = model.all().filter(opts.filter ?? (() => true));
  if (runs.length === 0) {
    void vscode.window.showInformationMessage(opts.empty);
    return undefined;
  }
  if (opts.autoPickSingle && runs.length === 1) return runs[0];
  // What needs the user first, then newest.
  runs.sort(
    (a, b) => Number(groupOf(b) === 'attention') - Number(groupOf(a) === 'attention') || b.updated_ms - a.updated_ms,
  );
  const items: RunItem[] = runs.map((run) => ({
    run,
    label: `$(${STATE_ICONS[run.state].replace('~spin', '')}) ${run.title}`,
    description: [
      STATE_LABELS[run.state],
      `step ${run.step}`,
      run.pending_approvals ? `${run.pending_approvals} pending approval${run.pending_approvals > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join(' · '),
    detail: `updated ${relativeTime(run.updated_ms)} · ${run.model} · ${run.run_id}`,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: opts.title,
    placeHolder: opts.placeHolder,
    matchOnDescription: true,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return picked?.run;
}

export async function pickCheckpoint(
  store: CheckpointStore,
  runId: string,
  title: string,
): Promise<CheckpointRecord | undefined> {
  const records = await store.list(runId, { limit: 200 });
  const picked = await vscode.window.showQuickPick(
    records.map((r) => ({
      r,
      label: `#${r.seq} ${r.phase}`,
      description: `step ${r.step} · ${relativeTime(r.timestamp_ms)}`,
    })),
    { title, placeHolder: 'Choose a checkpoint (newest first)', ignoreFocusOut: true },
  );
  return picked?.r;
}

/** A checkpoint from the command's argument (a checkpoint node, `{ runId, seq }`), else picked: the run, then its checkpoint. */
export async function pickCheckpointTarget(
  d: { model: RunsTreeModel; store: CheckpointStore },
  arg: unknown,
  o: { title: string; placeHolder: string; checkpointTitle(run: RunSummary): string },
): Promise<{ runId: string; seq: number } | undefined> {
  const given = checkpointOf(arg);
  if (given) return given;
  const run = await pickRun(d.model, arg, {
    title: o.title,
    placeHolder: o.placeHolder,
    empty: 'Agent Waypoints: there are no runs.',
  });
  if (!run) return undefined;
  const record = await pickCheckpoint(d.store, run.run_id, o.checkpointTitle(run));
  return record ? { runId: record.run_id, seq: record.seq } : undefined;
}
