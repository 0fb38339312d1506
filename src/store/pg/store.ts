// The shared store: the same core as the disk and memory stores, over the PostgreSQL engine.
// Opening creates or migrates the schema (refusing a newer one) and reads this workspace's run
// summaries — never a run's log; a run's commits are read when the run is touched.
import { Store, type CoreOptions } from '../core/store';
import type { PgTls } from './conn';
import { PgEngine, type PgStatus } from './engine';
import { defaultLeaseOptions } from './lease';
import { DEFAULT_PG_SCHEMA } from './schema';

export interface PgStoreOptions extends CoreOptions {
  /** `postgresql://user:password@host:port/database?…` (kept in SecretStorage by the extension). */
  connectionString: string;
  /** The project's identity (workspaceIdentity.ts): the store lists and writes this project's runs only. */
  workspace: string;
  /** TLS as `pg` takes it (true, or { ca, cert, key, rejectUnauthorized, servername }). */
  ssl?: PgTls;
  /** The schema the tables live in (default agent_waypoints). */
  schema?: string;
  /** Lease heartbeat and staleness (defaults 5 s / 30 s). */
  heartbeatMs?: number;
  staleMs?: number;
  /** How long a write whose connection broke in flight waits for the database to say whether it landed (default 5 s). */
  settleMs?: number;
  poolSize?: number;
  /** Reachability changes (the Runs view shows "shared store unreachable"). */
  onStatus?: (s: PgStatus) => void;
}

/** The store over the PostgreSQL engine (no subclass: the same façade as every backend). */
export type PgStore = Store<PgEngine>;

/** The shared store, usable at once (calls wait for the open; its errors surface there). */
export function openPgStore(opts: PgStoreOptions): PgStore {
  const lease = defaultLeaseOptions();
  const engine = new PgEngine({
    connectionString: opts.connectionString,
    ...(opts.ssl !== undefined ? { ssl: opts.ssl } : {}),
    ...(opts.poolSize !== undefined ? { poolSize: opts.poolSize } : {}),
    workspace: opts.workspace,
    schema: opts.schema ?? DEFAULT_PG_SCHEMA,
    lease: { heartbeatMs: opts.heartbeatMs ?? lease.heartbeatMs, staleMs: opts.staleMs ?? lease.staleMs },
    settleMs: opts.settleMs ?? 5_000,
    ...(opts.onStatus ? { onStatus: opts.onStatus } : {}),
  });
  return new Store(engine, opts).start();
}

/** The same, resolved once open. */
export async function openPgStoreReady(opts: PgStoreOptions): Promise<PgStore> {
  const store = openPgStore(opts);
  await store.whenOpen();
  return store;
}
