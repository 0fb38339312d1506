// A thread's transcript as the run view pages it: the runs of a conversation in order, each run
// planned from the store (kept until that run changes), one outline (key + height estimate per
// item) so the webview can size its scrollbar without the items, and the items built per page.
// The first read of a long thread plans only its end, from the newest checkpoints: the view paints
// that while the rest is read.
import type { RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { byTurnOrder } from '../shared/runs';
import type { ItemKind, OutlineEntry, TranscriptItem } from './items';
import { type LiveRuns, loadRunData, type RunData } from './runData';
import { type PlannedItem, planRunItems } from './transcript';

export { loadRunData, type LiveRuns };

/** Checkpoints read of a long run for the first paint: a few dozen steps, more than the first screen shows. */
export const NEWEST_RECORDS = 200;
/** Most items one page request gets. */
const PAGE_MAX = 200;

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

interface RunPlan {
  data: RunData;
  items: PlannedItem[];
}

export class ThreadTranscript {
  private runs: RunSummary[] = [];
  /** Each run's plan from its whole history; a plan of its newest checkpoints only is never kept here. */
  private readonly plans = new Map<string, RunPlan>();
  private readonly stale = new Set<string>();
  /** What the first read took of runs it did not read whole (their newest checkpoints): for their headers. */
  private readonly newest = new Map<string, RunData>();
  private items: PlannedItem[] = [];
  private outlineCache: OutlineEntry[] = [];
  /** The outline holds only the thread's newest items: `refresh` reads the rest. */
  partial = false;
  version = 0;

  constructor(
    private readonly store: CheckpointStore,
    private readonly live: LiveRuns,
  ) {}

  /** Marks a run's items for rebuilding at the next refresh. */
  invalidate(runId: string): void {
    this.stale.add(runId);
  }

  /** Whether the whole thread has been read (a refresh after a first, partial one). */
  get complete(): boolean {
    return this.version > 0 && !this.partial;
  }

  /**
   * The end of the thread from the newest checkpoints of its latest runs, until it has `minItems`
   * items: what the view paints first. Runs short enough are read whole (and kept).
   */
  async refreshNewest(runs: RunSummary[], minItems: number): Promise<void> {
    const planned: PlannedItem[][] = [];
    let count = 0;
    let from = runs.length;
    while (from > 0 && count < minItems) {
      from--;
      const run = runs[from]!;
      let data = await loadRunData(this.store, run, from + 1, this.live, { newest: NEWEST_RECORDS });
      let items = planRunItems(data);
      // Too little of the end in its newest checkpoints (long steps): the run is read whole.
      if (data.newestOnly && count + items.length < minItems) {
        data = await loadRunData(this.store, run, from + 1, this.live);
        items = planRunItems(data);
      }
      if (data.newestOnly) this.newest.set(run.run_id, data);
      else this.plans.set(run.run_id, { data, items });
      planned.unshift(items);
      count += items.length;
    }
    this.runs = runs;
    this.items = planned.flat();
    this.outlineCache = this.items.map((it) => [it.key, it.height] as OutlineEntry);
    this.partial = true;
    this.version++;
  }

  /** Re-reads the runs of the thread and plans what changed. Returns whether anything did. */
  async refresh(runs: RunSummary[]): Promise<boolean> {
    const sameRuns =
      runs.length === this.runs.length &&
      runs.every((r, i) => r.run_id === this.runs[i]?.run_id && sameSummary(r, this.runs[i]!));
    if (sameRuns && this.stale.size === 0 && this.complete) return false;
    for (const r of runs) {
      const before = this.plans.get(r.run_id)?.data.run;
      if (!before || !sameSummary(before, r)) this.stale.add(r.run_id);
    }
    this.runs = runs;
    const ids = new Set(runs.map((r) => r.run_id));
    for (const id of [...this.plans.keys()]) if (!ids.has(id)) this.plans.delete(id);
    const stale = new Set(this.stale);
    this.stale.clear();
    await Promise.all(
      runs.map(async (r, i) => {
        if (this.plans.has(r.run_id) && !stale.has(r.run_id)) return;
        const data = await loadRunData(this.store, r, i + 1, this.live);
        this.plans.set(r.run_id, { data, items: planRunItems(data) });
      }),
    );
    this.items = runs.flatMap((r) => this.plans.get(r.run_id)?.items ?? []);
    this.outlineCache = this.items.map((it) => [it.key, it.height] as OutlineEntry);
    this.newest.clear();
    this.partial = false;
    this.version++;
    return true;
  }

  get runList(): readonly RunSummary[] {
    return this.runs;
  }

  /** What was last read of a run, whole or its newest checkpoints (enough for its header). */
  dataOf(runId: string): RunData | undefined {
    return this.plans.get(runId)?.data ?? this.newest.get(runId);
  }

  outline(): OutlineEntry[] {
    return this.outlineCache;
  }

  get size(): number {
    return this.items.length;
  }

  /** Items [from, to), built now (each once per read of its run). */
  page(from: number, to: number): TranscriptItem[] {
    return this.items.slice(from, Math.min(to, from + PAGE_MAX)).map((p) => p.build());
  }

  indexOf(key: string): number {
    return this.items.findIndex((p) => p.key === key);
  }

  /** The first tool call of the thread waiting for a decision. */
  firstPendingKey(): string | undefined {
    return this.items.find((p) => p.pending)?.key;
  }

  /** The first item that matches (every item up to it is built to look: for tests and rare lookups). */
  find(pred: (item: TranscriptItem) => boolean): TranscriptItem | undefined {
    for (const p of this.items) {
      const item = p.build();
      if (pred(item)) return item;
    }
    return undefined;
  }

  /** The first item of a kind that matches (only items of that kind are built to look). */
  findKind<K extends ItemKind>(
    kind: K,
    pred: (item: Extract<TranscriptItem, { kind: K }>) => boolean,
  ): Extract<TranscriptItem, { kind: K }> | undefined {
    for (const p of this.items) {
      if (p.kind !== kind) continue;
      const item = p.build() as Extract<TranscriptItem, { kind: K }>;
      if (pred(item)) return item;
    }
    return undefined;
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
