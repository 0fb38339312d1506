// Runs as conversations: a thread is the runs that share a thread_id (a first run and its follow-up
// turns; a fork starts a thread of its own), and the group a thread is listed under. vscode-free.
import type { RunSummary } from '../../store/api/schema';
import { byTurnOrder } from '../shared/runs';

export type RunGroup = 'attention' | 'running' | 'finished' | 'failed';
export const GROUPS: readonly RunGroup[] = ['attention', 'running', 'finished', 'failed'];

/** Which group a run belongs to: what it needs from the user first. */
export function groupOf(run: RunSummary): RunGroup {
  if (run.pending_approvals > 0) return 'attention';
  switch (run.state) {
    case 'running':
      return 'running';
    case 'completed':
      return 'finished';
    case 'failed':
      return 'failed';
    default:
      return 'attention'; // awaiting_approval, interrupted, paused_*
  }
}

export interface Thread {
  id: string;
  /** Oldest first: turn 1, turn 2, … */
  runs: RunSummary[];
  latest: RunSummary;
  group: RunGroup;
  updated_ms: number;
}

/**
 * A thread is listed under its latest run's group — except that a call waiting for approval in any
 * of its runs puts it under "Needs attention", so no approval hides in an older turn.
 */
export function threadGroup(runs: readonly RunSummary[]): RunGroup {
  if (runs.some((r) => r.pending_approvals > 0)) return 'attention';
  return groupOf(runs[runs.length - 1]!);
}

/** Groups runs into threads, most recently updated thread first. */
export function groupThreads(runs: Iterable<RunSummary>): Thread[] {
  const byId = new Map<string, RunSummary[]>();
  for (const r of runs) {
    const list = byId.get(r.thread_id);
    if (list) list.push(r);
    else byId.set(r.thread_id, [r]);
  }
  const threads: Thread[] = [];
  for (const [id, list] of byId) {
    list.sort(byTurnOrder);
    threads.push({
      id,
      runs: list,
      latest: list[list.length - 1]!,
      group: threadGroup(list),
      updated_ms: Math.max(...list.map((r) => r.updated_ms)),
    });
  }
  return threads.sort((a, b) => b.updated_ms - a.updated_ms || (a.id < b.id ? 1 : -1));
}

/** The run a command on the whole thread acts on: the one waiting for approval, else the latest. */
export function threadFocus(t: Thread): RunSummary {
  return t.runs.find((r) => r.pending_approvals > 0) ?? t.latest;
}
