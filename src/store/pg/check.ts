// "Connect a shared run store…": checks a connection string before the extension uses it and says
// in plain words what is wrong — the host, the login, the database, TLS, the schema's version, the
// role's privileges. Reads only: the schema is created by the store on first use.
import pg from 'pg';
import { SchemaVersionError } from '../api/errors';
import { errorMessage } from '../../common/errors';
import { clientConfig, describeTarget, pgCode, type PgTls } from './conn';
import { DEFAULT_PG_SCHEMA, PG_SCHEMA_VERSION, quoteIdent, readSchemaVersion } from './schema';

export interface SharedStoreCheck {
  ok: boolean;
  /** Where it connected (never the password). */
  target: string;
  /** What is wrong, each a sentence the user can act on. */
  problems: string[];
  /** What was found (server version, schema state, runs of this project). */
  notes: string[];
}

export interface CheckOptions {
  connectionString: string;
  ssl?: PgTls;
  schema?: string;
  /** The workspace identity whose runs are counted. */
  workspace?: string;
  connectTimeoutMs?: number;
}

/** The oldest server the store's statements are written for (data-modifying CTEs, ON CONFLICT, make_interval). */
const MIN_SERVER = 110000;

export async function checkSharedStore(o: CheckOptions): Promise<SharedStoreCheck> {
  const schema = o.schema ?? DEFAULT_PG_SCHEMA;
  const target = describeTarget(o.connectionString);
  const out: SharedStoreCheck = { ok: false, target, problems: [], notes: [] };
  if (!/^postgres(ql)?:\/\//.test(o.connectionString.trim())) {
    out.problems.push(
      'The connection string must start with postgresql:// (e.g. postgresql://user:password@host:5432/database).',
    );
    return out;
  }
  const client = new pg.Client(
    clientConfig({ connectionString: o.connectionString, ssl: o.ssl, connectTimeoutMs: o.connectTimeoutMs ?? 8_000 }),
  );
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    out.problems.push(explainConnectError(err, o.connectionString));
    await client.end().catch(() => undefined);
    return out;
  }
  try {
    const v = await client.query<{ n: string; v: string; user: string; db: string; tls: boolean | null }>(
      `SELECT current_setting('server_version_num') AS n, current_setting('server_version') AS v,
              current_user AS user, current_database() AS db,
              (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()) AS tls`,
    );
    const info = v.rows[0]!;
    out.notes.push(`PostgreSQL ${info.v}, database ${info.db}, role ${info.user}, ${info.tls ? 'TLS' : 'no TLS'}.`);
    if (Number(info.n) < MIN_SERVER)
      out.problems.push(`PostgreSQL ${info.v} is too old: the shared store needs version 11 or newer.`);
    await checkSchema(client, schema, info.user, o.workspace, out);
  } catch (err) {
    out.problems.push(`The check failed: ${errorMessage(err)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  out.ok = out.problems.length === 0;
  return out;
}

async function checkSchema(
  c: pg.Client,
  schema: string,
  user: string,
  workspace: string | undefined,
  out: SharedStoreCheck,
): Promise<void> {
  const grants = `GRANT USAGE ON SCHEMA ${schema} TO ${user}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${user}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${user};`;
  let version: number;
  try {
    version = await readSchemaVersion(c, schema);
  } catch (err) {
    if (pgCode(err) === '42501') {
      out.problems.push(`The role ${user} may not use the schema ${schema}. An administrator can run: ${grants}`);
      return;
    }
    if (err instanceof SchemaVersionError) {
      out.problems.push(
        `The schema ${schema} was migrated by a newer version of Agent Waypoints (schema version ${err.found}; this one knows ${err.supported}). Update the extension; the database is left untouched.`,
      );
      return;
    }
    throw err;
  }
  const S = quoteIdent(schema);
  if (version < PG_SCHEMA_VERSION) {
    const schemaExists = (await c.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).rowCount! > 0;
    const may = schemaExists
      ? (await c.query(`SELECT has_schema_privilege($1, 'CREATE') AS ok`, [schema])).rows[0]?.ok
      : (await c.query(`SELECT has_database_privilege(current_database(), 'CREATE') AS ok`)).rows[0]?.ok;
    if (!may) {
      out.problems.push(
        schemaExists
          ? `The role ${user} may not create tables in the schema ${schema}. An administrator can run: GRANT CREATE ON SCHEMA ${schema} TO ${user};`
          : `The schema ${schema} does not exist and the role ${user} may not create it. An administrator can run: CREATE SCHEMA ${schema} AUTHORIZATION ${user};`,
      );
      return;
    }
    out.notes.push(
      version === 0
        ? `The schema ${schema} will be created on first use.`
        : `The schema ${schema} (version ${version}) will be migrated to version ${PG_SCHEMA_VERSION} on first use.`,
    );
    return;
  }
  const tables = ['runs', 'commits', 'blobs', 'run_blobs', 'quarantine', 'handoffs', 'decisions'];
  const denied = [];
  for (const t of tables) {
    const r = await c.query(`SELECT has_table_privilege($1, 'SELECT,INSERT,UPDATE,DELETE') AS ok`, [`${S}.${t}`]);
    if (!r.rows[0]?.ok) denied.push(t);
  }
  if (denied.length > 0) {
    out.problems.push(
      `The role ${user} may not read and write ${denied.map((t) => `${schema}.${t}`).join(', ')}. An administrator can run: ${grants}`,
    );
    return;
  }
  const runs = workspace
    ? Number((await c.query(`SELECT count(*) AS n FROM ${S}.runs WHERE workspace = $1`, [workspace])).rows[0]?.n ?? 0)
    : null;
  out.notes.push(
    `The schema ${schema} is at version ${version}${runs === null ? '' : `; it holds ${runs} run${runs === 1 ? '' : 's'} of this project`}.`,
  );
}

/** The first thing a user needs to know when the connection itself fails. */
export function explainConnectError(err: unknown, connectionString: string): string {
  const code = pgCode(err);
  const msg = errorMessage(err);
  const where = describeTarget(connectionString);
  let user = 'the user';
  try {
    user = decodeURIComponent(new URL(connectionString).username) || user;
  } catch {
    // described as "the user"
  }
  if (code === '28P01') return `The server refused the password of ${user} (${where}).`;
  if (code === '28000')
    return `The server refused the login of ${user} to ${where}: pg_hba.conf has no entry for this user, database and address, or it requires TLS (${msg}).`;
  if (code === '3D000') return `The database does not exist (${msg}).`;
  if (code === 'ECONNREFUSED')
    return `Nothing is listening at ${where} (connection refused). Is the server running, and is the port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `The host name of ${where} cannot be resolved.`;
  if (code === 'ENOENT') return `There is no server socket at ${where}.`;
  if (/self[- ]signed|unable to verify|certificate/i.test(msg))
    return `TLS: the server's certificate is not trusted (${msg}). Give its CA in the setting agentWaypoints.store.tls.caFile, or use sslmode in the connection string.`;
  if (/does not support SSL/i.test(msg)) return `TLS was asked for, but the server at ${where} does not offer it.`;
  if (/timeout/i.test(msg) || code === 'ETIMEDOUT')
    return `No answer from ${where} in time (${msg}): a firewall, or the wrong host or port.`;
  return `Could not connect to ${where}: ${code ? `${code}: ` : ''}${msg}`;
}
