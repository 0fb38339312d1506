// When a run's log is compacted into one snapshot and a fresh segment (the engine's compact()): on
// release, and in the background while the run works, so a crash leaves a recent snapshot and a
// short segment tail to verify and replay (docs/design.md, "Durable barriers per step"). A failure
// is reported, never thrown: the log is intact either way.
import { endToKeep } from './end';
import { toWriteError } from './commitQueue';
import { isTerminalState } from '../api/schema';
import type { StoreContext } from './context';
import type { RunHandle } from './runHandle';

export class Compactor {
  constructor(
    private readonly c: StoreContext,
    private readonly compactAfter: number,
  ) {}

  /**
   * When a run is let go: once its log has grown at least as much as the part compacted before
   * (and by ≥ compactAfter commits), so each byte is rewritten O(log n) times in all; and a long run
   * (one that keeps its end: CoreOptions.keepEndFrom) when it has finished with commits since the
   * last compaction, so its end (end.ts) is kept as it finished and a view of it reads that, not the
   * whole log (one more rewrite per finished run).
   */
  async ifDue(h: RunHandle): Promise<void> {
    await h.compaction; // (one in the background first: this one starts from what it left)
    const runId = h.model.meta.run_id;
    const shape = this.c.engine.logShape(runId);
    const finished = isTerminalState(h.model.state) && shape.singles > 0 && h.model.lastSeq >= this.c.keepEndFrom;
    if (!finished && (shape.singles < this.compactAfter || shape.singles < shape.covered)) return;
    if (h.wholeFailed) return; // (its history could not be read: the next owner's load judges it)
    try {
      await h.writer?.flush();
      await this.c.loader.fillWhole(h); // (a run resumed from its resume point: read whole first)
      await this.c.engine.compact(runId, h.model.rebuildOps(), h.model.meta, endToKeep(h.model, this.c.keepEndFrom));
    } catch (err) {
      this.c.events.emit({ kind: 'write-error', run_id: runId, error: toWriteError(runId, err) });
    }
  }

  /**
   * While the run works (called at the barrier before a request, when the runner is about to wait
   * for the model): once the commits since the last compaction reach half of those it covers (and
   * ≥ compactAfter), so the tail stays under a third of the run and each byte is rewritten about
   * three times in all. It reads the model between commits (CommitQueue.exclusive), exactly as it is
   * on disk; an engine that can (compactBeside) writes it while the run's writes go on, and holds
   * them only for its swap; another holds the durable ones until it is done (deferred ones queue).
   */
  inBackground(h: RunHandle): void {
    if (!this.dueInBackground(h)) return;
    const runId = h.model.meta.run_id;
    if (h.model.partial) {
      // A run resumed from its resume point is read whole first (between its writes), then compacted.
      h.compacting = true;
      h.compaction = this.c.loader
        .makeWhole(h)
        .then(
          () => {
            h.compacting = false;
            h.compaction = null;
            if (h.owned) this.inBackground(h);
            return h.compaction ?? undefined;
          },
          () => undefined, // (reported by the read)
        )
        .finally(() => {
          if (h.model.partial) {
            h.compacting = false;
            h.compaction = null;
          }
        });
      return;
    }
    const engine = this.c.engine;
    const end = () => endToKeep(h.model, this.c.keepEndFrom);
    h.compacting = true;
    let beside: Promise<void> | undefined;
    const run = engine.compactBeside
      ? h
          .writer!.exclusive(() => {
            const critical = (fn: () => Promise<void>) => h.writer!.beside(fn);
            beside = engine.compactBeside!(runId, h.model.rebuildOps(), h.model.meta, end(), critical);
            beside.catch(() => undefined); // (awaited below)
            return Promise.resolve();
          })
          .then(() => beside)
      : h.writer!.exclusive(() => engine.compact(runId, h.model.rebuildOps(), h.model.meta, end()));
    h.compaction = run
      .catch((err: unknown) => {
        if (!h.owned) return; // let go or taken over meanwhile: nothing to report
        this.c.events.emit({ kind: 'write-error', run_id: runId, error: toWriteError(runId, err) });
      })
      .finally(() => {
        h.compacting = false;
        h.compaction = null;
      });
  }

  /** Whether inBackground would start a compaction now. */
  dueInBackground(h: RunHandle): boolean {
    const shape = this.c.engine.logShape(h.model.meta.run_id);
    return !h.compacting && !h.wholeFailed && shape.singles >= this.compactAfter && shape.singles * 2 >= shape.covered;
  }
}
