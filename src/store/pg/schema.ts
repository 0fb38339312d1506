// The PostgreSQL schema of the shared run store: created and migrated by the extension itself,
// versioned like the disk store's files (an integer in `meta`), forward-refusing: a database
// migrated by a newer version of the extension is refused and left untouched.
//
// To change the layout: bump PG_SCHEMA_VERSION and add PG_MIGRATIONS[new] (the statements that
// take the previous version to it). Migrations run in one transaction under an advisory lock, so
// two windows opening an empty database at once create it once.
import type pg from 'pg';
import { SchemaVersionError } from '../api/errors';

export const PG_SCHEMA_VERSION = 3;
export const DEFAULT_PG_SCHEMA = 'agent_waypoints';

/** Statements taking the schema from version v-1 to v (`S` is the quoted schema name). */
export const PG_MIGRATIONS: Readonly<Record<number, (S: string) => string[]>> = {
  1: (S) => [
    `CREATE TABLE ${S}.runs (
      rid bigserial PRIMARY KEY,
      workspace text NOT NULL,
      run_id text NOT NULL,
      meta text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      commits integer NOT NULL DEFAULT 0,
      covered integer NOT NULL DEFAULT 0,
      summary text,
      summary_commits integer NOT NULL DEFAULT 0,
      lease_token bigint NOT NULL DEFAULT 0,
      lease_owner text,
      lease_acquired timestamptz,
      lease_heartbeat timestamptz,
      lease_heartbeat_ms integer,
      lease_pid integer,
      lease_backend_start timestamptz,
      UNIQUE (workspace, run_id)
    )`,
    `CREATE TABLE ${S}.commits (
      rid bigint NOT NULL REFERENCES ${S}.runs (rid) ON DELETE CASCADE,
      first integer NOT NULL,
      last integer NOT NULL,
      format smallint NOT NULL,
      body text NOT NULL,
      sha256 bytea NOT NULL,
      PRIMARY KEY (rid, first)
    )`,
    `CREATE TABLE ${S}.blobs (hash text PRIMARY KEY, content text NOT NULL)`,
    `CREATE TABLE ${S}.run_blobs (
      rid bigint NOT NULL REFERENCES ${S}.runs (rid) ON DELETE CASCADE,
      hash text NOT NULL REFERENCES ${S}.blobs (hash),
      PRIMARY KEY (rid, hash)
    )`,
    `CREATE INDEX run_blobs_hash ON ${S}.run_blobs (hash)`,
    `CREATE TABLE ${S}.quarantine (
      id bigserial PRIMARY KEY,
      workspace text NOT NULL,
      run_id text NOT NULL,
      what text NOT NULL,
      body text,
      reason text NOT NULL,
      moved_at timestamptz NOT NULL DEFAULT now()
    )`,
  ],
  2: (S) => [
    // Runs handed to the workers (workers.ts): one row per run while it is theirs.
    `CREATE TABLE ${S}.handoffs (
      rid bigint PRIMARY KEY REFERENCES ${S}.runs (rid) ON DELETE CASCADE,
      workspace text NOT NULL,
      run_id text NOT NULL,
      handed_by text NOT NULL,
      handed_at timestamptz NOT NULL DEFAULT now(),
      status text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'waiting', 'stopped')),
      detail text,
      wanted_back text,
      wanted_at timestamptz,
      -- the run's lease token when its status was last set: a lease taken since is an owner that
      -- never said where the run stopped
      status_token bigint NOT NULL DEFAULT 0
    )`,
    `CREATE INDEX handoffs_workspace ON ${S}.handoffs (workspace, status)`,
    // Decisions any client posts for a run it does not hold; the run's owner records them.
    `CREATE TABLE ${S}.decisions (
      id bigserial PRIMARY KEY,
      rid bigint NOT NULL REFERENCES ${S}.runs (rid) ON DELETE CASCADE,
      workspace text NOT NULL,
      run_id text NOT NULL,
      tool_call_id text NOT NULL,
      input_hash text NOT NULL,
      body text NOT NULL,
      posted_at timestamptz NOT NULL DEFAULT now(),
      outcome text CHECK (outcome IN ('recorded', 'refused')),
      outcome_detail text,
      settled_at timestamptz
    )`,
    `CREATE INDEX decisions_open ON ${S}.decisions (rid) WHERE outcome IS NULL`,
    // Every change a client may wait for, pushed on the schema's channel when its transaction commits
    // (LISTEN/NOTIFY): written by the database, so no writer can forget it. Heartbeats are not changes.
    `CREATE FUNCTION ${S}.notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE r record; kind text;
    BEGIN
      IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
      kind := TG_TABLE_NAME;
      IF TG_TABLE_NAME = 'runs' THEN
        kind := CASE WHEN TG_OP <> 'UPDATE' THEN 'run'
          WHEN OLD.commits IS DISTINCT FROM NEW.commits THEN 'commit' ELSE 'lease' END;
      END IF;
      PERFORM pg_notify(TG_TABLE_SCHEMA, json_build_object('kind', kind, 'op', lower(TG_OP),
        'workspace', r.workspace, 'run_id', r.run_id)::text);
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER runs_notify AFTER INSERT OR DELETE ON ${S}.runs
      FOR EACH ROW EXECUTE FUNCTION ${S}.notify_change()`,
    `CREATE TRIGGER runs_change_notify AFTER UPDATE ON ${S}.runs FOR EACH ROW
      WHEN (OLD.commits IS DISTINCT FROM NEW.commits OR OLD.lease_token IS DISTINCT FROM NEW.lease_token
        OR OLD.lease_owner IS DISTINCT FROM NEW.lease_owner)
      EXECUTE FUNCTION ${S}.notify_change()`,
    `CREATE TRIGGER handoffs_notify AFTER INSERT OR UPDATE OR DELETE ON ${S}.handoffs
      FOR EACH ROW EXECUTE FUNCTION ${S}.notify_change()`,
    `CREATE TRIGGER decisions_notify AFTER INSERT OR UPDATE ON ${S}.decisions
      FOR EACH ROW EXECUTE FUNCTION ${S}.notify_change()`,
  ],
  3: (S) => [
    // Listing by workspace, newest first, and by state, from the summary the row already holds (its
    // JSON text, so the write path is unchanged). Read by pattern, never parsed: a summary that is not
    // JSON gives NULL here (listed first, then read whole as the cache miss it is) instead of failing
    // the write that stored it. Inside a JSON string a quote is escaped, so a title cannot match.
    `CREATE FUNCTION ${S}.summary_updated_ms(summary text) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT substring(summary FROM '"updated_ms":(-?[0-9]{1,18})[,}]')::bigint $$`,
    `CREATE FUNCTION ${S}.summary_state(summary text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT substring(summary FROM '"state":"([a-z_]{1,40})"') $$`,
    `CREATE INDEX runs_listing ON ${S}.runs
      (workspace, ${S}.summary_updated_ms(summary) DESC NULLS FIRST, run_id COLLATE "C" DESC)`,
    `CREATE INDEX runs_by_state ON ${S}.runs (workspace, ${S}.summary_state(summary))`,
  ],
};

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`invalid schema name ${JSON.stringify(name)}: lowercase letters, digits and _`);
  return `"${name}"`;
}

/** The schema's version as stored (0: not created yet). Refuses a newer one. */
export async function readSchemaVersion(c: pg.ClientBase, schema: string): Promise<number> {
  const S = quoteIdent(schema);
  const exists = await c.query(`SELECT to_regclass($1) AS t`, [`${S}.meta`]);
  if (exists.rows[0]?.t == null) return 0;
  const r = await c.query(`SELECT value FROM ${S}.meta WHERE key = 'schema_version'`);
  const v = Number(r.rows[0]?.value ?? 0);
  if (v > PG_SCHEMA_VERSION) throw new SchemaVersionError(`PostgreSQL schema ${schema}`, v, PG_SCHEMA_VERSION);
  return v;
}

/**
 * Creates or migrates the schema. Only a database behind this version is written (under an
 * advisory lock, in one transaction); a current one is only read, so a role that may not create
 * tables can use a schema its administrator created.
 */
export async function ensureSchema(pool: pg.Pool, schema: string): Promise<{ migratedFrom: number | null }> {
  const c = await pool.connect();
  try {
    if ((await readSchemaVersion(c, schema)) === PG_SCHEMA_VERSION) return { migratedFrom: null };
    const S = quoteIdent(schema);
    await c.query('BEGIN');
    try {
      await c.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`agent-waypoints:migrate:${schema}`]);
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${S}`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${S}.meta (key text PRIMARY KEY, value text NOT NULL)`);
      const from = await readSchemaVersion(c, schema); // again, under the lock: another window may have done it
      for (let v = from + 1; v <= PG_SCHEMA_VERSION; v++) {
        const step = PG_MIGRATIONS[v];
        if (!step) throw new Error(`no migration of the PostgreSQL schema to version ${v}`);
        for (const sql of step(S)) await c.query(sql);
      }
      await c.query(
        `INSERT INTO ${S}.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [String(PG_SCHEMA_VERSION)],
      );
      await c.query('COMMIT');
      return { migratedFrom: from };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    c.release();
  }
}
