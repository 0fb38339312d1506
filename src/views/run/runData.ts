// What the run view reads of one run to show it (vscode-free): its checkpoints — every one, or only
// the newest for the first paint of a long run —, its latest snapshot, approvals, effects, inbox and
// restores, and what runs in this window now.
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
  /** The latest snapshot (null: none written yet). */
  snapshot: RuntimeSnapshot | null;
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
  const newestOnly = opts.newest !== undefined && run.last_seq > opts.newest;
  const [records, snapshot, approvals, effects, inbox, restores] = await Promise.all([
    store.list(id, { limit: newestOnly ? opts.newest : Number.MAX_SAFE_INTEGER }).then((r) => r.reverse()),
    store.loadSnapshot(id).then(
      (s) => s.snapshot,
      () => null,
    ),
    store.listApprovals(id),
    store.listEffects(id),
    store.listInbox(id),
    store.listRestores(id),
  ]);
  const oldest = records[0]?.seq ?? 0;
  const targets = newestOnly ? [...new Set(restores.map((r) => r.to_seq).filter((seq) => seq < oldest))] : [];
  const restoreTargets = (
    await Promise.all(targets.map((seq) => store.list(id, { before: seq + 1, limit: 1 })))
  ).flat();
  return {
    run,
    turn,
    records,
    ...(newestOnly ? { newestOnly, restoreTargets: restoreTargets.sort((a, b) => a.seq - b.seq) } : {}),
    snapshot,
    approvals,
    effects,
    inbox,
    restores,
    live: {
      active: live.isActive(id),
      runningCalls: live.runningCalls(id),
      ...(live.progress ? { progress: live.progress(id) } : {}),
    },
  };
}
