// The connection to the shared store: a small `pg` pool, and the one question every write asks when
// it fails — did the statement reach the server? A statement that never left (no connection) did
// nothing; a server error (SQLSTATE outside the connection classes) rolled back; a connection lost
// while the statement was in flight leaves its outcome unknown, and the engine finds out before it
// says anything (engine.ts).
import pg from 'pg';
import { StoreWriteError } from '../api/errors';
import { errorMessage } from '../../common/errors';

/** TLS as `pg` takes it: true/false, or node's tls options (ca, cert, key, rejectUnauthorized, servername …). */
export type PgTls = pg.ConnectionConfig['ssl'];

export interface PgConnectOptions {
  connectionString: string;
  ssl?: PgTls;
  /** Connections in the pool (the lease session is one more). */
  poolSize?: number;
  /** Client-side limit of one statement (a partitioned server must not hang a write forever). */
  queryTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export function newPool(o: PgConnectOptions): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(o), max: o.poolSize ?? 4, idleTimeoutMillis: 30_000 });
  // An idle connection the server dropped (a restart) must not crash the extension host: the pool
  // discards it and the next query opens a new one; whoever needs to know learns from its own query.
  pool.on('error', () => undefined);
  return pool;
}

export function clientConfig(o: PgConnectOptions): pg.ClientConfig {
  return {
    connectionString: o.connectionString,
    ...(o.ssl !== undefined ? { ssl: o.ssl } : {}),
    application_name: 'agent-waypoints',
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
    query_timeout: o.queryTimeoutMs ?? 60_000,
  };
}

/** A statement that failed, and whether it may have reached the server (then its outcome is unknown). */
export class PgFailure extends Error {
  override name = 'PgFailure';
  constructor(
    override readonly cause: unknown,
    readonly sent: boolean,
  ) {
    super(errorMessage(cause), { cause });
  }
  get code(): string | undefined {
    return pgCode(this.cause);
  }
  /** The server may have committed it: connection lost in flight. */
  get unknownOutcome(): boolean {
    return this.sent && isConnectionError(this.cause);
  }
}

export const pgCode = (err: unknown): string | undefined => {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
};

/** The database is away (or the path to it): as opposed to an error the server gave for the statement. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof PgFailure) return isConnectionError(err.cause);
  const code = pgCode(err);
  if (code && /^(08|57P0[123]|53300)/.test(code)) return true; // connection exception, shutdown, too many connections
  if (code && /^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ENOTFOUND, ETIMEDOUT, EPIPE …
  const m = errorMessage(err);
  return /Connection terminated|timeout|Client has encountered a connection error|connect ECONN|not queryable/i.test(m);
}

/** Checked-out connections with an error listener: a connection that dies mid-query emits 'error' besides failing the query. */
const guarded = new WeakSet<pg.PoolClient>();

/** One statement on a pooled connection; a broken connection is discarded, never reused. */
export async function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  pool: pg.Pool,
  sql: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new PgFailure(err, false);
  }
  if (!guarded.has(client)) {
    client.on('error', () => undefined); // the failed query carries the error
    guarded.add(client);
  }
  try {
    const r = await client.query<R>(sql, params);
    client.release();
    return r;
  } catch (err) {
    client.release(isConnectionError(err) ? (err as Error) : undefined);
    throw new PgFailure(err, true);
  }
}

export interface PgStatus {
  reachable: boolean;
  /** The last connection error, while unreachable. */
  error: string | null;
}

/** The pool, and whether the database answered the last statement: every outcome feeds what the Runs view shows. */
export class PgDb {
  status: PgStatus = { reachable: true, error: null };

  constructor(
    readonly pool: pg.Pool,
    private readonly onStatus?: (s: PgStatus) => void,
  ) {}

  async q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []) {
    try {
      const r = await run<R>(this.pool, sql, params);
      this.reachable(true);
      return r;
    } catch (err) {
      if (isConnectionError(err)) this.reachable(false, err);
      throw err;
    }
  }

  reachable(ok: boolean, err?: unknown): void {
    const next: PgStatus = { reachable: ok, error: ok ? null : errorMessage(err) };
    if (next.reachable === this.status.reachable && next.error === this.status.error) return;
    this.status = next;
    this.onStatus?.({ ...next });
  }
}

/** Where the shared store is, for messages (database and host; never the user or the password). */
export function describeTarget(connectionString: string): string {
  // Parsed by hand: a unix-socket URL (postgresql://user@/db?host=/run/postgresql) is no valid WHATWG URL.
  const m = /^postgres(?:ql)?:\/\/(?:[^@/]*@)?([^/?]*)(?:\/([^?]*))?(?:\?(.*))?$/.exec(connectionString.trim());
  if (!m) return 'the configured database';
  const query = new URLSearchParams(m[3] ?? '');
  const hostPort = m[1] ?? '';
  const host = query.get('host') ?? (decodeURIComponent(hostPort.replace(/:\d+$/, '')) || 'localhost');
  const port = query.get('port') ?? /:(\d+)$/.exec(hostPort)?.[1];
  const db = decodeURIComponent(m[2] ?? '') || '(default database)';
  return `${db} on ${host}${port ? `:${port}` : ''}`;
}

/** A failed write as the store reports it: never "to disk", and never the connection string. */
export function pgWriteError(runId: string | null, target: string, err: unknown): StoreWriteError {
  if (err instanceof StoreWriteError) return err;
  const cause = err instanceof PgFailure ? err.cause : err;
  const code = pgCode(cause) ?? 'EPG';
  const what = runId ? `run ${runId}` : 'the run index';
  const away = isConnectionError(cause);
  return new StoreWriteError(
    `Could not write ${what} to the shared run store (PostgreSQL, ${target}: ${code}: ${errorMessage(cause)}). ` +
      (away
        ? 'The database is unreachable; nothing acknowledged was lost, and the run pauses until it is back.'
        : 'Nothing acknowledged was lost; the run pauses.'),
    runId,
    away ? 'EPGUNREACHABLE' : code,
    { cause },
  );
}

/** A lease that could not be proven before a side effect: nothing was started, and the run pauses. */
export function unproven(runId: string, target: string, err: unknown): StoreWriteError {
  const cause = err instanceof PgFailure ? err.cause : err;
  const code = pgCode(cause) ?? 'EPG';
  const away = isConnectionError(cause);
  return new StoreWriteError(
    `Could not prove that this window still holds run ${runId} in the shared run store (PostgreSQL, ${target}: ${code}: ${errorMessage(cause)}), ` +
      'so its next call was not started: another machine may be taking the run over. ' +
      (away ? 'The run pauses until the database is back; resume it then.' : 'The run pauses; resume it to try again.'),
    runId,
    away ? 'EPGUNREACHABLE' : code,
    { cause },
  );
}
