// The fenced writes of a run's history: a commit, a compaction, a blob — each ONE statement that
// names the run's row by its id AND its lease token (and, for a commit, the number of the commit it
// follows). Its outcome is one of three:
//  - it matched the row: committed, durable, acknowledged;
//  - it matched nothing: the run was taken over (the lease is lost, RunNotOwnedError), unless the
//    very commit is already there (a statement that finished after its connection broke);
//  - its connection broke while it was in flight: the outcome is unknown, so the commit is looked
//    up until the database answers (settleMs). There → acknowledged; not there → sent once more
//    (it cannot land twice: the commit number is in the WHERE clause); no answer → the write fails
//    and the run remembers its doubt, settled by its next write before anything else.
// A commit found to have landed after this window was told it failed leaves the run in memory
// behind the database: the lease is given back, and resuming reads the run again.
import type pg from 'pg';
import { RunNotOwnedError, StoreWriteError } from '../api/errors';
import type { RunMeta } from '../api/schema';
import type { CommitOp } from '../core/storedSchema';
import { advance, newCodec, type Codec } from '../disk/codec';
import { isConnectionError, PgFailure, pgWriteError } from './conn';
import type { PgLease } from './lease';
import { encodeRow } from './rows';

export interface RunState {
  rid: string;
  meta: RunMeta;
  /** The codec after the last commit this instance wrote or read. */
  codec: Codec;
  next: number;
  covered: number;
  /** The last commit read or written (followers read on from here). */
  cursor: number;
  doubt: Doubt | null;
}

/** A write whose outcome the database could not be asked about yet. */
export type Doubt =
  { kind: 'commit'; n: number; sha: Buffer } | { kind: 'compact'; n: number; sha: Buffer; codec: Codec };

export interface WriteCtx {
  q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>>;
  /** The quoted schema name. */
  S: string;
  /** Where the store is, for messages. */
  target: string;
  settleMs: number;
  state(runId: string): RunState | undefined;
  lease(runId: string): PgLease | undefined;
  /** Gives a lease back in the database (best effort) after the run in memory fell behind it. */
  giveBack(lease: PgLease): Promise<void>;
}

export class FencedWrites {
  constructor(private readonly c: WriteCtx) {}

  private owned(runId: string): { st: RunState; lease: PgLease } {
    const st = this.c.state(runId);
    const lease = this.c.lease(runId);
    if (!st || !lease || lease.lost) throw new RunNotOwnedError(runId);
    return { st, lease };
  }

  async commit(runId: string, ops: readonly CommitOp[]): Promise<void> {
    const { st, lease } = this.owned(runId);
    await this.settleDoubt(runId, st, lease);
    const n = st.next;
    const { row, delta } = encodeRow(runId, { first: n, last: n }, ops, st.codec, st.meta);
    const write = async () =>
      (
        await this.c.q(
          `WITH run AS (
             UPDATE ${this.c.S}.runs SET commits = $3, lease_heartbeat = now()
             WHERE rid = $1 AND lease_token = $2 AND commits = $3 - 1 RETURNING rid)
           INSERT INTO ${this.c.S}.commits (rid, first, last, format, body, sha256)
           SELECT rid, $3, $3, $4, $5, $6 FROM run`,
          [st.rid, lease.token, n, row.format, row.body, row.sha256],
        )
      ).rowCount === 1;
    await this.fenced(runId, lease, write, () => this.rowIs(st.rid, n, n, row.sha256), {
      kind: 'commit',
      n,
      sha: row.sha256,
    });
    advance(st.codec, delta);
    st.next = n + 1;
    st.cursor = n;
  }

  /** The whole log as one row (commits 1..n) in one statement: the first row rewritten, the others removed. */
  async compact(runId: string, ops: readonly CommitOp[], meta: RunMeta): Promise<void> {
    const { st, lease } = this.owned(runId);
    await this.settleDoubt(runId, st, lease);
    const n = st.next - 1;
    if (n === 0) return;
    const { row, delta } = encodeRow(runId, { first: 1, last: n }, ops, newCodec(), meta);
    const codec = advance(newCodec(), delta);
    const write = async () =>
      (
        await this.c.q<{ done: string }>(
          `WITH run AS (
             UPDATE ${this.c.S}.runs SET covered = $3, lease_heartbeat = now()
             WHERE rid = $1 AND lease_token = $2 AND commits = $3 RETURNING rid),
           head AS (
             UPDATE ${this.c.S}.commits c SET last = $3, format = $4, body = $5, sha256 = $6
             FROM run WHERE c.rid = run.rid AND c.first = 1 RETURNING c.rid),
           tail AS (DELETE FROM ${this.c.S}.commits c USING head WHERE c.rid = head.rid AND c.first > 1 RETURNING 1)
           SELECT (SELECT count(*) FROM head) AS done`,
          [st.rid, lease.token, n, row.format, row.body, row.sha256],
        )
      ).rows[0]?.done === '1';
    await this.fenced(runId, lease, write, () => this.rowIs(st.rid, 1, n, row.sha256), {
      kind: 'compact',
      n,
      sha: row.sha256,
      codec,
    });
    st.codec = codec;
    st.covered = n;
  }

  /** Content-addressed and deduplicated across runs: stored once, referenced by each run that has it. */
  async putBlob(runId: string, hash: string, content: string): Promise<void> {
    const { st, lease } = this.owned(runId);
    const write = async () =>
      (
        await this.c.q(
          `WITH run AS (SELECT rid FROM ${this.c.S}.runs WHERE rid = $1 AND lease_token = $2 FOR SHARE),
           b AS (INSERT INTO ${this.c.S}.blobs (hash, content) SELECT $3, $4 FROM run
                 ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash RETURNING hash),
           x AS (INSERT INTO ${this.c.S}.run_blobs (rid, hash) SELECT run.rid, b.hash FROM run, b ON CONFLICT DO NOTHING)
           SELECT rid FROM run`,
          [st.rid, lease.token, hash, content],
        )
      ).rowCount === 1;
    // Idempotent: a blob whose outcome is unknown is simply written again.
    await this.fenced(runId, lease, write, async () => false, null);
  }

  private async fenced(
    runId: string,
    lease: PgLease,
    write: () => Promise<boolean>,
    landed: () => Promise<boolean>,
    doubt: Doubt | null,
  ): Promise<void> {
    const st = this.c.state(runId)!;
    let matched: boolean;
    try {
      matched = await write();
    } catch (err) {
      if (!(err instanceof PgFailure) || !err.unknownOutcome) throw pgWriteError(runId, this.c.target, err);
      const seen = await this.probe(landed);
      if (seen === true) return;
      if (seen === undefined) {
        st.doubt = doubt;
        throw pgWriteError(runId, this.c.target, err);
      }
      try {
        matched = await write(); // it did not land: once more (it cannot land twice)
      } catch (again) {
        if (again instanceof PgFailure && again.unknownOutcome) st.doubt = doubt;
        throw pgWriteError(runId, this.c.target, again);
      }
    }
    if (matched) return;
    if (await landed().catch(() => false)) return; // finished on the server after its connection broke
    await this.refused(runId, st, lease);
  }

  /** Asks whether a write landed until the database answers or settleMs pass (undefined: no answer). */
  private async probe(landed: () => Promise<boolean>): Promise<boolean | undefined> {
    const until = Date.now() + this.c.settleMs;
    for (;;) {
      try {
        return await landed();
      } catch (err) {
        if (!isConnectionError(err) || Date.now() >= until) return undefined;
        await new Promise((r) => setTimeout(r, Math.min(250, this.c.settleMs)));
      }
    }
  }

  private async rowIs(rid: string, first: number, last: number, sha: Buffer): Promise<boolean> {
    const r = await this.c.q<{ sha256: Buffer }>(
      `SELECT sha256 FROM ${this.c.S}.commits WHERE rid = $1 AND first = $2 AND last = $3`,
      [rid, first, last],
    );
    return r.rows[0]?.sha256.equals(sha) ?? false;
  }

  /** The statement matched no row: taken over (or deleted), or the log is not where this window left it. */
  private async refused(runId: string, st: RunState, lease: PgLease): Promise<never> {
    const r = await this.c
      .q<{ lease_token: string; commits: number }>(`SELECT lease_token, commits FROM ${this.c.S}.runs WHERE rid = $1`, [
        st.rid,
      ])
      .catch((err: unknown) => {
        throw pgWriteError(runId, this.c.target, err);
      });
    const row = r.rows[0];
    if (!row || row.lease_token !== lease.token) {
      lease.markLost('another window took the run over');
      throw new RunNotOwnedError(runId);
    }
    throw new StoreWriteError(
      `Run ${runId} in the shared store has ${row.commits} commits, not the ${st.next - 1} this window wrote: nothing was written. Resume the run to read it again.`,
      runId,
      'EPGSTATE',
    );
  }

  /** A write whose outcome was unknown is looked up before the run's next write. */
  private async settleDoubt(runId: string, st: RunState, lease: PgLease): Promise<void> {
    const d = st.doubt;
    if (!d) return;
    const there = await (
      d.kind === 'commit' ? this.rowIs(st.rid, d.n, d.n, d.sha) : this.rowIs(st.rid, 1, d.n, d.sha)
    ).catch((err: unknown) => {
      throw pgWriteError(runId, this.c.target, err);
    });
    st.doubt = null;
    if (!there) return;
    if (d.kind === 'compact') {
      st.codec = d.codec;
      st.covered = d.n;
      return;
    }
    // A commit this window was told had failed is in the database: the run in memory is behind it.
    lease.markLost('a write reported as failed had reached the database; the run is read again when resumed');
    await this.c.giveBack(lease);
    throw new StoreWriteError(
      `A write of run ${runId} that had been reported as failed (the database went away while it was in flight) is in the shared store after all. Nothing is lost or doubled; resume the run so this window reads it again.`,
      runId,
      'EPGRELOAD',
    );
  }
}
