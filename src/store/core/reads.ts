// The read half of the store core: opening, lazy loading of runs, reads, events. A run's log is
// read when the run is first touched; a run another window owns is refreshed from its new commits
// on every read (cheap: a directory listing), so a read-only view follows the owner.
import { copyJson } from './copy';
import type { Engine, LoadSink } from './engine';
import { CheckpointNotFoundError, InvalidInputError, InvalidKeyError, StoreClosedError } from '../api/errors';
import { IndexCache } from './indexCache';
import { toWriteError } from './runWriter';
import { RunHandle } from './runHandle';
import { RunModel } from './runModel';
import {
  isTerminalState,
  type Approval,
  type CheckpointRecord,
  type Effect,
  type RunMeta,
  type RunSummary,
} from '../api/schema';
import type * as T from '../api/types';
import type { IndexEntry } from './storedSchema';
import { checkRunId } from './validate';

export interface CoreOptions {
  now?: () => number;
  /** Write-behind delay of deferred checkpoints (README: ≤ 200 ms). */
  deferMs?: number;
  indexStructuralMs?: number;
  indexProgressMs?: number;
  /** Attached before open, so corruption found while opening is reported too. */
  onEvent?: (e: T.StoreEvent) => void;
  /** A released run's log is compacted once it has this many commits since the last compaction (and as many as before it). */
  compactAfterCommits?: number;
  /** Runs that are only read (owned elsewhere or not at all) kept in memory. */
  cachedRuns?: number;
}

export abstract class StoreReads {
  protected readonly runs = new Map<string, RunHandle>();
  protected readonly listeners = new Set<(e: T.StoreEvent) => void>();
  protected closed = false;
  readonly index: IndexCache;
  readonly now: () => number;
  /** Corruption found while opening (also emitted to opts.onEvent). */
  readonly openReports: T.CorruptionReport[] = [];
  private readonly reportedFiles = new Set<string>();
  private opening = false;
  private readonly cachedRuns: number;

  constructor(
    readonly engine: Engine,
    opts: CoreOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.cachedRuns = opts.cachedRuns ?? 16;
    this.index = new IndexCache(engine, opts.indexStructuralMs ?? 200, opts.indexProgressMs ?? 30_000, (err) =>
      this.emit({ kind: 'write-error', run_id: null, error: toWriteError(null, err) }),
    );
    if (opts.onEvent) this.listeners.add(opts.onEvent);
    engine.setReporter((r) => this.report(r));
  }

  /** Reads the index (never the runs' logs) and reconciles it with the runs present. */
  async init(): Promise<void> {
    this.opening = true;
    try {
      const st = await this.engine.openIndex();
      if (!st.writable) this.index.disableWrites();
      for (const r of st.reports) this.report(r);
      for (const n of st.notices) this.emit({ kind: 'recovered', run_id: null, file: n.file, message: n.message });
      if (st.notices.length > 0) this.index.markDirty(0); // write the rebuilt index now: one notice, not one per open
      for (const e of st.entries) this.index.entries.set(e.run_id, e);
      const present = new Set(st.present);
      for (const id of [...this.index.entries.keys()]) if (!present.has(id)) this.index.delete(id);
      for (const id of present) {
        if (this.index.entries.has(id)) continue;
        const h = await this.peek(id).catch(() => undefined); // unreadable runs were reported by the load
        if (h) this.index.set(h.model.summary(), h.durableCommits, true);
      }
    } finally {
      this.opening = false;
    }
  }

  onEvent(listener: (e: T.StoreEvent) => void): T.Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  protected emit(e: T.StoreEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch {
        // a listener's bug must not break a write
      }
    }
  }

  protected report(r: T.CorruptionReport): void {
    if (r.quarantined.length === 0 && this.reportedFiles.has(r.file)) return; // the same unmoved file, read again
    this.reportedFiles.add(r.file);
    if (this.opening) this.openReports.push(r);
    this.emit({ kind: 'corruption', report: r });
  }

  private ready: Promise<void> = Promise.resolve();

  /** Starts opening in the background (factories return the store at once; calls wait for it). */
  start(): this {
    this.ready = this.init();
    this.ready.catch(() => undefined); // surfaced by the first call
    return this;
  }

  /** Resolves once the store is open (rejects with what opening found, e.g. an unreadable folder). */
  async whenOpen(): Promise<void> {
    await this.opened();
  }

  /** Every call: the store is open (opening finished) and not closed. */
  protected async opened(): Promise<void> {
    if (this.closed) throw new StoreClosedError();
    await this.ready;
    if (this.closed) throw new StoreClosedError();
  }

  /** Quarantine is only done by the run's owner, or by anyone when nobody owns it. */
  protected async canRepair(runId: string): Promise<boolean> {
    if (this.runs.get(runId)?.owned) return true;
    return !(await this.engine.holder(runId));
  }

  /**
   * Repairs a damaged run nobody holds: under its lock, like an owner would (bad files moved to
   * quarantine, the damage recorded in its log). Implemented by the write half; false when someone
   * else holds the run (then it is only read, and reported).
   */
  protected abstract repairUnowned(runId: string): Promise<boolean>;

  /** The run, loaded or refreshed; undefined if it does not exist. */
  protected async peek(runId: string): Promise<RunHandle | undefined> {
    checkRunId(runId);
    const h = this.runs.get(runId);
    if (!h) return this.loadForReading(runId);
    if (h.owned || h.damaged) return h;
    const more = await this.engine.loadMore(
      runId,
      sinkInto(() => h.model),
    );
    if (more === 'reload') {
      this.runs.delete(runId);
      return this.loadForReading(runId);
    }
    if (more > 0) {
      h.durableCommits += more;
      this.index.set(h.model.summary(), h.durableCommits, false);
    }
    return h;
  }

  /** A run this instance does not hold: read without moving anything; damage found → repaired under its lock if nobody holds it. */
  private async loadForReading(runId: string): Promise<RunHandle | undefined> {
    const h = await this.load(runId, false);
    if (!h?.loadReport) return h;
    if (await this.repairUnowned(runId).catch(() => false)) return this.runs.get(runId);
    h.damaged = true;
    this.report(h.loadReport);
    return h;
  }

  /**
   * Builds the run from its files. `repair`: this instance holds the run's lock, so bad files may be
   * moved to quarantine. What was wrong is left on the handle (loadReport) for the caller to report.
   */
  protected async load(runId: string, repair: boolean): Promise<RunHandle | undefined> {
    let model: RunModel | undefined;
    const sink = sinkInto(
      () => model!,
      (m) => (model = new RunModel(m)),
    );
    const entry = this.index.get(runId);
    const res = await this.engine.loadRun(runId, sink, {
      repair,
      expectCommits: entry?.durable_commits ?? 0,
      ...(entry ? { knownMeta: metaOf(entry) } : {}),
    });
    if (!res || !model) return undefined;
    const h = new RunHandle(model, res.commits);
    for (const n of res.notices) this.emit({ kind: 'recovered', run_id: runId, file: n.file, message: n.message });
    h.loadWitness = res.witness;
    if (res.report) h.loadReport = withIndexEvidence(res.report, entry);
    this.runs.set(runId, h);
    this.evictReadOnly();
    if (this.index.get(runId) || !this.opening) this.index.set(model.summary(), res.commits, false);
    return h;
  }

  private evictReadOnly(): void {
    const readOnly = [...this.runs.entries()].filter(([, h]) => !h.owned);
    for (const [id] of readOnly.slice(0, Math.max(0, readOnly.length - this.cachedRuns))) this.runs.delete(id);
  }

  protected async mustPeek(runId: string): Promise<RunHandle> {
    await this.opened();
    const h = await this.peek(runId);
    if (!h) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    return h;
  }

  async listRuns(opts: { limit?: number; cursor?: string } = {}): Promise<T.RunPage> {
    await this.opened();
    const limit = opts.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new InvalidInputError('limit must be an integer from 1 to 1000');
    const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    const all = [...this.index.entries.values()].sort(
      (a, b) => b.updated_ms - a.updated_ms || (a.run_id < b.run_id ? 1 : -1),
    );
    const start = after
      ? all.findIndex((e) => e.updated_ms < after[0] || (e.updated_ms === after[0] && e.run_id < after[1]))
      : 0;
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const runs = page.map(({ durable_commits: _, ...s }) => copyJson(s));
    const last = page[page.length - 1];
    const more = start >= 0 && start + limit < all.length;
    return more && last ? { runs, cursor: encodeCursor(last.updated_ms, last.run_id) } : { runs };
  }

  async rescan(): Promise<boolean> {
    await this.opened();
    let changed = false;
    const present = new Set(await this.engine.listRunIds());
    for (const id of [...this.index.entries.keys()]) {
      if (present.has(id) || this.runs.get(id)?.owned) continue;
      this.runs.delete(id);
      this.index.delete(id);
      this.emit({ kind: 'run-deleted', run_id: id });
      changed = true;
    }
    for (const id of present) {
      const known = this.index.get(id);
      if (this.runs.get(id)?.owned || (known && isTerminalState(known.state))) continue;
      // A run not in memory is loaded only if its log grew: a focus event must not re-read every paused run.
      if (
        known &&
        !this.runs.has(id) &&
        ((await this.engine.lastCommit(id).catch(() => undefined)) ?? Infinity) <= known.durable_commits
      )
        continue;
      const h = await this.peek(id).catch(() => undefined); // an unreadable run was reported by its load
      if (!h) continue;
      const now = h.model.summary(); // peek has already put it in the index
      if (
        known &&
        now.last_seq === known.last_seq &&
        now.state === known.state &&
        now.pending_approvals === known.pending_approvals
      )
        continue;
      this.emit({ kind: known ? 'run-updated' : 'run-created', run_id: id });
      changed = true;
    }
    return changed;
  }

  async getRun(runId: string): Promise<RunSummary | undefined> {
    await this.opened();
    const h = await this.peek(runId);
    return h ? h.model.summary() : undefined;
  }

  async owner(runId: string): Promise<T.OwnerInfo | undefined> {
    await this.opened();
    checkRunId(runId);
    const mine = this.runs.get(runId);
    if (mine?.owned) return { ...mine.lease!.owner };
    return this.engine.holder(runId);
  }

  async latest(runId: string): Promise<CheckpointRecord> {
    const h = await this.mustPeek(runId);
    const rec = h.model.verified(h.model.lastSeq);
    if (!rec)
      throw new CheckpointNotFoundError(
        `Run ${runId} has no usable checkpoint${h.damaged ? ' (its log is damaged; see the corruption report)' : ''}.`,
        runId,
      );
    return copyJson(rec);
  }

  async get(runId: string, seq: number): Promise<CheckpointRecord | undefined> {
    const h = await this.mustPeek(runId);
    const rec = Number.isInteger(seq) && seq >= 1 ? h.model.verified(seq) : undefined;
    return rec ? copyJson(rec) : undefined;
  }

  async list(runId: string, opts: T.ListOptions = {}): Promise<CheckpointRecord[]> {
    const h = await this.mustPeek(runId);
    const limit = opts.limit ?? 100;
    const top = Math.min(h.model.records.length, (opts.before ?? Infinity) - 1);
    const out: CheckpointRecord[] = [];
    for (let s = top; s >= 1 && out.length < limit; s--) out.push(copyJson(h.model.verified(s)!));
    return out;
  }

  async loadSnapshot(runId: string, seq?: number): Promise<T.LoadedSnapshot> {
    const h = await this.mustPeek(runId);
    const found = h.model.verifiedSnapshotAt(seq ?? h.model.lastSeq);
    if (!found) {
      const where = seq === undefined ? '' : ` at or before seq ${seq}`;
      throw new CheckpointNotFoundError(
        `Run ${runId} has no snapshot checkpoint${where}${h.damaged ? ' (its log is damaged)' : ''}.`,
        runId,
      );
    }
    return copyJson(found);
  }

  async listApprovals(runId: string, opts: { pendingOnly?: boolean } = {}): Promise<Approval[]> {
    const h = await this.mustPeek(runId);
    return [...h.model.approvals.values()]
      .filter((a) => !opts.pendingOnly || a.decision === null)
      .map((a) => copyJson(a));
  }

  async listEffects(runId: string): Promise<Effect[]> {
    const h = await this.mustPeek(runId);
    return [...h.model.effects.values()].map((e) => copyJson(e));
  }

  async storageBytes(runId: string): Promise<number> {
    await this.mustPeek(runId);
    return this.engine.storageBytes(runId);
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
export function sinkInto(model: () => RunModel, onMeta?: (m: RunMeta) => void): LoadSink {
  return {
    meta: (m) => onMeta?.(m),
    commit: (body, file) => {
      const mdl = model();
      mdl.check(body.ops, true);
      mdl.apply(body.ops);
      if (file) for (const op of body.ops) if (op.op === 'record') mdl.unverified.set(op.record.seq, file);
    },
  };
}

function encodeCursor(ms: number, id: string): string {
  return Buffer.from(JSON.stringify([ms, id])).toString('base64url');
}

function decodeCursor(c: string): [number, string] {
  try {
    const v: unknown = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw new InvalidKeyError(`Invalid run list cursor ${JSON.stringify(c)}.`);
}
