// The run index of the shared store: each run's summary (the listing's cache) in its own row,
// written only when it changed and never over a newer one another window wrote (`summary_commits`);
// a summary that does not parse is a cache miss — the run is read to rebuild it.
import type pg from 'pg';
import type { IndexHead, IndexState } from '../core/engine';
import { isTerminalState, RUN_STATES } from '../api/schema';
import { IndexEntry } from '../core/storedSchema';
import { parseFast } from '../core/fastValid';
import { RunNotOwnedError } from '../api/errors';
import { pgWriteError } from './conn';
import { live, type PgLease } from './lease';

export interface IndexCtx {
  q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>>;
  /** The quoted schema name. */
  S: string;
  workspace: string;
  target: string;
  /** The lease this window holds on a run, if any (summaries are written under its token). */
  lease(runId: string): PgLease | undefined;
  /** Staleness limit of leases, as this window judges them. */
  staleMs: number;
}

interface HeadRow {
  run_id: string;
  summary: string | null;
  summary_commits: number;
  /** What the listing index orders by (bigint: a string from pg). */
  listed_ms: string | null;
}

/**
 * The head's two queries ($1 workspace; $2 how many / which states), each on an index of schema
 * version 3: the newest runs by the summary's updated_ms, and the runs in the given states.
 */
export function headQueries(S: string): { newest: string; unfinished: string } {
  const cols = `run_id, summary, summary_commits, ${S}.summary_updated_ms(summary) AS listed_ms`;
  return {
    newest: `SELECT ${cols} FROM ${S}.runs WHERE workspace = $1
      ORDER BY ${S}.summary_updated_ms(summary) DESC NULLS FIRST, run_id COLLATE "C" DESC LIMIT $2`,
    unfinished: `SELECT ${cols} FROM ${S}.runs WHERE workspace = $1 AND ${S}.summary_state(summary) = ANY($2)`,
  };
}

export class PgRunIndex {
  /** Commit counts from the last listing (rescan asks for each run right after listing them). */
  private listed: { at: number; commits: Map<string, number> } | null = null;
  /** The summary text each run's row holds, as far as this window knows. */
  private readonly saved = new Map<string, string>();

  constructor(private readonly c: IndexCtx) {}

  /**
   * The newest `newest` runs, on the listing index (schema version 3): what the Runs view's first
   * page shows, without reading every row of the workspace; and every unfinished run, on the state
   * index, read after them on the same connection (opening takes no more of the pool) while the store
   * already lists from the newest.
   */
  async head(newest: number): Promise<IndexHead> {
    const sql = headQueries(this.c.S);
    const top = await this.c.q<HeadRow>(sql.newest, [this.c.workspace, newest]);
    const first = this.entriesOf(top.rows, new Set());
    const unfinished = this.c
      .q<HeadRow>(sql.unfinished, [this.c.workspace, RUN_STATES.filter((st) => !isTerminalState(st))])
      .then((r) => this.entriesOf(r.rows, new Set(top.rows.map((row) => row.run_id))));
    unfinished.catch(() => undefined); // the store's listing of unfinished runs meets it
    const last = top.rows.at(-1);
    const cutoff: [number, string] | null =
      top.rows.length < newest || !last ? null : [Number(last.listed_ms ?? Infinity), last.run_id];
    return { ...first, cutoff, unfinished };
  }

  /** The rows' entries, and the runs whose summary must be rebuilt (read, as a full opening would). */
  private entriesOf(rows: readonly HeadRow[], skip: ReadonlySet<string>): Pick<IndexHead, 'entries' | 'unindexed'> {
    const entries = new Map<string, IndexEntry>();
    const unindexed = new Set<string>();
    for (const row of rows) {
      if (skip.has(row.run_id) || entries.has(row.run_id) || unindexed.has(row.run_id)) continue;
      const e = this.parsed(row);
      if (e && e.updated_ms === Number(row.listed_ms)) entries.set(e.run_id, e);
      else unindexed.add(row.run_id);
    }
    return { entries: [...entries.values()], unindexed: [...unindexed] };
  }

  /** The row's summary as an index entry; undefined when it does not parse (a cache miss). */
  private parsed(row: { run_id: string; summary: string | null; summary_commits: number }): IndexEntry | undefined {
    if (!row.summary) return undefined;
    try {
      const r = parseFast(IndexEntry, { ...JSON.parse(row.summary), durable_commits: row.summary_commits });
      if (!r.success) return undefined;
      const e = r.data;
      if (e.run_id !== row.run_id) return undefined; // rebuilt from the run, like a bad index entry on disk
      this.saved.set(e.run_id, row.summary);
      return e;
    } catch {
      return undefined;
    }
  }

  async open(): Promise<IndexState> {
    const r = await this.c.q<{ run_id: string; summary: string | null; summary_commits: number }>(
      `SELECT run_id, summary, summary_commits FROM ${this.c.S}.runs WHERE workspace = $1`,
      [this.c.workspace],
    );
    const entries: IndexEntry[] = [];
    for (const row of r.rows) {
      const e = this.parsed(row);
      if (e) entries.push(e);
    }
    return { entries, present: r.rows.map((x) => x.run_id), reports: [], notices: [], writable: true };
  }

  async listRunIds(): Promise<string[]> {
    const r = await this.c.q<{ run_id: string; commits: number }>(
      `SELECT run_id, commits FROM ${this.c.S}.runs WHERE workspace = $1`,
      [this.c.workspace],
    );
    this.listed = { at: Date.now(), commits: new Map(r.rows.map((x) => [x.run_id, x.commits])) };
    return r.rows.map((x) => x.run_id);
  }

  async lastCommit(runId: string): Promise<number | undefined> {
    if (this.listed && Date.now() - this.listed.at < 1000) return this.listed.commits.get(runId);
    const r = await this.c.q<{ commits: number }>(
      `SELECT commits FROM ${this.c.S}.runs WHERE workspace = $1 AND run_id = $2`,
      [this.c.workspace, runId],
    );
    return r.rows[0]?.commits;
  }

  /**
   * Only summaries that changed, and never over a newer one another window wrote. Fenced like every
   * write: a run this window holds is written under its lease token, any other only while nobody
   * live holds it — a window that was taken over never writes its stale summary over the new owner's.
   */
  async save(entries: IndexEntry[]): Promise<void> {
    const changed = entries
      .map(({ durable_commits, ...s }) => ({ id: s.run_id, json: JSON.stringify(s), commits: durable_commits }))
      .filter((e) => this.saved.get(e.id) !== e.json);
    if (changed.length === 0) return;
    const held = changed.map((e) => this.c.lease(e.id));
    const tokens = held.map((l) => (l && !l.lost ? l.token : null));
    const r = await this.c
      .q<{ run_id: string; lease_token: string; written: boolean }>(
        `WITH x AS (SELECT * FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[]) AS x(run_id, summary, commits, token)),
         w AS (UPDATE ${this.c.S}.runs r SET summary = x.summary, summary_commits = x.commits FROM x
           WHERE r.workspace = $1 AND r.run_id = x.run_id AND r.summary_commits <= x.commits
             AND (r.lease_token = x.token OR (x.token IS NULL AND NOT ${live('$6')}))
           RETURNING r.run_id)
         SELECT r.run_id, r.lease_token, EXISTS (SELECT 1 FROM w WHERE w.run_id = r.run_id) AS written
         FROM ${this.c.S}.runs r JOIN x ON r.workspace = $1 AND r.run_id = x.run_id WHERE x.token IS NOT NULL`,
        [
          this.c.workspace,
          changed.map((e) => e.id),
          changed.map((e) => e.json),
          changed.map((e) => e.commits),
          tokens,
          this.c.staleMs / 1000,
        ],
      )
      .catch((err: unknown) => {
        throw pgWriteError(null, this.c.target, err);
      });
    for (const e of changed) this.saved.set(e.id, e.json);
    // A run held here whose token moved on: taken over. Its lease is lost; the runner learns at its next write.
    const taken = r.rows.filter((x) => {
      const lease = held[changed.findIndex((e) => e.id === x.run_id)];
      return lease && x.lease_token !== lease.token;
    });
    for (const x of taken) this.c.lease(x.run_id)?.markLost('another window took the run over');
    if (taken.length > 0) throw new RunNotOwnedError(taken[0]!.run_id);
  }

  forget(runId: string): void {
    this.saved.delete(runId);
  }
}
