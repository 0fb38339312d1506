// The run index kept in memory and written behind. Progress (last seq, step) changes every
// checkpoint and is cheap to recompute from a run's log, so it is written lazily (at most every
// progressMs, and on flush/close); changes a listing must not miss (created, deleted, state,
// pending approvals) are written within structuralMs. Either way the index is a cache: the
// runs are the truth, and a stale or lost index is rebuilt from them.
import type { Engine } from './engine';
import type { RunSummary } from '../api/schema';
import type { IndexEntry } from './storedSchema';
import { merged } from './copy';

export class IndexCache {
  readonly entries = new Map<string, IndexEntry>();
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private saving: Promise<void> | null = null;
  private enabled = true;

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

  get(runId: string): IndexEntry | undefined {
    return this.entries.get(runId);
  }

  set(summary: RunSummary, durableCommits: number, structural: boolean): void {
    const prev = this.entries.get(summary.run_id);
    this.entries.set(summary.run_id, merged<IndexEntry>(summary, { durable_commits: durableCommits }));
    const changed =
      !prev ||
      prev.state !== summary.state ||
      prev.pending_approvals !== summary.pending_approvals ||
      prev.title !== summary.title ||
      prev.state_detail !== summary.state_detail;
    this.markDirty(structural || changed ? this.structuralMs : this.progressMs);
  }

  delete(runId: string): void {
    if (this.entries.delete(runId)) this.markDirty(this.structuralMs);
  }

  markDirty(withinMs: number): void {
    this.dirty = true;
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

  /** Writes the index if it changed. Saves are serialised; a change during a save writes again. */
  async save(): Promise<void> {
    while (this.saving) await this.saving.catch(() => undefined);
    if (!this.dirty || !this.enabled) return;
    this.dirty = false;
    this.saving = this.engine.saveIndex([...this.entries.values()]).catch((err: unknown) => {
      this.dirty = true;
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
