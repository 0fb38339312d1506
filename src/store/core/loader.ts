// The runs this store holds in memory, and how they get there: opening reads the index (never a run's
// log); a run's log is read when the run is first touched; a run another window owns is refreshed
// from its new commits on every read (cheap: one small read), so a read-only view follows the owner.
import type { Engine, IndexHead, LoadSink } from './engine';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError } from '../api/errors';
import type { IndexCache } from './indexCache';
import { RunHandle } from './runHandle';
import { CommitMismatchError, RunModel, type PointParts } from './runModel';
import type { RunMeta } from '../api/schema';
import type * as T from '../api/types';
import type { IndexEntry } from './storedSchema';
import { checkRunId } from './validate';
import type { StoreEvents } from './events';

export class RunLoader {
  readonly runs = new Map<string, RunHandle>();
  /** Reads of a run under way: concurrent readers share one (a run's log is read once, not once per reader). */
  private readonly reading = new Map<string, Promise<RunHandle | undefined>>();
  /**
   * Repairs a damaged run nobody holds, under its lock, as an owner would (set by lifecycle.ts);
   * false when someone else holds it (then it is only read, and reported).
   */
  repairUnowned: (runId: string) => Promise<boolean> = async () => false;

  constructor(
    private readonly engine: Engine,
    private readonly index: IndexCache,
    private readonly events: StoreEvents,
    private readonly cachedRuns: number,
    private readonly headRuns: number,
  ) {}

  /**
   * Opens from the index's head when the engine has a current one (the newest runs and every
   * unfinished one: what the Runs view's first page and startup show), else reads the whole index.
   * Never a run's log.
   */
  async open(): Promise<void> {
    const head = await this.engine.openIndexHead?.(this.headRuns);
    if (!head) return this.openWhole();
    this.events.opening = true;
    try {
      for (const e of head.entries) this.index.entries.set(e.run_id, e);
      for (const id of head.unindexed) await this.rebuildEntry(id);
    } finally {
      this.events.opening = false;
    }
    this.cutoff = head.cutoff;
    if (this.cutoff) this.index.beforeSave = () => this.complete();
    if (head.unfinished) this.unfinishedRead = this.addUnfinished(head.unfinished);
  }

  /**
   * The unfinished runs the head reads after its newest (IndexHead.unfinished), added as they come:
   * an entry already in memory is as new or newer, and a run deleted meanwhile stays deleted. When
   * they cannot be read, the whole index is (it holds every run), and its failure is the listing's.
   */
  private async addUnfinished(later: NonNullable<IndexHead['unfinished']>): Promise<void> {
    let part: Awaited<typeof later>;
    try {
      part = await later;
    } catch {
      return this.complete();
    }
    const known = (id: string) => this.index.entries.has(id) || this.index.deleted.has(id);
    for (const e of part.entries) if (!known(e.run_id)) this.index.entries.set(e.run_id, e);
    for (const id of part.unindexed) if (!known(id)) await this.rebuildEntry(id);
  }

  /** Every unfinished run is in memory once this resolves (the head's, read apart or not). */
  unfinishedRead: Promise<void> = Promise.resolve();

  /** Key of the oldest entry the head surely holds (null: the whole index is in memory). */
  cutoff: readonly [number, string] | null = null;
  private completing: Promise<void> | undefined;

  /** Reads the whole index once, when the store first needs it (opened from a head). */
  complete(): Promise<void> {
    if (!this.cutoff) return Promise.resolve();
    this.completing ??= this.openWhole(true).then(() => {
      this.cutoff = null;
      this.index.beforeSave = undefined;
    });
    return this.completing;
  }

  /**
   * Reads the index and reconciles it with the runs present. `late`: after opening from a head —
   * entries already in memory are as new or newer, and what changes what was listed is announced.
   */
  private async openWhole(late = false): Promise<void> {
    this.events.opening = !late;
    try {
      const st = await this.engine.openIndex();
      if (!st.writable) this.index.disableWrites();
      for (const r of st.reports) this.events.report(r);
      for (const n of st.notices)
        this.events.emit({ kind: 'recovered', run_id: null, file: n.file, message: n.message });
      if (st.notices.length > 0) this.index.markDirty(0); // write the rebuilt index now: one notice, not one per open
      for (const e of st.entries) if (!late || !this.index.entries.has(e.run_id)) this.index.entries.set(e.run_id, e);
      const present = new Set(st.present);
      for (const id of [...this.index.entries.keys()]) {
        if (present.has(id) || this.runs.get(id)?.owned) continue;
        this.index.delete(id);
        if (!late) continue;
        this.runs.delete(id);
        this.events.emit({ kind: 'run-deleted', run_id: id });
      }
      for (const id of present) {
        if (this.index.entries.has(id)) continue;
        if ((await this.rebuildEntry(id)) && late) this.events.emit({ kind: 'run-created', run_id: id });
      }
    } finally {
      this.events.opening = false;
    }
  }

  /** A run present without an entry is read to make one; false when it cannot be read (reported by its load). */
  private async rebuildEntry(id: string): Promise<boolean> {
    const h = await this.peek(id, true).catch(() => undefined); // (its summary: from its resume point will do)
    if (h) this.index.set(h.model.summary(), h.durableCommits, true);
    return !!h;
  }

  /** Quarantine is only done by the run's owner, or by anyone when nobody owns it. */
  async canRepair(runId: string): Promise<boolean> {
    if (this.runs.get(runId)?.owned) return true;
    return !(await this.engine.holder(runId));
  }

  /**
   * The run, loaded or refreshed; undefined if it does not exist. `fromPoint`: when it is not in memory,
   * it may be read from its resume point (RunModel.partial) — for a caller that needs only what a run
   * needs to go on.
   */
  async peek(runId: string, fromPoint = false): Promise<RunHandle | undefined> {
    checkRunId(runId);
    const h = this.runs.get(runId);
    if (h && (h.owned || h.damaged)) return h;
    let read = this.reading.get(runId);
    if (!read) {
      read = (h ? this.refresh(runId, h) : this.loadForReading(runId, fromPoint)).finally(() =>
        this.reading.delete(runId),
      );
      this.reading.set(runId, read);
    }
    return read;
  }

  /**
   * A run read from its resume point, made whole. One this instance owns: read again from all its
   * files between its writes (what it queued written first) and taken into the same model
   * (RunModel.becomeWhole), once however many ask; a read that finds damage reports it and throws
   * AgentCheckpointCorruptionError, and the run goes on as it was. One it only reads: read again
   * whole as any reader would (the handle to use from then on).
   */
  async makeWhole(h: RunHandle): Promise<RunHandle> {
    if (!h.model.partial) return h;
    if (!h.writer) {
      // Another window may write it meanwhile: read whole as a fresh reader (the handle it answers with).
      if (this.runs.get(h.model.meta.run_id) === h) this.runs.delete(h.model.meta.run_id);
      return this.mustPeek(h.model.meta.run_id);
    }
    h.whole ??= h
      .serial(() => this.fillWhole(h))
      .finally(() => {
        h.whole = null;
      });
    await h.whole;
    return h;
  }

  /** makeWhole's read, inside the run's turn (the caller holds it, or nobody writes the run here). */
  async fillWhole(h: RunHandle): Promise<void> {
    if (!h.model.partial) return;
    if (h.wholeFailed) throw h.wholeFailed;
    await h.writer?.flush();
    const runId = h.model.meta.run_id;
    const fail = async (why: string, file: string | null = null) => {
      // Not read again while held here (nor a point written); the point goes — after one being written
      // lands — so the run's next load reads it whole and the owner judges what is wrong as it always
      // does (what was lost recorded in the run).
      h.wholeFailed = new AgentCheckpointCorruptionError(
        `Run ${runId} could not be read whole: ${why}.`,
        runId,
        file ?? undefined,
      );
      await h.pointWrite;
      await this.engine.dropResumePoint?.(runId);
      return h.wholeFailed;
    };
    let whole: RunModel | undefined;
    const res = await this.engine.readWhole?.(
      runId,
      sinkInto(
        () => whole!,
        (m) => (whole = new RunModel(m)),
      ),
    );
    if (!res || !whole) throw await fail('its files hold no run');
    if (res.report) {
      this.events.report(res.report);
      throw await fail(res.report.reason, res.report.file);
    }
    if (res.commits !== h.durableCommits)
      throw await fail(`its log holds ${res.commits} commits, ${h.durableCommits} were written`);
    try {
      h.model.becomeWhole(whole);
    } catch (err) {
      if (err instanceof CommitMismatchError) throw await fail(err.message);
      throw err;
    }
  }

  /** A run another window owns: its new commits applied (or read again when its files were replaced). */
  private async refresh(runId: string, h: RunHandle): Promise<RunHandle | undefined> {
    const more = await this.engine.loadMore(
      runId,
      sinkInto(() => h.model),
    );
    if (more === 'reload') {
      if (this.runs.get(runId) === h) this.runs.delete(runId);
      return this.loadForReading(runId);
    }
    if (more > 0) {
      h.durableCommits += more;
      this.index.set(h.model.summary(), h.durableCommits, false);
    }
    return h;
  }

  async mustPeek(runId: string, fromPoint = false): Promise<RunHandle> {
    const h = await this.peek(runId, fromPoint);
    if (!h) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    return h;
  }

  /** A run this instance does not hold: read without moving anything; damage found → repaired under its lock if nobody holds it. */
  private async loadForReading(runId: string, fromPoint = false): Promise<RunHandle | undefined> {
    const h = await this.load(runId, false, fromPoint);
    // (the owner's handle, when this window acquired the run meanwhile: its damage was its acquire's to report)
    if (!h?.loadReport || h.owned) return h;
    if (await this.repairUnowned(runId).catch(() => false)) return this.runs.get(runId);
    h.damaged = true;
    this.events.report(h.loadReport);
    return h;
  }

  /**
   * Builds the run from its files. `repair`: this instance holds the run's lock, so bad files may be
   * moved to quarantine. What was wrong is left on the handle (loadReport) for the caller to report.
   */
  async load(runId: string, repair: boolean, fromPoint = false): Promise<RunHandle | undefined> {
    let model: RunModel | undefined;
    const sink = sinkInto(
      () => model!,
      (m) => (model = new RunModel(m)),
      (m) => (model = m),
    );
    const entry = this.index.get(runId);
    const opts = {
      repair,
      expectCommits: entry?.durable_commits ?? 0,
      ...(entry ? { knownMeta: metaOf(entry) } : {}),
    };
    // From its resume point when there is one that fits (else read whole, which judges what does not).
    let res =
      fromPoint && this.engine.loadFromPoint
        ? await this.engine.loadFromPoint(runId, sink, opts).catch(() => undefined)
        : undefined;
    if (!res || !(model as RunModel | undefined)?.partial) {
      model = undefined;
      res = await this.engine.loadRun(runId, sink, opts);
    }
    if (!res || !model) return undefined;
    const h = new RunHandle(model, res.commits);
    for (const n of res.notices)
      this.events.emit({ kind: 'recovered', run_id: runId, file: n.file, message: n.message });
    h.loadWitness = res.witness;
    if (res.report) h.loadReport = withIndexEvidence(res.report, entry);
    // A read begun before this window acquired the run ends after: the owner's handle stays (a
    // reader's in its place would make the owner's next write find the run not owned).
    const now = this.runs.get(runId);
    if (!repair && now?.owned) return now;
    this.runs.set(runId, h);
    this.evictReadOnly();
    // A read that found acknowledged data lost leaves the index as it was: it is the second witness of
    // what had been written, for the owner's repair (which records the loss in the run) to read.
    const keepEvidence = !repair && res.report?.data_lost === true && entry !== undefined;
    if (!keepEvidence && (this.index.get(runId) || !this.events.opening))
      this.index.set(model.summary(), res.commits, false);
    return h;
  }

  private evictReadOnly(): void {
    const readOnly = [...this.runs.entries()].filter(([, h]) => !h.owned);
    for (const [id] of readOnly.slice(0, Math.max(0, readOnly.length - this.cachedRuns))) this.runs.delete(id);
  }
}

/** The RunMeta part of an index entry. */
function metaOf(e: IndexEntry): RunMeta {
  return {
    run_id: e.run_id,
    thread_id: e.thread_id,
    title: e.title,
    task: e.task,
    agent_name: e.agent_name,
    model: e.model,
    created_ms: e.created_ms,
    forked_from: e.forked_from,
    parent_run_id: e.parent_run_id,
  };
}

/**
 * The index entry is a second (lagging) witness: it fills in what the run's own witness could not
 * say (no witness: an older run, or the witness itself was bad).
 */
function withIndexEvidence(r: T.CorruptionReport, entry: IndexEntry | undefined): T.CorruptionReport {
  if (!r.data_lost || !entry) return r;
  const fell = r.fell_back_to_seq ?? 0;
  const lostSeqs =
    entry.last_seq > fell ? { from: fell + 1, to: Math.max(entry.last_seq, r.lost_seqs?.to ?? 0) } : r.lost_seqs;
  const indexKnows = entry.last_seq > fell;
  return {
    ...r,
    lost_seqs: lostSeqs,
    state_before: r.state_before ?? (indexKnows ? entry.state : null),
    step_before: r.step_before ?? (indexKnows ? entry.step : null),
  };
}

/** Applies loaded commits to a model; a commit that does not fit throws (the chain stops there). */
export function sinkInto(
  model: () => RunModel,
  onMeta?: (m: RunMeta) => void,
  /** Takes a run read from its resume point (RunModel.fromPoint); absent: the sink reads runs whole only. */
  onPoint?: (m: RunModel) => void,
): LoadSink {
  let meta: RunMeta | undefined;
  return {
    meta: (m) => {
      meta = m;
      onMeta?.(m);
    },
    ...(onPoint && {
      point: (parts: PointParts, file: string) => {
        if (!meta) throw new CommitMismatchError('a resume point before the run meta');
        onPoint(RunModel.fromPoint(meta, parts, file));
      },
    }),
    commit: (body, file) => {
      const mdl = model();
      mdl.check(body.ops, true);
      mdl.apply(body.ops);
      if (file) for (const op of body.ops) if (op.op === 'record') mdl.unverified.set(op.record.seq, file);
    },
    compacted: (history, file) => model().adoptCompacted(history, file),
  };
}
