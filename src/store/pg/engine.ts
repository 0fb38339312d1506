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
import type { Engine, EngineLock, IndexState, LoadOptions, LoadResult, LoadSink } from '../core/engine';
import { IndexEntry, type CommitOp } from '../core/storedSchema';
import { advance, newCodec } from '../disk/codec';
import { describeTarget, isConnectionError, newPool, pgWriteError, run, type PgConnectOptions } from './conn';
import { LeaseSession, type LeaseOptions, type PgLease } from './lease';
import { loadChain, type RunRow } from './load';
import { readRow, rowName, type CommitRow } from './rows';
import { ensureSchema, quoteIdent } from './schema';
import { FencedWrites, type RunState } from './writes';
import { sha256 } from '../../common/hash';

export interface PgStatus {
  reachable: boolean;
  /** The last connection error, while unreachable. */
  error: string | null;
}

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
  /** Commit counts from the last listing (rescan asks for each run right after listing them). */
  private listed: { at: number; commits: Map<string, number> } | null = null;
  private savedIndex = new Map<string, string>();
  private status: PgStatus = { reachable: true, error: null };

  constructor(readonly o: PgEngineOptions) {
    this.pool = newPool(o);
    this.S = quoteIdent(o.schema);
    this.target = describeTarget(o.connectionString);
    this.leaseSession = new LeaseSession(o, this.S, o.workspace, o.lease, (ok, err) => this.reachable(ok, err));
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
    return { ...this.status };
  }

  /** Every statement's outcome feeds the reachability the Runs view shows. */
  private async q<R extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    try {
      const r = await run<R>(this.pool, sql, params);
      this.reachable(true);
      return r;
    } catch (err) {
      if (isConnectionError(err)) this.reachable(false, err);
      throw err;
    }
  }

  private reachable(ok: boolean, err?: unknown): void {
    const next: PgStatus = { reachable: ok, error: ok ? null : String((err as Error)?.message ?? err) };
    if (next.reachable === this.status.reachable && next.error === this.status.error) return;
    this.status = next;
    this.o.onStatus?.({ ...next });
  }

  setReporter(fn: (r: CorruptionReport) => void): void {
    this.onReport = fn;
  }

  // ── index ─────────────────────────────────────────────────────────────────────────────────
  async openIndex(): Promise<IndexState> {
    try {
      await ensureSchema(this.pool, this.o.schema);
      this.reachable(true);
    } catch (err) {
      if (isConnectionError(err)) this.reachable(false, err);
      throw err;
    }
    const r = await this.q<{ run_id: string; summary: string | null; summary_commits: number }>(
      `SELECT run_id, summary, summary_commits FROM ${this.S}.runs WHERE workspace = $1`,
      [this.o.workspace],
    );
    const entries: IndexEntry[] = [];
    for (const row of r.rows) {
      if (!row.summary) continue;
      try {
        const e = IndexEntry.parse({ ...JSON.parse(row.summary), durable_commits: row.summary_commits });
        if (e.run_id !== row.run_id) continue; // rebuilt from the run, like a bad index entry on disk
        entries.push(e);
        this.savedIndex.set(e.run_id, row.summary);
      } catch {
        // a summary that does not parse is a cache miss: the run is read to rebuild it
      }
    }
    return { entries, present: r.rows.map((x) => x.run_id), reports: [], notices: [], writable: true };
  }

  async listRunIds(): Promise<string[]> {
    const r = await this.q<{ run_id: string; commits: number }>(
      `SELECT run_id, commits FROM ${this.S}.runs WHERE workspace = $1`,
      [this.o.workspace],
    );
    this.listed = { at: Date.now(), commits: new Map(r.rows.map((x) => [x.run_id, x.commits])) };
    return r.rows.map((x) => x.run_id);
  }

  async lastCommit(runId: string): Promise<number | undefined> {
    if (this.listed && Date.now() - this.listed.at < 1000) return this.listed.commits.get(runId);
    const r = await this.q<{ commits: number }>(
      `SELECT commits FROM ${this.S}.runs WHERE workspace = $1 AND run_id = $2`,
      [this.o.workspace, runId],
    );
    return r.rows[0]?.commits;
  }

  /** Only summaries that changed, and never over a newer one another window wrote. */
  async saveIndex(entries: IndexEntry[]): Promise<void> {
    const changed = entries
      .map(({ durable_commits, ...s }) => ({ id: s.run_id, json: JSON.stringify(s), commits: durable_commits }))
      .filter((e) => this.savedIndex.get(e.id) !== e.json);
    if (changed.length === 0) return;
    await this.q(
      `UPDATE ${this.S}.runs r SET summary = x.summary, summary_commits = x.commits
       FROM unnest($2::text[], $3::text[], $4::int[]) AS x(run_id, summary, commits)
       WHERE r.workspace = $1 AND r.run_id = x.run_id AND r.summary_commits <= x.commits`,
      [this.o.workspace, changed.map((e) => e.id), changed.map((e) => e.json), changed.map((e) => e.commits)],
    ).catch((err: unknown) => {
      throw pgWriteError(null, this.target, err);
    });
    for (const e of changed) this.savedIndex.set(e.id, e.json);
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
      report = await this.quarantineTail(runId, run.rid, lease, chain.badFrom, chain.last, report);
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

  /** The holder moves the bad rows (and everything after them) to the quarantine table, in one statement. */
  private async quarantineTail(
    runId: string,
    rid: string,
    lease: PgLease,
    from: number,
    last: number,
    report: CorruptionReport,
  ): Promise<CorruptionReport> {
    const to = `postgres:${this.o.schema}.quarantine`;
    const moved = await this.q<{ first: number }>(
      `WITH run AS (UPDATE ${this.S}.runs SET commits = $4 WHERE rid = $1 AND lease_token = $2 RETURNING rid),
       gone AS (DELETE FROM ${this.S}.commits c USING run WHERE c.rid = run.rid AND c.first >= $3 RETURNING c.*)
       INSERT INTO ${this.S}.quarantine (workspace, run_id, what, body, reason)
       SELECT $5, $6, 'commit ' || first || '-' || last, body, $7 FROM gone RETURNING id`,
      [rid, lease.token, from, last, this.o.workspace, runId, report.reason],
    ).catch(() => null); // not moved: reported all the same, and moved by the next load that can
    if (!moved || moved.rowCount === 0) return report;
    return { ...report, quarantined: [{ file: report.file, to, reason: report.reason }] };
  }

  async loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'> {
    const st = this.runs.get(runId);
    if (!st) return 'reload';
    const r = await this.q<{ commits: number | null; first: number | null } & CommitRow>(
      `SELECT r.commits, c.first, c.last, c.format, c.body, c.sha256 FROM ${this.S}.runs r
       LEFT JOIN ${this.S}.commits c ON c.rid = r.rid AND c.last > $2 WHERE r.rid = $1 ORDER BY c.first`,
      [st.rid, st.cursor],
    );
    if (r.rows.length === 0) return 'reload'; // deleted
    const rows = r.rows.filter((x) => x.first !== null);
    if (rows.some((x) => x.first <= st.cursor)) return 'reload'; // compacted by its holder
    let n = 0;
    for (const row of rows) {
      if (row.first !== st.cursor + 1) return 'reload';
      try {
        const { body, delta } = readRow(runId, row, st.codec, st.meta, rowName(this.o.schema, runId, row.first));
        sink.commit(body, rowName(this.o.schema, runId, row.first));
        advance(st.codec, delta);
      } catch {
        return 'reload'; // the full load reports it
      }
      st.cursor = row.last;
      st.next = row.last + 1;
      n++;
    }
    return n;
  }

  writeCommit(runId: string, ops: readonly CommitOp[]): Promise<void> {
    return this.writes.commit(runId, ops);
  }

  compact(runId: string, ops: readonly CommitOp[], meta: RunMeta): Promise<void> {
    return this.writes.compact(runId, ops, meta);
  }

  async writeWitness(): Promise<void> {
    // `runs.commits` is updated in the same statement as each commit: the database is its own witness.
  }

  needsConversion(): boolean {
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
    this.savedIndex.delete(runId);
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
  putBlob(runId: string, hash: string, content: string): Promise<void> {
    return this.writes.putBlob(runId, hash, content);
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

  async holder(runId: string): Promise<OwnerInfo | undefined> {
    const h = await this.leaseSession.holder(runId);
    return h === 'none' ? undefined : h;
  }

  /** Test hook and the Runs view's retry: one heartbeat now. */
  heartbeat(): Promise<void> {
    return this.leaseSession.beat();
  }

  async close(): Promise<void> {
    await this.leaseSession.close();
    await this.pool.end().catch(() => undefined);
  }
}
