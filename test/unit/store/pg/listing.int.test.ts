// The shared store lists a workspace of many runs from an index (schema version 3): opening reads the
// newest runs, then every unfinished one (the Runs view's first page, startup's resume offer), not
// every row of the workspace; EXPLAIN shows both queries on their indexes, also after migrating a
// version-2 database.
import assert from 'node:assert/strict';
import { openPgStore, openPgStoreReady } from '../../../../src/store/pg/store';
import { headQueries } from '../../../../src/store/pg/runIndex';
import { PG_SCHEMA_VERSION } from '../../../../src/store/pg/schema';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import { everyPage, fillRuns } from '../listingSupport';
import { admin } from './support';

const HEAD = 10;
const RUNS = 30;
const S = '"agent_waypoints"';

async function manyRuns(url: string, workspace: string): Promise<string[]> {
  return fillRuns(await openPgStoreReady({ connectionString: url, workspace }), RUNS);
}

/** The plans of the head's two queries, with other plans priced out (a table of 30 rows would take a scan and a sort). */
async function plans(db: string, workspace: string): Promise<string[]> {
  const sql = headQueries(S);
  return admin(async (c) => {
    await c.query(`ANALYZE ${S}.runs`);
    for (const plan of ['seqscan', 'bitmapscan', 'sort']) await c.query(`SET enable_${plan} = off`);
    const explain = async (q: string, params: unknown[]) =>
      (await c.query(`EXPLAIN ${q}`, params)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    return [
      await explain(sql.newest, [workspace, HEAD]),
      await explain(sql.unfinished, [workspace, ['paused_error', 'interrupted']]),
    ];
  }, db);
}

describe('shared store (postgres): listing a workspace of many runs', function () {
  this.timeout(120_000);

  it('opens with the newest page and every unfinished run, at most the head’s summaries; later pages read the rest', async () => {
    const url = sharedPostgres().url();
    const workspace = freshWorkspace('listing');
    await manyRuns(url, workspace);
    const whole = await openPgStoreReady({ connectionString: url, workspace });
    await whole.whenWhole();
    const expected = await everyPage(whole, HEAD);
    await whole.close();

    const s = openPgStore({ connectionString: url, workspace, headRuns: HEAD });
    try {
      const first = await s.listRuns({ limit: HEAD });
      assert.deepEqual(first.runs, expected[0], 'the newest page, as the whole index lists it');
      const paused = await s.listRuns({ limit: 100, states: ['paused_error', 'interrupted'] });
      assert.deepEqual(paused.runs.map((r) => r.title).sort(), ['r0', 'r10', 'r15', 'r20', 'r25', 'r5']);
      const unfinishedOlder = (RUNS - HEAD) / 5;
      assert.equal(s.index.entries.size, HEAD + unfinishedOlder, 'the summaries read: the head’s');
      assert.deepEqual(await everyPage(s, HEAD), expected);
      assert.equal(s.index.entries.size, RUNS);
    } finally {
      await s.close();
    }
  });

  it('lists on its indexes, also after a version-2 database is migrated', async () => {
    const db = await sharedPostgres().createDatabase();
    const url = sharedPostgres().url(db);
    const workspace = freshWorkspace('explain');
    await manyRuns(url, workspace);
    const [before, byState] = await plans(db, workspace);
    assert.match(before!, /Index Scan using runs_listing/);
    assert.match(byState!, /Index Scan using runs_by_state/);

    // Back to version 2: the listing functions and their indexes gone.
    await admin(async (c) => {
      await c.query(`DROP FUNCTION ${S}.summary_updated_ms(text), ${S}.summary_state(text) CASCADE`);
      await c.query(`UPDATE ${S}.meta SET value = '2' WHERE key = 'schema_version'`);
    }, db);
    const again = openPgStore({ connectionString: url, workspace, headRuns: HEAD });
    try {
      assert.equal((await again.listRuns({ limit: HEAD })).runs.length, HEAD);
      const version = await admin(
        (c) => c.query(`SELECT value FROM ${S}.meta WHERE key = 'schema_version'`).then((r) => r.rows[0].value),
        db,
      );
      assert.equal(version, String(PG_SCHEMA_VERSION));
      const [newest, unfinished] = await plans(db, workspace);
      assert.match(newest!, /Index Scan using runs_listing/);
      assert.doesNotMatch(newest!, /Sort/, 'in the index’s order: no sort of the workspace’s rows');
      assert.match(unfinished!, /Index Scan using runs_by_state/);
    } finally {
      await again.close();
    }
  });
});
