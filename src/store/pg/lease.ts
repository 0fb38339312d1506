// One owner per run across machines: a lease in the run's row, with a fencing token.
//
// Taking a run over increments `lease_token`; every write of the run's history carries the token
// in its WHERE clause (engine.ts), so once another machine has taken over, a paused or partitioned
// old owner's writes match no row and are refused — whatever its clock or its memory says.
// A lease is live while its holder heartbeats (every heartbeatMs, by the database's clock, so the
// machines' clocks do not matter). It is stale when the heartbeat is older than staleMs, or when the
// holder's database session is gone (its process died: the server saw the connection close) and
// it had a grace of two heartbeats to reconnect. The heartbeat runs on a session of its own, whose
// backend pid the row records.
import type pg from 'pg';
import { CheckpointNotFoundError, RunLockedError, RunNotOwnedError } from '../api/errors';
import type { RunMeta } from '../api/schema';
import type { OwnerInfo } from '../api/types';
import type { EngineLock } from '../core/engine';
import { clientConfig, isConnectionError, PgFailure, type PgConnectOptions } from './conn';
import pgLib from 'pg';

export interface LeaseOptions {
  heartbeatMs: number;
  staleMs: number;
}

export const defaultLeaseOptions = (): LeaseOptions => ({ heartbeatMs: 5_000, staleMs: 30_000 });

/**
 * The condition under which the lease in row `r` is live ($stale: the asker's staleness limit in
 * seconds). A holder whose database session is gone is given two of its own heartbeats to come back
 * (a restart of the server ends every session; its holders reconnect at their next beat).
 */
export const live = (stale: string) => `(
  r.lease_owner IS NOT NULL
  AND r.lease_heartbeat > now() - make_interval(secs => ${stale})
  AND (r.lease_pid IS NULL
    OR r.lease_heartbeat > now() - make_interval(secs => 2 * coalesce(r.lease_heartbeat_ms, 5000) / 1000.0)
    OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = r.lease_pid
      AND (a.backend_start IS NULL OR r.lease_backend_start IS NULL OR a.backend_start = r.lease_backend_start))))`;

const SESSION = `lease_pid = pg_backend_pid(), lease_heartbeat_ms = $HB,
  lease_backend_start = (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())`;

export class PgLease implements EngineLock {
  lost = false;
  /** Why it was lost (taken over, or its last write's outcome must be read back from the database). */
  reason: string | null = null;
  constructor(
    readonly rid: string,
    readonly runId: string,
    readonly token: string,
    private readonly session: LeaseSession,
  ) {}

  markLost(reason: string): void {
    this.lost = true;
    this.reason ??= reason;
    this.session.forget(this);
  }

  release(): Promise<void> {
    return this.session.release(this);
  }
}

/** The dedicated session that takes, heartbeats and gives back this store's leases. */
export class LeaseSession {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly held = new Map<string, PgLease>();
  /** Tokens given back while the database was away: this store may take those runs again at once. */
  private readonly unreleased = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly conn: PgConnectOptions,
    private readonly S: string,
    private readonly workspace: string,
    private readonly o: LeaseOptions,
    private readonly onReachable: (ok: boolean, err?: unknown) => void,
  ) {}

  private async session(): Promise<pg.Client> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const c = new pgLib.Client(clientConfig(this.conn));
      c.on('error', () => undefined); // seen as a failed query, and as `end`
      c.on('end', () => {
        if (this.client === c) this.client = null;
      });
      try {
        await c.connect();
      } catch (err) {
        throw new PgFailure(err, false);
      }
      this.client = c;
      return c;
    })().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async query(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    const c = await this.session();
    try {
      return await c.query(sql, params);
    } catch (err) {
      if (isConnectionError(err)) {
        if (this.client === c) this.client = null;
        void c.end().catch(() => undefined);
      }
      throw new PgFailure(err, true);
    }
  }

  /** The session columns, with this store's heartbeat period as parameter `$n`. */
  private session$(n: number): string {
    return SESSION.replace('$HB', `$${n}`);
  }

  /** Takes the run if nobody live holds it; RunLockedError naming the holder otherwise. */
  async acquire(runId: string, owner: OwnerInfo): Promise<PgLease> {
    const own = [...this.unreleased.entries()].filter(([, id]) => id === runId).map(([t]) => t);
    const take = () =>
      this.query(
        `UPDATE ${this.S}.runs r SET lease_token = r.lease_token + 1, lease_owner = $3, lease_acquired = now(),
           lease_heartbeat = now(), ${this.session$(6)}
         WHERE r.workspace = $1 AND r.run_id = $2 AND (NOT ${live('$4')} OR r.lease_token = ANY($5::bigint[]))
         RETURNING r.rid, r.lease_token`,
        [this.workspace, runId, JSON.stringify(owner), this.o.staleMs / 1000, own, this.o.heartbeatMs],
      );
    let row: { rid: string; lease_token: string } | undefined;
    try {
      row = (await take()).rows[0];
    } catch (err) {
      if (!(err instanceof PgFailure) || !err.unknownOutcome) throw err;
      row = await this.ownRow(runId, owner); // did the takeover land? Then the lease in the row is this one's
    }
    if (!row) {
      const holder = await this.holder(runId);
      if (holder === 'none') throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
      // Held by this very window: a takeover whose answer was lost landed after all (it was still in
      // flight when the row was first looked at).
      if (holder && JSON.stringify(holder) === JSON.stringify(owner)) row = await this.ownRow(runId, owner);
      else if (holder) throw new RunLockedError(runId, holder);
      if (!row) return this.acquire(runId, owner); // it went stale between the two statements
    }
    for (const t of own) this.unreleased.delete(t);
    return this.adopt(row.rid, runId, row.lease_token);
  }

  /** The run's row when `owner` (this window) holds it: its rid and token. */
  private async ownRow(runId: string, owner: OwnerInfo): Promise<{ rid: string; lease_token: string } | undefined> {
    const r = await this.query(
      `SELECT rid, lease_token FROM ${this.S}.runs WHERE workspace = $1 AND run_id = $2 AND lease_owner = $3`,
      [this.workspace, runId, JSON.stringify(owner)],
    );
    return r.rows[0] as { rid: string; lease_token: string } | undefined;
  }

  /** Inserts the run's row, held by `owner` (token 1). 'exists' when the id is taken in this workspace. */
  async create(meta: RunMeta, owner: OwnerInfo): Promise<PgLease | 'exists'> {
    const insert = () =>
      this.query(
        `INSERT INTO ${this.S}.runs (workspace, run_id, meta, lease_token, lease_owner, lease_acquired, lease_heartbeat,
           lease_pid, lease_backend_start, lease_heartbeat_ms)
         VALUES ($1, $2, $3, 1, $4, now(), now(), pg_backend_pid(),
           (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()), $5)
         ON CONFLICT (workspace, run_id) DO NOTHING RETURNING rid, lease_token`,
        [this.workspace, meta.run_id, JSON.stringify(meta), JSON.stringify(owner), this.o.heartbeatMs],
      );
    // A row this window created and nothing was committed to yet: an insert whose answer was lost.
    const mine = async () => {
      const r = await this.query(
        `SELECT rid, lease_token FROM ${this.S}.runs
         WHERE workspace = $1 AND run_id = $2 AND lease_owner = $3 AND lease_token = 1 AND commits = 0`,
        [this.workspace, meta.run_id, JSON.stringify(owner)],
      );
      return r.rows[0] as { rid: string; lease_token: string } | undefined;
    };
    let row: { rid: string; lease_token: string } | undefined;
    try {
      row = (await insert()).rows[0];
    } catch (err) {
      if (!(err instanceof PgFailure) || !err.unknownOutcome) throw err;
      // Taken when sent again: by this window's own insert, still in flight when it was looked for.
      row = (await mine()) ?? (await insert()).rows[0] ?? (await mine());
    }
    return row ? this.adopt(row.rid, meta.run_id, row.lease_token) : 'exists';
  }

  /** A lease this session holds (a run it created or took). */
  adopt(rid: string, runId: string, token: string): PgLease {
    const lease = new PgLease(rid, runId, token, this);
    this.held.set(rid, lease);
    this.startHeartbeat();
    return lease;
  }

  /** The live holder; undefined when nobody live holds it; 'none' when there is no such run. */
  async holder(runId: string): Promise<OwnerInfo | undefined | 'none'> {
    const r = await this.query(
      `SELECT r.lease_owner AS owner, ${live('$3')} AS live FROM ${this.S}.runs r
       WHERE r.workspace = $1 AND r.run_id = $2`,
      [this.workspace, runId, this.o.staleMs / 1000],
    );
    const row = r.rows[0] as { owner: string | null; live: boolean } | undefined;
    if (!row) return 'none';
    return row.live && row.owner ? (JSON.parse(row.owner) as OwnerInfo) : undefined;
  }

  /** Gives the run back (its token stays, so the next owner's is higher). Never throws. */
  async release(lease: PgLease): Promise<void> {
    this.forget(lease);
    if (lease.lost) return;
    lease.lost = true;
    await this.giveBack(lease);
  }

  /** Clears the lease in the database if it is still this token's. */
  async giveBack(lease: PgLease): Promise<void> {
    try {
      await this.query(
        `UPDATE ${this.S}.runs SET lease_owner = NULL, lease_heartbeat = NULL, lease_pid = NULL
         WHERE rid = $1 AND lease_token = $2`,
        [lease.rid, lease.token],
      );
    } catch {
      // the database is away: the lease goes stale by itself; this store may take it back at once
      this.unreleased.set(lease.token, lease.runId);
    }
  }

  forget(lease: PgLease): void {
    if (this.held.get(lease.rid) === lease) this.held.delete(lease.rid);
  }

  private startHeartbeat(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.beat(), this.o.heartbeatMs);
    this.timer.unref();
  }

  /** One statement for every held lease; a lease whose token no longer matches was taken over. */
  async beat(): Promise<void> {
    const leases = [...this.held.values()];
    if (leases.length === 0) return;
    try {
      const r = await this.query(
        `UPDATE ${this.S}.runs r SET lease_heartbeat = now(), ${this.session$(3)}
         FROM unnest($1::bigint[], $2::bigint[]) AS h(rid, token)
         WHERE r.rid = h.rid AND r.lease_token = h.token AND r.lease_owner IS NOT NULL
         RETURNING r.rid`,
        [leases.map((l) => l.rid), leases.map((l) => l.token), this.o.heartbeatMs],
      );
      this.onReachable(true);
      const alive = new Set(r.rows.map((x: { rid: string }) => String(x.rid)));
      for (const l of leases)
        if (!alive.has(l.rid) && this.held.get(l.rid) === l)
          l.markLost('another window took the run over after this one stopped renewing its lease');
    } catch (err) {
      this.onReachable(false, err); // unknown, not lost: writes are fenced by the token anyway
    }
  }

  /**
   * Proves at this moment, before a side effect starts, that `lease` is still this session's: one
   * fenced statement that also renews it. No row → taken over (lost); no answer → a PgFailure, never
   * "probably still mine". An answer slower than half the time another machine would need to take a
   * run whose holder went silent is no proof (the lease may have lapsed while it travelled): asked again.
   */
  async prove(lease: PgLease): Promise<void> {
    const margin = Math.min(this.o.staleMs, 2 * this.o.heartbeatMs) / 2;
    for (let attempt = 1; ; attempt++) {
      if (lease.lost) throw new RunNotOwnedError(lease.runId);
      const sent = performance.now();
      let r: pg.QueryResult;
      try {
        r = await this.query(
          `UPDATE ${this.S}.runs r SET lease_heartbeat = now(), ${this.session$(3)}
           WHERE r.rid = $1 AND r.lease_token = $2 AND r.lease_owner IS NOT NULL RETURNING r.rid`,
          [lease.rid, lease.token, this.o.heartbeatMs],
        );
      } catch (err) {
        if (isConnectionError(err)) this.onReachable(false, err);
        throw err;
      }
      this.onReachable(true);
      if (r.rowCount !== 1) {
        lease.markLost('another window took the run over after this one stopped renewing its lease');
        throw new RunNotOwnedError(lease.runId);
      }
      if (performance.now() - sent <= margin) return;
      if (attempt === 3)
        throw new PgFailure(
          Object.assign(new Error(`the database took longer than ${margin} ms to confirm the lease, 3 times`), {
            code: 'ETIMEDOUT',
          }),
          false,
        );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const l of [...this.held.values()]) await this.release(l);
    const c = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
