// Runs as both views show them (the Runs tree and the run view): the words for their states and
// the order of a thread's turns. vscode-free.
import type { RunState, RunSummary } from '../../store/api/schema';

export const STATE_LABELS: Record<RunState, string> = {
  running: 'running',
  awaiting_approval: 'awaiting approval',
  paused_budget: 'paused: budget',
  paused_error: 'paused: error',
  paused_cancelled: 'cancelled',
  interrupted: 'interrupted',
  completed: 'completed',
  failed: 'failed',
};

/** Turn order inside a thread: creation time, then run id (ids are time-sortable). */
export function byTurnOrder(a: RunSummary, b: RunSummary): number {
  return a.created_ms - b.created_ms || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);
}
