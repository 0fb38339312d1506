// What the extension uses when the store kind is `postgres`: the shared store for new runs, and
// this machine's local store beside it, as one CheckpointStore. A run is served by the store that
// holds it (the shared one when both do: a local run copied to the shared store is the shared
// one's now). When the database is away the local runs stay usable, the shared ones that are in
// memory stay readable, and the shared store is reconnected in the background (SharedState says
// which, for the Runs view).
import type { Store } from '../core/store';
import { StoreWriteError } from '../api/errors';
import type * as T from '../api/types';
import type { RunSummary } from '../api/schema';
import { errorMessage } from '../../common/errors';
import type { PgStatus } from './conn';
import { SharedConnection, type SharedState } from './sharedConnection';
import { PgEngine } from './engine';
import type { PgStore } from './store';
import { SharedWorkers } from './workers';

export type { SharedState };

export interface CopyReport {
  copied: string[];
  /** Already in the shared store (copied before). */
  already: string[];
  failed: { run_id: string; title: string; error: string }[];
}

export interface CombinedOptions {
  local: Store;
  /**
   * Opens the shared store; it reports reachability through `onStatus`. Rejects when it cannot be
   * opened as configured (no connection string, no workspace identity): the state is then `refused`.
   */
  openShared(onStatus: (s: PgStatus) => void): Promise<Store>;
  /** Delay between reconnection attempts (default 10 s). */
  retryMs?: number;
}

export class CombinedStore implements T.CheckpointStore {
  readonly local: Store;
  /** The shared store's connection: its state for the Runs view, and the store once it opened. */
  readonly connection: SharedConnection;
  private readonly listeners = new Set<(e: T.StoreEvent) => void>();
  private readonly subs: T.Disposable[] = [];

  constructor(o: CombinedOptions) {
    this.local = o.local;
    this.subs.push(o.local.onEvent((e) => this.emit(e)));
    this.connection = new SharedConnection(o.openShared, o.retryMs ?? 10_000, (s) =>
      this.subs.push(s.onEvent((e) => this.emit(e))),
    );
  }

  get state(): SharedState {
    return this.connection.state;
  }

  /** The shared store (null while it has never opened). */
  get shared(): Store | null {
    return this.connection.store;
  }

  onState(listener: (s: SharedState) => void): T.Disposable {
    return this.connection.onState(listener);
  }

  /** The workers of the shared store (hand-off, bring back, decisions, the live feed); null until it opened. */
  get workers(): SharedWorkers | null {
    const s = this.connection.store;
    if (!s || !(s.engine instanceof PgEngine)) return null;
    this.workersOf ??= new SharedWorkers(s as PgStore);
    return this.workersOf;
  }
  private workersOf: SharedWorkers | undefined;

  private emit(e: T.StoreEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(e);
      } catch {
        // a listener's bug must not break a write
      }
    }
  }

  // ── routing ───────────────────────────────────────────────────────────────────────────────
  /** The store holding the run: the shared one when it knows it, else the local one when it does. */
  private async storeOf(runId: string): Promise<Store> {
    await this.local.whenOpen();
    const shared = this.connection.store;
    const known = () => (shared?.index.get(runId) ? shared : this.local.index.get(runId) ? this.local : undefined);
    // Opened from their heads, the indexes may not know an older run yet: read them whole first.
    if (!known()) await Promise.all([this.local.whenWhole(), shared?.whenWhole().catch(() => undefined)]);
    return known() ?? this.primary();
  }

  /** Where new runs go: the shared store (an error saying why when it cannot be reached). */
  private primary(): Store {
    if (this.connection.store) return this.connection.store;
    const why =
      this.connection.state.kind === 'unreachable' || this.connection.state.kind === 'refused'
        ? `: ${this.connection.state.error}`
        : ' yet';
    throw new StoreWriteError(
      `The shared run store is not connected${why}. Runs on this machine stay usable; new runs start once it is back.`,
      null,
      'EPGUNREACHABLE',
    );
  }

  private async on<R>(runId: string, fn: (s: Store) => Promise<R>): Promise<R> {
    return fn(await this.storeOf(runId));
  }

  // ── CheckpointStore ───────────────────────────────────────────────────────────────────────
  async createRun(input: T.NewRunInput, owner: T.OwnerInfo) {
    return this.primary().createRun(input, owner);
  }

  /**
   * Both stores' runs, newest first; a run in both is the shared one. Paged like one store: each
   * gives its page after the same cursor, and the page is the newest of the two.
   */
  async listRuns(opts: T.ListRunsOptions = {}): Promise<T.RunPage> {
    const s = this.connection.store;
    const shared: T.RunPage = s ? await s.listRuns(opts).catch(() => ({ runs: [] })) : { runs: [] };
    const local = await this.local.listRuns(opts);
    const inShared = new Set(shared.runs.map((r) => r.run_id));
    // A local run copied to the shared store is listed once: the shared store's whole index says which.
    if (s && local.runs.some((r) => !inShared.has(r.run_id) && !s.index.get(r.run_id)))
      await s.whenWhole().catch(() => undefined);
    const localOnly = local.runs.filter((r) => !inShared.has(r.run_id) && !s?.index.get(r.run_id));
    return pageOf([...shared.runs, ...localOnly], opts.limit, !!(shared.cursor || local.cursor));
  }

  async rescan(): Promise<boolean> {
    const local = await this.local.rescan();
    if (!this.connection.store || this.connection.state.kind !== 'connected') {
      await this.connection.reconnect();
      return local;
    }
    const shared = await this.connection.store.rescan().catch(() => false);
    return local || shared;
  }

  /** Only the shared store's runs are written by other processes it is told of. */
  async follow(runIds: readonly string[]): Promise<boolean> {
    const shared = this.connection.store;
    if (!shared || this.connection.state.kind !== 'connected') return false;
    return shared.follow(runIds.filter((id) => this.isShared(id))).catch(() => false);
  }

  getRun(runId: string) {
    return this.on(runId, (s) => s.getRun(runId));
  }
  indexedRun(runId: string) {
    return this.on(runId, (s) => s.indexedRun(runId));
  }
  setRunState(runId: string, state: Parameters<T.CheckpointStore['setRunState']>[1], detail?: string | null) {
    return this.on(runId, (s) => s.setRunState(runId, state, detail));
  }
  deleteRun(runId: string) {
    return this.on(runId, (s) => s.deleteRun(runId));
  }
  acquire(runId: string, owner: T.OwnerInfo) {
    return this.on(runId, (s) => s.acquire(runId, owner));
  }
  owner(runId: string) {
    return this.on(runId, (s) => s.owner(runId));
  }
  assertOwner(runId: string) {
    return this.on(runId, (s) => s.assertOwner(runId));
  }
  isShared(runId: string): boolean {
    return !!this.connection.store?.index.get(runId);
  }
  append(runId: string, input: T.AppendInput, opts?: T.WriteOptions) {
    return this.on(runId, (s) => s.append(runId, input, opts));
  }

  whenIdle(runId: string) {
    return this.on(runId, (s) => s.whenIdle(runId));
  }
  makeDurable(runId: string, opts?: { toolsNext?: boolean }) {
    return this.on(runId, (s) => s.makeDurable(runId, opts));
  }
  latest(runId: string) {
    return this.on(runId, (s) => s.latest(runId));
  }
  get(runId: string, seq: number) {
    return this.on(runId, (s) => s.get(runId, seq));
  }
  list(runId: string, opts?: T.ListOptions) {
    return this.on(runId, (s) => s.list(runId, opts));
  }
  loadSnapshot(runId: string, seq?: number) {
    return this.on(runId, (s) => s.loadSnapshot(runId, seq));
  }
  loadResumeSnapshot(runId: string) {
    return this.on(runId, (s) => s.loadResumeSnapshot(runId));
  }
  readEnd(runId: string, opts: { records: number }) {
    return this.on(runId, (s) => s.readEnd(runId, opts));
  }
  /** A fork and a follow-up stay in the store of the run they come from. */
  fork(runId: string, seq: number, owner: T.OwnerInfo, opts?: T.ForkOptions) {
    return this.on(runId, (s) => s.fork(runId, seq, owner, opts));
  }
  continueRun(input: T.ContinueRunInput, owner: T.OwnerInfo) {
    return this.on(input.from.run_id, (s) => s.continueRun(input, owner));
  }
  exportRun(runId: string) {
    return this.on(runId, (s) => s.exportRun(runId));
  }
  async importRun(data: unknown, owner: T.OwnerInfo) {
    return this.primary().importRun(data, owner);
  }
  requestApproval(runId: string, a: T.NewApproval) {
    return this.on(runId, (s) => s.requestApproval(runId, a));
  }
  decideApproval(runId: string, id: string, d: Parameters<T.CheckpointStore['decideApproval']>[2]) {
    return this.on(runId, (s) => s.decideApproval(runId, id, d));
  }
  listApprovals(runId: string, opts?: { pendingOnly?: boolean; calls?: readonly string[] }) {
    return this.on(runId, (s) => s.listApprovals(runId, opts));
  }
  recordIntent(runId: string, i: T.NewEffectIntent, opts?: T.WriteOptions) {
    return this.on(runId, (s) => s.recordIntent(runId, i, opts));
  }
  withdrawIntent(runId: string, id: string) {
    return this.on(runId, (s) => s.withdrawIntent(runId, id));
  }
  recordProcess(runId: string, id: string, p: Parameters<T.CheckpointStore['recordProcess']>[2]) {
    return this.on(runId, (s) => s.recordProcess(runId, id, p));
  }
  recordResult(runId: string, id: string, r: T.NewEffectResult, opts?: T.WriteOptions) {
    return this.on(runId, (s) => s.recordResult(runId, id, r, opts));
  }
  recordRetry(runId: string, id: string, r: T.NewEffectRetry) {
    return this.on(runId, (s) => s.recordRetry(runId, id, r));
  }
  listEffects(runId: string, opts?: { calls?: readonly string[] }) {
    return this.on(runId, (s) => s.listEffects(runId, opts));
  }
  postMessage(runId: string, m: T.NewInboxMessage) {
    return this.on(runId, (s) => s.postMessage(runId, m));
  }
  listInbox(runId: string, opts?: { pendingOnly?: boolean }) {
    return this.on(runId, (s) => s.listInbox(runId, opts));
  }
  recordRestore(runId: string, r: T.NewRestore) {
    return this.on(runId, (s) => s.recordRestore(runId, r));
  }
  listRestores(runId: string) {
    return this.on(runId, (s) => s.listRestores(runId));
  }
  putBlob(runId: string, content: string | Uint8Array, sha256?: string) {
    return this.on(runId, (s) => s.putBlob(runId, content, sha256));
  }
  getBlob(runId: string, hash: string) {
    return this.on(runId, (s) => s.getBlob(runId, hash));
  }
  storageBytes(runId: string) {
    return this.on(runId, (s) => s.storageBytes(runId));
  }
  compact(runId: string) {
    return this.on(runId, (s) => s.compact(runId));
  }

  /**
   * "Copy local runs to the shared store": each local run the shared store does not hold yet goes
   * over through the export format (checked on import); run ids are kept, so copying again copies
   * nothing twice. The local copies stay (hidden from the listing while the shared store has them).
   */
  async copyLocalToShared(owner: T.OwnerInfo, progress?: (done: number, total: number) => void): Promise<CopyReport> {
    const shared = this.primary();
    await shared.rescan(); // what other windows copied meanwhile
    const runs = await allRuns(this.local);
    const out: CopyReport = { copied: [], already: [], failed: [] };
    for (const [i, r] of runs.entries()) {
      progress?.(i, runs.length);
      try {
        if (await shared.getRun(r.run_id)) out.already.push(r.run_id);
        else {
          const imported = await shared.importRun(await this.local.exportRun(r.run_id), owner);
          out.copied.push(imported.run_id);
        }
      } catch (err) {
        out.failed.push({ run_id: r.run_id, title: r.title, error: errorMessage(err) });
      }
    }
    progress?.(runs.length, runs.length);
    return out;
  }

  /** Both stores; the shared one only when it is connected (it is pruned by its next window otherwise). */
  async pruneFinished(ttlMs: number): Promise<string[]> {
    const local = await this.local.pruneFinished(ttlMs);
    const shared =
      this.connection.store && this.connection.state.kind === 'connected'
        ? await this.connection.store.pruneFinished(ttlMs)
        : [];
    return [...shared, ...local];
  }

  onEvent(listener: (e: T.StoreEvent) => void): T.Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  async flush(timeoutMs?: number): Promise<void> {
    await Promise.all([this.local.flush(timeoutMs), this.connection.store?.flush(timeoutMs)]);
  }

  async close(timeoutMs?: number): Promise<void> {
    this.connection.close();
    for (const s of this.subs.splice(0)) s.dispose();
    const results = await Promise.allSettled([this.local.close(timeoutMs), this.connection.store?.close(timeoutMs)]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

async function allRuns(s: Store): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await s.listRuns({ limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.runs);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The newest `limit` of both stores' pages, with the cursor format of a single store. */
function pageOf(all: RunSummary[], limit = 50, more: boolean): T.RunPage {
  all.sort((a, b) => b.updated_ms - a.updated_ms || (a.run_id < b.run_id ? 1 : -1));
  const runs = all.slice(0, limit);
  const last = runs[runs.length - 1];
  return (more || all.length > limit) && last
    ? { runs, cursor: Buffer.from(JSON.stringify([last.updated_ms, last.run_id])).toString('base64url') }
    : { runs };
}
