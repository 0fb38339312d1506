// The run index kept in memory and written behind. Progress (last seq, step) changes every
// checkpoint and is cheap to recompute from a run's log, so it is written lazily (at most every
// progressMs, and on flush/close); changes a listing must not miss (created, deleted, state,
// pending approvals) are written within structuralMs. Either way the index is a cache: the
// runs are the truth, and a stale or lost index is rebuilt from them. A run this store writes is
// followed live (follow): its entry is built from the run in memory when the index is read or saved,
// not at each of the ten or so ops a step hands over.
import type { Engine } from './engine';
import { isTerminalState, type RunSummary } from '../api/schema';
import type { IndexEntry } from './storedSchema';
import { merged } from './copy';

/** Newest runs an index head holds (beyond every unfinished one): the Runs view's first page and some to spare. */
export const HEAD_RUNS = 600;

/**
 * The head of an index (Engine.openIndexHead): its `newest` entries and every unfinished run's, and
 * the key of the oldest of the newest (null: that is every entry).
 */
export function headOf(
  entries: readonly IndexEntry[],
  newest = HEAD_RUNS,
): { runs: IndexEntry[]; cutoff: [number, string] | null } {
  const sorted = [...entries].sort((a, b) => b.updated_ms - a.updated_ms || (a.run_id < b.run_id ? 1 : -1));
  if (sorted.length <= newest) return { runs: sorted, cutoff: null };
  const last = sorted[newest - 1]!;
  const runs = sorted.slice(0, newest);
  for (const e of sorted.slice(newest)) if (!isTerminalState(e.state)) runs.push(e);
  return { runs, cutoff: [last.updated_ms, last.run_id] };
}

/** What a followed run's entry is built from: the run in memory (RunModel). */
export interface LiveRun {
  summary(): RunSummary;
  readonly state: RunSummary['state'];
  readonly detail: string | null;
  readonly pending: number;
  readonly meta: { readonly title: string };
}

/** The fields whose change a listing must not miss (written within structuralMs). */
interface Shown {
  state: RunSummary['state'];
  pending_approvals: number;
  title: string;
  state_detail: string | null;
}

export class IndexCache {
  /** The entries as last built; a followed run's is built when read (entries, get, save). */
  private readonly built = new Map<string, IndexEntry>();
  /** Runs changed since their entry was built: the run, its durable commit count, what a listing would show. */
  private readonly live = new Map<string, { run: LiveRun; commits: number; shown: Shown }>();
  private dirty = false;
  /** Whether what is dirty includes a change a listing must not miss (not progress alone). */
  private structural = false;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private saving: Promise<void> | null = null;
  private enabled = true;
  /** Set while only the index's head is in memory: reads the rest, so a save never writes a part of it. */
  beforeSave: (() => Promise<void>) | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly structuralMs: number,
    private readonly progressMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  /** A newer index file must not be overwritten by this version (left untouched). */
  disableWrites(): void {
    this.enabled = false;
  }

  /** Every entry, the followed runs' as they are now. */
  get entries(): Map<string, IndexEntry> {
    for (const runId of this.live.keys()) this.build(runId);
    return this.built;
  }

  get(runId: string): IndexEntry | undefined {
    if (this.live.has(runId)) this.build(runId);
    return this.built.get(runId);
  }

  set(summary: RunSummary, durableCommits: number, structural: boolean): void {
    const prev = this.get(summary.run_id);
    this.live.delete(summary.run_id);
    this.built.set(summary.run_id, merged<IndexEntry>(summary, { durable_commits: durableCommits }));
    this.markDirty(structural || !prev || changed(shownOf(prev), summary) ? this.structuralMs : this.progressMs);
  }

  /**
   * The run changed in memory (a commit, or ops applied ahead of their barrier): its entry is built
   * from `run`, with `durableCommits`, when the index is next read or saved — not now: a step hands
   * over about ten ops. Until then the cache holds `run` (a save comes within progressMs).
   */
  follow(run: LiveRun, runId: string, durableCommits: number): void {
    const now: Shown = {
      state: run.state,
      pending_approvals: run.pending,
      title: run.meta.title,
      state_detail: run.detail,
    };
    const prev = this.live.get(runId)?.shown ?? this.built.get(runId);
    this.live.set(runId, { run, commits: durableCommits, shown: now });
    this.markDirty(!prev || changed(prev, now) ? this.structuralMs : this.progressMs);
  }

  /** A followed run's entry, built as the run is now; it is no longer followed (a change follows it again). */
  private build(runId: string): void {
    const f = this.live.get(runId)!;
    this.live.delete(runId);
    this.built.set(runId, merged<IndexEntry>(f.run.summary(), { durable_commits: f.commits }));
  }

  /** Runs deleted since open: an entry read late (the head's unfinished runs) does not bring one back. */
  readonly deleted = new Set<string>();

  delete(runId: string): void {
    this.deleted.add(runId);
    const followed = this.live.delete(runId);
    if (this.built.delete(runId) || followed) this.markDirty(this.structuralMs);
  }

  markDirty(withinMs: number): void {
    this.dirty = true;
    if (withinMs <= this.structuralMs) this.structural = true;
    if (!this.enabled) return;
    const due = Date.now() + withinMs;
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerDue = Infinity;
      this.save().catch((err: Error) => this.onError(err));
    }, withinMs);
    this.timer.unref();
  }

  /**
   * Writes the index if it changed. Saves are serialised; a change during a save writes again.
   * `progressToo: false` (a flush) leaves a change of progress alone to its timer: a caller flushing
   * every step would otherwise rewrite the whole index, with two fsyncs, at every step.
   */
  async save(progressToo = true): Promise<void> {
    if (this.beforeSave && this.dirty && this.enabled) await this.beforeSave();
    while (this.saving) await this.saving.catch(() => undefined);
    if (!this.dirty || !this.enabled || (!progressToo && !this.structural)) return;
    const structural = this.structural;
    this.dirty = false;
    this.structural = false;
    // This save writes everything that is dirty: a timer armed for it would only write the same index
    // again (a flush right after createRun, then the run's structural timer 200 ms later, in the middle
    // of the run's first steps). A change from now on arms its own; a failed save arms it again.
    const due = this.timerDue;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerDue = Infinity;
    this.saving = this.engine.saveIndex([...this.entries.values()]).catch((err: unknown) => {
      this.dirty = true;
      this.structural ||= structural;
      if (due !== Infinity) this.markDirty(Math.max(0, due - Date.now()));
      throw err;
    });
    try {
      await this.saving;
    } finally {
      this.saving = null;
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

const shownOf = (e: RunSummary): Shown => ({
  state: e.state,
  pending_approvals: e.pending_approvals,
  title: e.title,
  state_detail: e.state_detail,
});

const changed = (a: Shown, b: Shown): boolean =>
  a.state !== b.state ||
  a.pending_approvals !== b.pending_approvals ||
  a.title !== b.title ||
  a.state_detail !== b.state_detail;
