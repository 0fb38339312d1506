// The store: one small façade over parts that each do one thing — the loader (runs in memory),
// the reader, the writer, the run lifecycle — and an Engine that owns the bytes (memory/, disk/,
// pg/). Every backend is this same object over another engine, so their semantics cannot drift.
import type { Engine } from './engine';
import { StoreEvents, StoreGate, type CoreOptions, type StoreContext } from './context';
import { HEAD_RUNS, IndexCache } from './indexCache';
import { RunLoader } from './loader';
import { StoreReader } from './reader';
import { StoreWriter } from './writer';
import { RunLifecycle } from './lifecycle';
import { KEEP_END_FROM } from './end';
import { StoreClosedError } from '../api/errors';
import { continueRun } from '../portable/continue';
import { exportRun, forkRun, importRun, type PortableHost } from '../portable/portable';
import { toWriteError } from './commitQueue';
import type { RunHandle, Lease } from './runHandle';
import type * as S from '../api/schema';
import type { CommitOp } from './storedSchema';
import type * as T from '../api/types';
import { checkRunId } from './validate';

export type { CoreOptions };

export class Store<E extends Engine = Engine> implements T.CheckpointStore, PortableHost {
  readonly now: () => number;
  private readonly c: StoreContext;
  private readonly reader: StoreReader;
  private readonly writer: StoreWriter;
  private readonly lifecycle: RunLifecycle;

  constructor(
    readonly engine: E,
    opts: CoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    const events = new StoreEvents(opts.onEvent);
    const index = new IndexCache(engine, opts.indexStructuralMs ?? 200, opts.indexProgressMs ?? 30_000, (err) =>
      events.emit({ kind: 'write-error', run_id: null, error: toWriteError(null, err) }),
    );
    const loader = new RunLoader(engine, index, events, opts.cachedRuns ?? 16, opts.headRuns ?? HEAD_RUNS);
    this.c = {
      engine,
      now: this.now,
      events,
      index,
      loader,
      gate: new StoreGate(),
      keepEndFrom: opts.keepEndFrom ?? KEEP_END_FROM,
    };
    this.reader = new StoreReader(this.c);
    this.writer = new StoreWriter(this.c, opts);
    this.lifecycle = new RunLifecycle(this.c, this.reader, this.writer);
    loader.repairUnowned = (runId) => this.lifecycle.repairUnowned(runId);
    engine.setReporter((r) => events.report(r));
  }

  /** Starts opening in the background (factories return the store at once; calls wait for it). */
  start(): this {
    this.c.gate.start(this.c.loader.open(), () => this.c.loader.complete());
    return this;
  }

  /**
   * Resolves once the store is open (rejects with what opening found, e.g. an unreadable folder): it
   * lists from the index's head at least; the whole index is read when first needed (whenWhole).
   */
  whenOpen(): Promise<void> {
    return this.c.gate.listable();
  }

  /** Resolves once the whole run index is in memory (`index` knows every run). */
  whenWhole(): Promise<void> {
    return this.c.gate.opened();
  }

  /** The run index (a cache of every run's summary): which runs this store holds, without reading them. */
  get index(): IndexCache {
    return this.c.index;
  }

  /** Corruption found while opening (also emitted to opts.onEvent). */
  get openReports(): readonly T.CorruptionReport[] {
    return this.c.events.openReports;
  }

  onEvent(listener: (e: T.StoreEvent) => void): T.Disposable {
    return this.c.events.on(listener);
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────────
  createRun = (input: T.NewRunInput, owner: T.OwnerInfo) => this.lifecycle.createRun(input, owner);
  listRuns = (opts?: T.ListRunsOptions) => this.reader.listRuns(opts);
  rescan = () => this.reader.rescan();
  follow = (runIds: readonly string[]) => this.reader.follow(runIds);
  getRun = (runId: string) => this.reader.getRun(runId);
  indexedRun = (runId: string) => this.reader.indexedRun(runId);
  setRunState = (runId: string, state: S.RunState, detail?: string | null) =>
    this.writer.setRunState(runId, state, detail);
  deleteRun = (runId: string) => this.lifecycle.deleteRun(runId);
  acquire = (runId: string, owner: T.OwnerInfo) => this.lifecycle.acquire(runId, owner);
  owner = (runId: string) => this.reader.owner(runId);
  assertOwner = (runId: string) => this.writer.assertOwner(runId);
  isShared = (_runId: string) => this.c.engine.shared === true;
  pruneFinished = (ttlMs: number) => this.lifecycle.pruneFinished(ttlMs);

  // ── checkpoints ───────────────────────────────────────────────────────────────────────────
  append = (runId: string, input: T.AppendInput, opts?: T.WriteOptions) => this.writer.append(runId, input, opts);
  makeDurable = (runId: string, opts?: { toolsNext?: boolean }) => this.writer.makeDurable(runId, opts);
  whenIdle = (runId: string) => this.writer.whenIdle(runId);
  latest = (runId: string) => this.reader.latest(runId);
  get = (runId: string, seq: number) => this.reader.get(runId, seq);
  list = (runId: string, opts?: T.ListOptions) => this.reader.list(runId, opts);
  loadSnapshot = (runId: string, seq?: number) => this.reader.loadSnapshot(runId, seq);
  loadResumeSnapshot = (runId: string) => this.reader.loadResumeSnapshot(runId);
  readEnd = (runId: string, opts: { records: number }) => this.reader.readEnd(runId, opts);

  // ── journal, inbox, restores, blobs ───────────────────────────────────────────────────────
  requestApproval = (runId: string, a: T.NewApproval) => this.writer.requestApproval(runId, a);
  decideApproval = (runId: string, toolCallId: string, d: Omit<S.ApprovalDecision, 'decided_ms'>) =>
    this.writer.decideApproval(runId, toolCallId, d);
  listApprovals = (runId: string, opts?: { pendingOnly?: boolean; calls?: readonly string[] }) =>
    this.reader.listApprovals(runId, opts);
  recordIntent = (runId: string, intent: T.NewEffectIntent, opts?: T.WriteOptions) =>
    this.writer.recordIntent(runId, intent, opts);
  withdrawIntent = (runId: string, toolCallId: string) => this.writer.withdrawIntent(runId, toolCallId);
  recordProcess = (runId: string, toolCallId: string, p: S.EffectProcess) =>
    this.writer.recordProcess(runId, toolCallId, p);
  recordResult = (runId: string, toolCallId: string, r: T.NewEffectResult, opts?: T.WriteOptions) =>
    this.writer.recordResult(runId, toolCallId, r, opts);
  recordRetry = (runId: string, toolCallId: string, r: T.NewEffectRetry) =>
    this.writer.recordRetry(runId, toolCallId, r);
  listEffects = (runId: string, opts?: { calls?: readonly string[] }) => this.reader.listEffects(runId, opts);
  postMessage = (runId: string, m: T.NewInboxMessage) => this.writer.postMessage(runId, m);
  listInbox = (runId: string, opts?: { pendingOnly?: boolean }) => this.reader.listInbox(runId, opts);
  recordRestore = (runId: string, r: T.NewRestore) => this.writer.recordRestore(runId, r);
  listRestores = (runId: string) => this.reader.listRestores(runId);
  putBlob = (runId: string, content: string | Uint8Array, sha256?: string) =>
    this.writer.putBlob(runId, content, sha256);
  getBlob = (runId: string, hash: string) => this.reader.getBlob(runId, hash);
  storageBytes = (runId: string) => this.reader.storageBytes(runId);
  compact = (runId: string) => this.writer.compact(runId);

  // ── fork, export, import, follow-up turns (portable/) ─────────────────────────────────────
  async fork(runId: string, seq: number, owner: T.OwnerInfo, opts?: T.ForkOptions) {
    await this.c.gate.opened();
    return forkRun(this, checkRunId(runId), seq, owner, opts);
  }

  async continueRun(input: T.ContinueRunInput, owner: T.OwnerInfo) {
    await this.c.gate.opened();
    return continueRun(this, input, owner);
  }

  async exportRun(runId: string): Promise<unknown> {
    await this.c.gate.opened();
    return exportRun(this, checkRunId(runId));
  }

  async importRun(data: unknown, owner: T.OwnerInfo): Promise<S.RunSummary> {
    await this.c.gate.opened();
    return importRun(this, data, owner);
  }

  readHandle(runId: string): Promise<RunHandle> {
    return this.reader.run(checkRunId(runId));
  }

  putBlobAs(runId: string, hash: string, content: string): Promise<void> {
    return this.writer.putBlobAs(runId, hash, content);
  }

  adoptNewRun(
    build: (runId: string) => { meta: S.RunMeta; ops: CommitOp[] },
    preferredId: string | undefined,
    owner: T.OwnerInfo,
    opts: { keepLease: boolean; renameOnCollision: boolean },
  ): Promise<{ run: S.RunSummary; lease?: Lease }> {
    return this.lifecycle.adoptNewRun(build, preferredId, owner, opts);
  }

  // ── lifecycle of the store ────────────────────────────────────────────────────────────────
  /** Makes every queued write durable, and what a listing shows; progress alone stays on the index's timer. */
  flush(timeoutMs = 10_000): Promise<void> {
    return this.flushAll(timeoutMs, false);
  }

  private async flushAll(timeoutMs: number, progressToo: boolean): Promise<void> {
    // Not the whole index: a run written here made the store read it; a dirty partial one reads it to save.
    await this.c.gate.listable();
    await bounded(timeoutMs, 'flush', async () => {
      await this.writer.flushAll();
      await this.c.index.save(progressToo);
    });
  }

  async close(timeoutMs = 10_000): Promise<void> {
    const { gate, loader, index, engine } = this.c;
    if (gate.closed) return;
    let error: unknown;
    await this.flushAll(timeoutMs, true).catch((err: unknown) => (error = err));
    if (!error) {
      const owned = [...loader.runs.values()].filter((h) => h.owned && !h.lease!.lost);
      await bounded(timeoutMs, 'close', async () => {
        for (const h of owned) await h.serial(() => this.writer.settleForClose(h));
      }).catch(() => undefined); // compaction is an optimisation: a slow one must not block closing
    }
    gate.closed = true;
    index.stop();
    for (const h of loader.runs.values()) {
      h.writer?.discard(new StoreClosedError());
      await h.lease?.forceRelease();
    }
    await engine.close();
    if (error) throw error;
  }
}

async function bounded(ms: number, what: string, fn: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          toWriteError(null, Object.assign(new Error(`${what} did not finish within ${ms} ms`), { code: 'ETIMEDOUT' })),
        ),
      ms,
    );
  });
  try {
    await Promise.race([fn(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
