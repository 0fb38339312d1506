// A thread's transcript as the run view pages it: the runs of a conversation in order, each run's
// items built from the store (cached until that run changes), and one outline (key + height
// estimate per item) so the webview can size its scrollbar without the items themselves.
import type { RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { byTurnOrder } from '../runs/threads';
import { estimateHeight, type OutlineEntry, type TranscriptItem } from './items';
import { buildRunItems, type RunData } from './transcript';

export interface LiveRuns {
  isActive(runId: string): boolean;
  runningCalls(runId: string): ReadonlySet<string>;
  /** The latest progress of a run's running calls, by tool call id (external tools report it). */
  progress?(runId: string): ReadonlyMap<string, string>;
}

/** Loads what buildRunItems needs for one run. */
export async function loadRunData(
  store: CheckpointStore,
  run: RunSummary,
  turn: number,
  live: LiveRuns,
): Promise<RunData> {
  const id = run.run_id;
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
  return {
    run,
    turn,
    records,
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

/** The runs of a thread, oldest first (from the store's index: no run's log is read). */
export async function threadRuns(store: CheckpointStore, threadId: string): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listRuns({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const r of page.runs) if (r.thread_id === threadId) out.push(r);
    cursor = page.cursor;
  } while (cursor);
  return out.sort(byTurnOrder);
}

export class ThreadTranscript {
  private runs: RunSummary[] = [];
  private readonly built = new Map<string, TranscriptItem[]>();
  private readonly stale = new Set<string>();
  private items: TranscriptItem[] = [];
  private outlineCache: OutlineEntry[] = [];
  version = 0;

  constructor(
    private readonly store: CheckpointStore,
    private readonly live: LiveRuns,
  ) {}

  /** Marks a run's items for rebuilding at the next refresh. */
  invalidate(runId: string): void {
    this.stale.add(runId);
  }

  /** Re-reads the runs of the thread and rebuilds what changed. Returns whether anything did. */
  async refresh(runs: RunSummary[]): Promise<boolean> {
    const sameRuns =
      runs.length === this.runs.length &&
      runs.every((r, i) => r.run_id === this.runs[i]?.run_id && sameSummary(r, this.runs[i]!));
    if (sameRuns && this.stale.size === 0 && this.items.length > 0) return false;
    for (const r of runs) {
      const before = this.runs.find((x) => x.run_id === r.run_id);
      if (!before || !sameSummary(before, r)) this.stale.add(r.run_id);
    }
    this.runs = runs;
    const ids = new Set(runs.map((r) => r.run_id));
    for (const id of [...this.built.keys()]) if (!ids.has(id)) this.built.delete(id);
    const stale = [...this.stale];
    this.stale.clear();
    await Promise.all(
      runs.map(async (r, i) => {
        if (this.built.has(r.run_id) && !stale.includes(r.run_id)) return;
        this.built.set(r.run_id, buildRunItems(await loadRunData(this.store, r, i + 1, this.live)));
      }),
    );
    this.items = runs.flatMap((r) => this.built.get(r.run_id) ?? []);
    this.outlineCache = this.items.map((it) => [it.key, estimateHeight(it)] as OutlineEntry);
    this.version++;
    return true;
  }

  get runList(): readonly RunSummary[] {
    return this.runs;
  }

  outline(): OutlineEntry[] {
    return this.outlineCache;
  }

  page(from: number, to: number): TranscriptItem[] {
    return this.items.slice(from, Math.min(to, from + 200));
  }

  find(pred: (item: TranscriptItem) => boolean): TranscriptItem | undefined {
    return this.items.find(pred);
  }
}

function sameSummary(a: RunSummary, b: RunSummary): boolean {
  return (
    a.last_seq === b.last_seq &&
    a.state === b.state &&
    a.pending_approvals === b.pending_approvals &&
    a.updated_ms === b.updated_ms &&
    a.state_detail === b.state_detail
  );
}
