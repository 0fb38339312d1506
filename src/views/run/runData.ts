// What the run view reads of one run to show it (vscode-free): its checkpoints, latest snapshot,
// approvals, effects, inbox and restores — all of them, or for the first paint of a long run only its
// end (the store's readEnd: the newest checkpoints and what they need, without the whole log) — and
// what runs in this window now.
import type {
  Approval,
  CheckpointRecord,
  Effect,
  InboxMessage,
  RestoreRecord,
  RunSummary,
  RuntimeSnapshot,
} from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';

export type RunRecord = Pick<CheckpointRecord, 'seq' | 'step' | 'phase' | 'snapshot'> & {
  payload?: CheckpointRecord['payload'];
};

export interface LiveRun {
  active: boolean;
  runningCalls: ReadonlySet<string>;
  /** The latest progress of the running calls, by tool call id (external tools report it). */
  progress?: ReadonlyMap<string, string>;
}

export interface RunData {
  run: RunSummary;
  /** 1-based position of the run in its thread. */
  turn: number;
  /** The run's checkpoints, oldest first: every one, or only the newest (`newestOnly`). */
  records: readonly RunRecord[];
  /** `records` are the newest of the run's checkpoints; older ones exist and were not read. */
  newestOnly?: boolean;
  /** With `newestOnly`: the older checkpoints the run's restores went back to (a restore card names their step). */
  restoreTargets?: readonly RunRecord[];
  /**
   * The latest snapshot (null: none written yet). With `newestOnly` its `messages` start at index
   * `messagesFrom` (the store's RunEnd), and its tool executions, the effects and approvals are those
   * of the calls in them (with the waiting approvals and the newest effect that changed files).
   */
  snapshot: RuntimeSnapshot | null;
  messagesFrom?: number;
  approvals: readonly Approval[];
  effects: readonly Effect[];
  inbox: readonly InboxMessage[];
  /** Restores of the run's files, in the order they were recorded. */
  restores: readonly RestoreRecord[];
  /** The run executes in this window now, and the tool calls running this moment. */
  live: LiveRun;
}

export interface LiveRuns {
  isActive(runId: string): boolean;
  runningCalls(runId: string): ReadonlySet<string>;
  /** The latest progress of a run's running calls, by tool call id (external tools report it). */
  progress?(runId: string): ReadonlyMap<string, string>;
}

/**
 * Reads what the transcript and the header of one run need. `newest`: read only that many of the
 * newest checkpoints (when the run has more), for the first paint; the rest is read after it.
 */
export async function loadRunData(
  store: CheckpointStore,
  run: RunSummary,
  turn: number,
  live: LiveRuns,
  opts: { newest?: number } = {},
): Promise<RunData> {
  const id = run.run_id;
  const liveNow: RunData['live'] = {
    active: live.isActive(id),
    runningCalls: live.runningCalls(id),
    ...(live.progress ? { progress: live.progress(id) } : {}),
  };
  if (opts.newest !== undefined && run.last_seq > opts.newest) {
    // The run's end only: from memory, or what its last compaction kept (no whole log read).
    const end = await store.readEnd(id, { records: opts.newest });
    return {
      run,
      turn,
      records: end.records,
      newestOnly: true,
      restoreTargets: end.restore_targets,
      snapshot: end.snapshot,
      messagesFrom: end.messages_from,
      approvals: end.approvals,
      effects: end.effects,
      inbox: end.inbox,
      restores: end.restores,
      live: liveNow,
    };
  }
  const [records, snapshot, approvals, effects, inbox, restores] = await Promise.all([
    store.list(id, { limit: Number.MAX_SAFE_INTEGER }).then((r) => r.reverse()),
    store.loadSnapshot(id).then(
      (s) => s.snapshot,
      () => null,
    ),
    store.listApprovals(id),
    store.listEffects(id),
    store.listInbox(id),
    store.listRestores(id),
  ]);
  return { run, turn, records, snapshot, approvals, effects, inbox, restores, live: liveNow };
}
