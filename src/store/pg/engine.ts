// The engine of the shared store (README.md, "Shared run store"): the core's commits, blobs, index
// and leases as rows of one PostgreSQL schema, scoped to a workspace identity (the project, not the
// path). Every write of a run's history is ONE statement whose WHERE clause carries the run's
// fencing token (lease.ts) and the commit number it follows, so it commits whole or not at all, is
// acknowledged only once the server has committed it, cannot land twice, and is refused once
// another machine has taken the run over. A write whose connection broke in flight is read back
// before anything is said (writes.ts).
import type pg from 'pg';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError, RunNotOwnedError } from '../api/errors';
import type { RunMeta } from '../api/schema';
import { corruptionReport, type CorruptionReport, type OwnerInfo } from '../api/types';
import type { Engine, EngineLock, IndexHead, IndexState, LoadOptions, LoadResult, LoadSink } from '../core/engine';
import type { CommitOp, IndexEntry } from '../core/storedSchema';
import { newCodec } from '../disk/codec';
import {
  describeTarget,
  isConnectionError,
  newPool,
  PgDb,
  pgWriteError,
  unproven,
  type PgConnectOptions,
  type PgStatus,
} from './conn';
import { LeaseSession, type LeaseOptions, type PgLease } from './lease';
import { followRows, loadChain, quarantineTail, type RunRow } from './load';
import type { CommitRow } from './rows';
import { ensureSchema, quoteIdent } from './schema';
import { FencedWrites, type RunState } from './writes';
import { PgRunIndex } from './runIndex';
import { HandOffs } from './handoffs';
import { SharedListener, type SharedChange } from './listen';
import type { Disposable } from '../api/types';
import { sha256 } from '../../common/hash';

export type { PgStatus };

export interface PgEngineOptions extends PgConnectOptions {
  /** The project's identity: runs are listed, loaded and written within it only. */
  workspace: string;
  schema: string;
  lease: LeaseOptions;
  /** How long a write whose connection broke keeps asking whether it landed. */
  settleMs: number;
  onStatus?: (s: PgStatus) => void;
}

export class PgEngine implements Engine {
  private readonly pool: pg.Pool;
  private readonly S: string;
  private readonly target: string;
  private readonly runs = new Map<string, RunState>();
  private readonly leases = new Map<string, PgLease>();
  private readonly writes: FencedWrites;
  private readonly leaseSession: LeaseSession;
  private onReport: (r: CorruptionReport) => void = () => undefined;
  private readonly index: PgRunIndex;
  private readonly db: PgDb;
  /** This project's runs handed to the workers, and decisions posted by clients that do not hold a run. */
  readonly handoffs: HandOffs;
  private listener: SharedListener | null = null;

  constructor(readonly o: PgEngineOptions) {
    this.pool = newPool(o);
    this.db = new PgDb(this.pool, o.onStatus);
    this.S = quoteIdent(o.schema);
    this.handoffs = new HandOffs(this.db, this.S, o.workspace, o.lease.staleMs);
    this.target = describeTarget(o.connectionString);
    this.leaseSession = new LeaseSession(o, this.S, o.workspace, o.lease, (ok, err) => this.db.reachable(ok, err));
    this.index = new PgRunIndex({
      q: (sql, params) => this.q(sql, params),
      S: this.S,
      workspace: o.workspace,
      target: this.target,
      lease: (id) => this.leases.get(id),
      staleMs: o.lease.staleMs,
    });
    this.writes = new FencedWrites({
      q: (sql, params) => this.q(sql, params),
      S: this.S,
      target: this.target,
      settleMs: o.settleMs,
      state: (id) => this.runs.get(id),
      lease: (id) => this.leases.get(id),
      giveBack: (lease) => this.leaseSession.giveBack(lease),
    });
  }

  get currentStatus(): PgStatus {
    return { ...this.db.status };
  }

  private q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []) {
    return this.db.q<R>(sql, params);
  }

  setReporter(fn: (r: CorruptionReport) => void): void {
    this.onReport = fn;
  }

  // ── index (runIndex.ts) ───────────────────────────────────────────────────────────────────
  async openIndex(): Promise<IndexState> {
    await this.schemaReady();
    return this.index.open();
  }

  async openIndexHead(newest: number): Promise<IndexHead | undefined> {
    await this.schemaReady();
    return this.index.head(newest);
  }

  /** The schema is there (made or migrated if need be), and whether the database answered is said. */
  private async schemaReady(): Promise<void> {
    try {
      await ensureSchema(this.pool, this.o.schema);
      this.db.reachable(true);
    } catch (err) {
      if (isConnectionError(err)) this.db.reachable(false, err);
      throw err;
    }
  }

  listRunIds(): Promise<string[]> {
    return this.index.listRunIds();
  }

  lastCommit(runId: string): Promise<number | undefined> {
    return this.index.lastCommit(runId);
  }

  saveIndex(entries: IndexEntry[]): Promise<void> {
    return this.index.save(entries);
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────────
  async createRun(meta: RunMeta, owner: OwnerInfo): Promise<EngineLock | 'exists'> {
    const made = await this.leaseSession.create(meta, owner).catch((err: unknown) => {
      throw pgWriteError(meta.run_id, this.target, err);
    });
    if (made === 'exists') return 'exists';
    this.runs.set(meta.run_id, {
      rid: made.rid,
      meta,
      codec: newCodec(),
      next: 1,
      covered: 0,
      cursor: 0,
      doubt: null,
    });
    this.leases.set(meta.run_id, made);
    return this.engineLock(meta.run_id, made);
  }

  async loadRun(runId: string, sink: LoadSink, opts: LoadOptions): Promise<LoadResult | undefined> {
    const runRow = await this.q<RunRow>(
      `SELECT rid, meta, commits, covered FROM ${this.S}.runs WHERE workspace = $1 AND run_id = $2`,
      [this.o.workspace, runId],
    );
    const run = runRow.rows[0];
    if (!run) return undefined;
    const rows = await this.commitRows(run.rid, 0);
    const chain = loadChain(this.o.schema, runId, run, rows, sink, opts);
    let report = chain.report;
    const lease = this.leases.get(runId);
    if (report && chain.badFrom !== null && opts.repair && lease && !lease.lost)
      report = await quarantineTail(
        { q: (sql, params) => this.q(sql, params), S: this.S, schema: this.o.schema, workspace: this.o.workspace },
        { runId, rid: run.rid, token: lease.token, from: chain.badFrom, last: chain.last },
        report,
      );
    this.runs.set(runId, {
      rid: run.rid,
      meta: chain.meta,
      codec: chain.codec,
      next: chain.last + 1,
      covered: chain.covered,
      cursor: chain.last,
      doubt: null,
    });
    return { report, commits: chain.last, witness: null, notices: [] };
  }

  private async commitRows(rid: string, after: number): Promise<CommitRow[]> {
    const r = await this.q<CommitRow>(
      `SELECT first, last, format, body, sha256 FROM ${this.S}.commits WHERE rid = $1 AND last > $2 ORDER BY first`,
      [rid, after],
    );
    return r.rows;
  }

  /** The commits another window wrote since this one last read (followers of a run held elsewhere). */
  async loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'> {
    const st = this.runs.get(runId);
    if (!st) return 'reload';
    const r = await this.q<{ commits: number | null; first: number | null } & CommitRow>(
      `SELECT r.commits, c.first, c.last, c.format, c.body, c.sha256 FROM ${this.S}.runs r
       LEFT JOIN ${this.S}.commits c ON c.rid = r.rid AND c.last > $2 WHERE r.rid = $1 ORDER BY c.first`,
      [st.rid, st.cursor],
    );
    if (r.rows.length === 0) return 'reload'; // deleted
    return followRows(
      this.o.schema,
      runId,
      st,
      r.rows.filter((x) => x.first !== null),
      sink,
    );
  }

  writeCommit(runId: string, ops: readonly CommitOp[]): Promise<void> {
    return this.writes.commit(runId, ops);
  }

  compact(runId: string, ops: readonly CommitOp[], meta: RunMeta): Promise<void> {
    return this.writes.compact(runId, ops, meta);
  }

  async syncCommits(): Promise<void> {
    // Every commit is a committed transaction already.
  }

  async writeWitness(): Promise<void> {
    // `runs.commits` is updated in the same statement as each commit: the database is its own witness.
  }

  needsRewrite(): boolean {
    return false;
  }

  logShape(runId: string): { singles: number; covered: number } {
    const st = this.runs.get(runId);
    return st ? { singles: st.next - 1 - st.covered, covered: st.covered } : { singles: 0, covered: 0 };
  }

  async deleteRun(runId: string): Promise<void> {
    const st = this.runs.get(runId);
    const lease = this.leases.get(runId);
    if (!st || !lease || lease.lost) throw new RunNotOwnedError(runId);
    const hashes = await this.q<{ hash: string }>(`SELECT hash FROM ${this.S}.run_blobs WHERE rid = $1`, [st.rid]);
    const gone = await this.q(`DELETE FROM ${this.S}.runs WHERE rid = $1 AND lease_token = $2`, [
      st.rid,
      lease.token,
    ]).catch((err: unknown) => {
      throw pgWriteError(runId, this.target, err);
    });
    if (gone.rowCount === 0) {
      lease.markLost('taken over');
      throw new RunNotOwnedError(runId);
    }
    lease.lost = true;
    this.leaseSession.forget(lease);
    this.runs.delete(runId);
    this.leases.delete(runId);
    this.index.forget(runId);
    // Blobs no other run refers to. Best effort: one another run has just taken a reference to stays.
    await this.q(
      `DELETE FROM ${this.S}.blobs b WHERE b.hash = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM ${this.S}.run_blobs x WHERE x.hash = b.hash)`,
      [hashes.rows.map((h) => h.hash)],
    ).catch(() => undefined);
  }

  async storageBytes(runId: string): Promise<number> {
    const r = await this.q<{ bytes: string }>(
      `SELECT octet_length(r.meta)
         + coalesce((SELECT sum(pg_column_size(c.body)) FROM ${this.S}.commits c WHERE c.rid = r.rid), 0)
         + coalesce((SELECT sum(pg_column_size(b.content)) FROM ${this.S}.run_blobs x
                     JOIN ${this.S}.blobs b USING (hash) WHERE x.rid = r.rid), 0) AS bytes
       FROM ${this.S}.runs r WHERE r.workspace = $1 AND r.run_id = $2`,
      [this.o.workspace, runId],
    );
    return Number(r.rows[0]?.bytes ?? 0);
  }

  // ── blobs ─────────────────────────────────────────────────────────────────────────────────
  putBlob(runId: string, hash: string, content: string | Uint8Array): Promise<void> {
    // A text column: bytes are decoded (a large MCP result on this engine costs the decode).
    return this.writes.putBlob(
      runId,
      hash,
      typeof content === 'string' ? content : Buffer.from(content).toString('utf8'),
    );
  }

  async getBlob(runId: string, hash: string): Promise<string> {
    const r = await this.q<{ content: string }>(
      `SELECT b.content FROM ${this.S}.runs r JOIN ${this.S}.run_blobs x ON x.rid = r.rid
       JOIN ${this.S}.blobs b ON b.hash = x.hash WHERE r.workspace = $1 AND r.run_id = $2 AND x.hash = $3`,
      [this.o.workspace, runId, hash],
    );
    const name = `postgres:${this.o.schema}.blobs/${hash}`;
    const content = r.rows[0]?.content;
    if (content === undefined)
      throw new CheckpointNotFoundError(`${name} is missing (run ${runId}): never stored for this run.`, runId, name);
    if (sha256(content) === hash) return content;
    const reason = `${name} is corrupt: its content does not match its sha256 name`;
    this.onReport(
      corruptionReport({
        run_id: runId,
        file: name,
        reason,
        quarantined: [],
        data_lost: true,
        lost: `the blob ${hash} (a full tool output or file version); checkpoints are unaffected`,
      }),
    );
    throw new AgentCheckpointCorruptionError(reason, runId, name);
  }

  // ── leases ────────────────────────────────────────────────────────────────────────────────
  async lock(runId: string, owner: OwnerInfo): Promise<EngineLock> {
    const lease = await this.leaseSession.acquire(runId, owner).catch((err: unknown) => {
      throw isConnectionError(err) ? pgWriteError(runId, this.target, err) : err;
    });
    this.leases.set(runId, lease);
    return this.engineLock(runId, lease);
  }

  private engineLock(runId: string, lease: PgLease): EngineLock {
    return {
      get lost() {
        return lease.lost;
      },
      release: async () => {
        if (this.leases.get(runId) === lease) this.leases.delete(runId);
        await lease.release();
      },
    };
  }

  readonly shared = true;

  async assertOwner(runId: string): Promise<void> {
    const lease = this.leases.get(runId);
    if (!lease || lease.lost) throw new RunNotOwnedError(runId);
    await this.leaseSession.prove(lease).catch((err: unknown) => {
      if (err instanceof RunNotOwnedError) throw err;
      throw unproven(runId, this.target, err);
    });
  }

  async holder(runId: string): Promise<OwnerInfo | undefined> {
    const h = await this.leaseSession.holder(runId);
    return h === 'none' ? undefined : h;
  }

  /** The fencing token of the lease this store holds on the run (fences a worker's hand-off status). */
  leaseToken(runId: string): string | undefined {
    const l = this.leases.get(runId);
    return l && !l.lost ? l.token : undefined;
  }

  /** Test hook and the Runs view's retry: one heartbeat now. */
  heartbeat(): Promise<void> {
    return this.leaseSession.beat();
  }

  /** The LISTEN connection of this project's changes, opened on first use. */
  changes(): SharedListener {
    this.listener ??= new SharedListener(this.o, this.o.schema, new Set([this.o.workspace]));
    return this.listener;
  }

  /** Pushes this project's changes (listen.ts) until disposed. */
  watch(listener: (c: SharedChange) => void): Disposable {
    return this.changes().on(listener);
  }

  async close(): Promise<void> {
    await this.listener?.close();
    await this.leaseSession.close();
    await this.pool.end().catch(() => undefined);
  }
}
