// The shared store's schema: created by the extension (once, however many windows open an empty
// database together), versioned, forward-refusing; usable by a role that may not create tables when
// an administrator created them; and the connection check that says what is wrong.
import assert from 'node:assert/strict';
import { SchemaVersionError } from '../../../../src/store/api/errors';
import { checkSharedStore } from '../../../../src/store/pg/check';
import { describeTarget } from '../../../../src/store/pg/conn';
import { PG_SCHEMA_VERSION } from '../../../../src/store/pg/schema';
import { SharedWorkers } from '../../../../src/store/pg/workers';
import { localDecider } from '../../../../src/runner/decider';
import { openPgStoreReady } from '../../../../src/store/pg/store';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { admin, machine, startRun } from './support';

const urlAs = (db: string, role: string) =>
  sharedPostgres().url(db).replace('postgresql://postgres@', `postgresql://${role}@`);

describe('shared store (postgres): schema and connection check', function () {
  this.timeout(60_000);

  it('an empty database gets its schema once, when three windows open it at the same time', async () => {
    const db = await sharedPostgres().createDatabase();
    const url = sharedPostgres().url(db);
    const workspace = freshWorkspace('schema');
    const stores = await Promise.all([1, 2, 3].map(() => openPgStoreReady({ connectionString: url, workspace })));
    const { runId } = await startRun(stores[0]!, machine('a', 'h'));
    assert.equal((await stores[1]!.latest(runId)).seq, 3);
    for (const s of stores) await s.close();
    const meta = await admin(
      (c) => c.query(`SELECT key, value FROM agent_waypoints.meta ORDER BY key`).then((r) => r.rows),
      db,
    );
    assert.deepEqual(meta, [{ key: 'schema_version', value: String(PG_SCHEMA_VERSION) }]);
  });

  it('a version-1 database with runs migrates to the current version: its runs read as before, and can be handed to the workers', async () => {
    const db = await sharedPostgres().createDatabase();
    const url = sharedPostgres().url(db);
    const workspace = freshWorkspace('v1');
    const s = await openPgStoreReady({ connectionString: url, workspace });
    const { runId, lease } = await startRun(s, machine('a', 'h'));
    await lease.release();
    await s.close();
    // Back to what version 1 had: its tables and rows, without what version 2 added.
    await admin(async (c) => {
      await c.query(`DROP TABLE agent_waypoints.handoffs, agent_waypoints.decisions`);
      await c.query(`DROP FUNCTION agent_waypoints.notify_change() CASCADE`);
      await c.query(
        `DROP FUNCTION agent_waypoints.summary_updated_ms(text), agent_waypoints.summary_state(text) CASCADE`,
      );
      await c.query(`UPDATE agent_waypoints.meta SET value = '1' WHERE key = 'schema_version'`);
    }, db);
    const again = await openPgStoreReady({ connectionString: url, workspace });
    try {
      assert.equal((await again.latest(runId)).seq, 3);
      const version = await admin(
        (c) =>
          c.query(`SELECT value FROM agent_waypoints.meta WHERE key = 'schema_version'`).then((r) => r.rows[0].value),
        db,
      );
      assert.equal(version, String(PG_SCHEMA_VERSION));
      const workers = new SharedWorkers(again);
      await workers.watching();
      const seen = new Promise((resolve) => workers.watch((ch) => ch.kind === 'handoffs' && resolve(ch)));
      const h = await workers.handOff(runId, localDecider('h', 'cli'));
      assert.equal(h.status, 'ready');
      assert.deepEqual(await seen, { kind: 'handoffs', op: 'insert', workspace, runId });
    } finally {
      await again.close();
    }
  });

  it('refuses a database migrated by a newer version, and leaves it untouched', async () => {
    const db = await sharedPostgres().createDatabase();
    const url = sharedPostgres().url(db);
    const workspace = freshWorkspace('newer');
    const s = await openPgStoreReady({ connectionString: url, workspace });
    await startRun(s, machine('a', 'h'));
    await s.close();
    await admin((c) => c.query(`UPDATE agent_waypoints.meta SET value = '99' WHERE key = 'schema_version'`), db);
    const before = await admin((c) => c.query(`SELECT * FROM agent_waypoints.runs`).then((r) => r.rows), db);
    await assert.rejects(openPgStoreReady({ connectionString: url, workspace }), (err: Error) => {
      assert.ok(err instanceof SchemaVersionError);
      assert.match(
        err.message,
        new RegExp(`schema_version 99, newer than this version of Agent Waypoints supports \\(${PG_SCHEMA_VERSION}\\)`),
      );
      return true;
    });
    const check = await checkSharedStore({ connectionString: url });
    assert.equal(check.ok, false);
    assert.match(check.problems.join(' '), /migrated by a newer version of Agent Waypoints.*Update the extension/);
    assert.deepEqual(await admin((c) => c.query(`SELECT * FROM agent_waypoints.runs`).then((r) => r.rows), db), before);
    assert.equal(
      await admin((c) => c.query(`SELECT value FROM agent_waypoints.meta`).then((r) => r.rows[0].value), db),
      '99',
    );
  });

  it('a commit row of another format (newer or older) makes its run unreadable here, not damaged; the other runs read as before', async () => {
    for (const format of [99, 2]) await otherRowFormat(format);
  });

  async function otherRowFormat(format: number): Promise<void> {
    const workspace = freshWorkspace('other-row');
    const url = sharedPostgres().url();
    const s = await openPgStoreReady({ connectionString: url, workspace });
    const newer = await startRun(s, machine('a', 'h'), 'written by a newer version');
    const fine = await startRun(s, machine('a', 'h'), 'fine');
    await newer.lease.release();
    await fine.lease.release();
    await s.close();
    const bump = `UPDATE agent_waypoints.commits c SET format = $3 FROM agent_waypoints.runs r
                  WHERE r.rid = c.rid AND r.workspace = $1 AND r.run_id = $2 AND c.first = 2 RETURNING c.*`;
    const [row] = await admin((c) => c.query(bump, [workspace, newer.runId, format]).then((r) => r.rows));
    const events: string[] = [];
    const again = await openPgStoreReady({ connectionString: url, workspace, onEvent: (e) => events.push(e.kind) });
    try {
      await assert.rejects(again.latest(newer.runId), SchemaVersionError);
      await assert.rejects(again.acquire(newer.runId, machine('b', 'h')), SchemaVersionError);
      assert.equal((await again.latest(fine.runId)).seq, 3);
      assert.ok(!events.includes('corruption'), 'not reported as damage');
    } finally {
      await again.close();
    }
    const [after] = await admin((c) =>
      c
        .query(`SELECT c.* FROM agent_waypoints.commits c WHERE c.rid = $1 AND c.first = 2`, [row.rid])
        .then((r) => r.rows),
    );
    assert.deepEqual(after, row, 'the row is left as it was');
  }

  it('a role that may not create tables works in a schema its administrator created; the check says what to grant otherwise', async () => {
    const db = await sharedPostgres().createDatabase();
    const role = `aw_user_${db.slice(-8)}`;
    await admin((c) => c.query(`CREATE ROLE ${role} LOGIN`));
    const empty = await checkSharedStore({ connectionString: urlAs(db, role) });
    assert.equal(empty.ok, false);
    assert.match(
      empty.problems.join(' '),
      new RegExp(`may not create it\\. An administrator can run: CREATE SCHEMA agent_waypoints AUTHORIZATION ${role};`),
    );
    await (await openPgStoreReady({ connectionString: sharedPostgres().url(db), workspace: 'admin' })).close();
    const denied = await checkSharedStore({ connectionString: urlAs(db, role) });
    assert.match(
      denied.problems.join(' '),
      /may not use the schema agent_waypoints\. An administrator can run: GRANT USAGE ON SCHEMA .*GRANT SELECT, INSERT, UPDATE, DELETE/,
    );
    await admin(
      (c) =>
        c.query(
          `GRANT USAGE ON SCHEMA agent_waypoints TO ${role};
           GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA agent_waypoints TO ${role};
           GRANT USAGE ON ALL SEQUENCES IN SCHEMA agent_waypoints TO ${role};`,
        ),
      db,
    );
    const workspace = freshWorkspace('role');
    const ok = await checkSharedStore({ connectionString: urlAs(db, role), workspace });
    assert.deepEqual(ok.problems, []);
    assert.equal(ok.ok, true);
    assert.match(ok.notes.join(' '), new RegExp(`at version ${PG_SCHEMA_VERSION}; it holds 0 runs of this project`));
    const s = await openPgStoreReady({ connectionString: urlAs(db, role), workspace });
    try {
      const { runId } = await startRun(s, machine('user', 'h'));
      await s.append(runId, h.terminal(1));
      assert.equal((await s.getRun(runId))?.state, 'completed');
    } finally {
      await s.close();
    }
  });

  it('the check names what is wrong with the connection itself', async () => {
    const c = sharedPostgres();
    const noDb = await checkSharedStore({ connectionString: c.url('no_such_database') });
    assert.match(noDb.problems[0]!, /database does not exist/i);
    const nobody = await checkSharedStore({ connectionString: 'postgresql://u:secret@127.0.0.1:1/db' });
    assert.match(nobody.problems[0]!, /Nothing is listening at db on 127\.0\.0\.1:1 \(connection refused\)/);
    assert.doesNotMatch(nobody.problems.join(' '), /secret/);
    const notUrl = await checkSharedStore({ connectionString: 'host=db user=u' });
    assert.match(notUrl.problems[0]!, /must start with postgresql:\/\//);
    const fine = await checkSharedStore({ connectionString: c.url() });
    assert.equal(fine.ok, true, fine.problems.join(' '));
    assert.match(fine.notes[0]!, /^PostgreSQL 1\d\.\d+.*database postgres, role postgres, no TLS\./);
  });
});

describe('shared store (postgres): naming the target', () => {
  it('says database and host, for TCP and socket URLs, never the user or password', () => {
    assert.equal(
      describeTarget('postgresql://aw:s3cret@db.example.com:6543/runs?sslmode=require'),
      'runs on db.example.com:6543',
    );
    assert.equal(describeTarget('postgres://db/runs'), 'runs on db');
    assert.equal(
      describeTarget('postgresql://aw@/runs?host=%2Frun%2Fpostgresql&port=5433'),
      'runs on /run/postgresql:5433',
    );
    assert.equal(describeTarget('nonsense'), 'the configured database');
    for (const u of ['postgresql://aw:s3cret@h/d', 'postgresql://aw:s3cret@/d?host=/s'])
      assert.doesNotMatch(describeTarget(u), /aw|s3cret/);
  });
});
