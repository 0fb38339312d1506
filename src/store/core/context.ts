// What the parts of the store share (store.ts wires them): the engine, the clock, the events, the
// run index cache, the runs in memory (loader.ts) and the gate every call passes (open, not closed).
import type { Engine } from './engine';
import { StoreClosedError } from '../api/errors';
import type { IndexCache } from './indexCache';
import type { RunLoader } from './loader';
import type * as T from '../api/types';
import type { StoreEvents } from './events';

export { StoreEvents } from './events';

export interface CoreOptions {
  now?: () => number;
  /**
   * Longest a deferred checkpoint waits for the next durable write of its run before it is written
   * on its own (docs/design.md, "Durable barriers"). The runner makes a barrier every step, so this
   * is a backstop for callers that do not.
   */
  deferMs?: number;
  indexStructuralMs?: number;
  indexProgressMs?: number;
  /** Attached before open, so corruption found while opening is reported too. */
  onEvent?: (e: T.StoreEvent) => void;
  /**
   * A run's log is compacted once it has this many commits since the last compaction: on release when
   * they are as many as before it, in the background while it works when half as many (compaction.ts).
   */
  compactAfterCommits?: number;
  /**
   * A compaction keeps the run's end (end.ts) when the run has at least this many checkpoints (default
   * 1000: a view reads the whole of a shorter run quickly, and its end would be a large part of it).
   */
  keepEndFrom?: number;
  /** Runs that are only read (owned elsewhere or not at all) kept in memory. */
  cachedRuns?: number;
  /** Newest runs the index's head holds, beside every unfinished one (default HEAD_RUNS, indexCache.ts). */
  headRuns?: number;
}

/** Every call waits for the store to open and is refused once it is closed. */
export class StoreGate {
  closed = false;
  private ready: Promise<void> = Promise.resolve();
  /** The opening finished well: a call need not wait for it (isOpen). */
  private done = true;
  /** Reads the rest of the index when the opening read only its head (RunLoader.complete). */
  private whole: () => Promise<void> = () => Promise.resolve();
  private wholeDone = true;

  start(opening: Promise<void>, whole?: () => Promise<void>): void {
    this.ready = opening;
    this.done = false;
    if (whole) {
      this.whole = whole;
      this.wholeDone = false;
    }
    opening.then(
      () => {
        if (this.ready === opening) this.done = true;
      },
      () => undefined, // surfaced by the first call
    );
  }

  /** Open now (opened() would resolve at once): the step's calls skip waiting for it. */
  get isOpen(): boolean {
    return this.done && this.wholeDone && !this.closed;
  }

  /** Open enough to list from the index's head (listing answers from it when it can). */
  async listable(): Promise<void> {
    if (this.closed) throw new StoreClosedError();
    await this.ready;
    if (this.closed) throw new StoreClosedError();
  }

  /** Open, with the whole index in memory. */
  async opened(): Promise<void> {
    await this.listable();
    if (!this.wholeDone) {
      await this.whole();
      this.wholeDone = true;
    }
    if (this.closed) throw new StoreClosedError();
  }
}

export interface StoreContext {
  readonly engine: Engine;
  readonly now: () => number;
  readonly events: StoreEvents;
  readonly index: IndexCache;
  readonly loader: RunLoader;
  readonly gate: StoreGate;
  /** CoreOptions.keepEndFrom. */
  readonly keepEndFrom: number;
}
