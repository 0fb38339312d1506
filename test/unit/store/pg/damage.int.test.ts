// Damaged rows in the shared store (a hand edit, a bad restore of a backup): found by their
// checksums, reported naming the row, never read as empty; the run falls back to its last good
// commit, the bad rows go to the quarantine table (never deleted), and the damage is recorded in
// the run so lost side effects are asked about, not re-run.
import assert from 'node:assert/strict';
import { AgentCheckpointCorruptionError } from '../../../../src/store/api/errors';
import type { CorruptionReport } from '../../../../src/store/api/types';
import * as h from '../helpers';
import { admin, machine, pgWorkspace, startRun } from './support';

describe('shared store (postgres): damaged rows', function () {
  this.timeout(60_000);
  let ws: ReturnType<typeof pgWorkspace>;
  beforeEach(() => (ws = pgWorkspace('damage')));
  afterEach(() => ws.closeAll());

  const tamper = (runId: string, first: number, sql = `body = replace(c.body, 'do it', 'DO IT')`) =>
    admin((c) =>
      c.query(
        `UPDATE agent_waypoints.commits c SET ${sql} FROM agent_waypoints.runs r
         WHERE r.rid = c.rid AND r.workspace = $1 AND r.run_id = $2 AND c.first = $3`,
        [ws.workspace, runId, first],
      ),
    );

  it('an altered commit: reported naming the row, the run falls back, the rows are quarantined and the damage recorded', async () => {
    const s = await ws.open();
    const { runId, lease } = await startRun(s, machine('a', 'h'));
    await s.recordIntent(runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      input_hash: 'i',
      side_effecting: true,
    });
    await s.append(runId, h.preTools(1));
    await lease.release(); // commits: 1 run_started, 2 step+post_llm, 3 intent, 4 pre_tool_batch
    await tamper(runId, 2);
    const reports: CorruptionReport[] = [];
    const b = await ws.open({ onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    const taken = await b.acquire(runId, machine('b', 'h'));
    assert.equal(reports.length, 1);
    const r = reports[0]!;
    assert.equal(r.file, `postgres:agent_waypoints.commits/${runId}/2`);
    assert.match(r.reason, /sha256 does not match its content/);
    assert.equal(r.fell_back_to_seq, 1);
    assert.deepEqual(r.lost_seqs, { from: 2, to: 4 });
    assert.equal(r.effects_lost, true, 'the lost rows show an effect record');
    assert.deepEqual(
      r.lost_calls.map((c) => c.tool_call_id),
      ['call_1'],
    );
    assert.deepEqual(r.quarantined, [{ file: r.file, to: 'postgres:agent_waypoints.quarantine', reason: r.reason }]);
    const q = await admin((c) =>
      c.query(`SELECT what FROM agent_waypoints.quarantine WHERE workspace = $1 ORDER BY id`, [ws.workspace]),
    );
    assert.deepEqual(
      q.rows.map((x) => x.what),
      ['commit 2-2', 'commit 3-3', 'commit 4-4'],
      'moved, not deleted',
    );
    assert.equal((await b.latest(runId)).seq, 1);
    const damage = (await b.getRun(runId))?.damage;
    assert.equal(damage?.effects_lost, true);
    await taken.release();
    const c = await ws.open();
    assert.equal((await c.getRun(runId))?.damage?.file, r.file, 'the damage stays recorded in the run');
  });

  it('missing rows after the run’s committed count are lost data, not an empty run', async () => {
    const s = await ws.open();
    const { runId, lease } = await startRun(s, machine('a', 'h'));
    await s.append(runId, h.terminal(1));
    await lease.release();
    await admin((c) =>
      c.query(
        `DELETE FROM agent_waypoints.commits c USING agent_waypoints.runs r
         WHERE r.rid = c.rid AND r.workspace = $1 AND r.run_id = $2 AND c.first = 3`,
        [ws.workspace, runId],
      ),
    );
    const reports: CorruptionReport[] = [];
    const b = await ws.open({ onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    assert.equal((await b.latest(runId)).seq, 3, 'the step before is what is left');
    assert.match(reports[0]?.reason ?? '', /commits\/.*\/3 is missing: the run had committed 3 commits/);
    assert.equal(reports[0]?.data_lost, true);
  });

  it('a blob whose content no longer matches its hash is refused naming it, never handed out', async () => {
    const s = await ws.open();
    const { runId } = await startRun(s, machine('a', 'h'));
    const hash = await s.putBlob(runId, 'the full output\n'.repeat(200));
    await admin((c) => c.query(`UPDATE agent_waypoints.blobs SET content = 'garbage' WHERE hash = $1`, [hash]));
    const reports: CorruptionReport[] = [];
    const b = await ws.open({ onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    await assert.rejects(b.getBlob(runId, hash), (err: Error) => {
      assert.ok(err instanceof AgentCheckpointCorruptionError);
      assert.match(err.message, new RegExp(`blobs/${hash} is corrupt`));
      return true;
    });
    assert.equal(reports[0]?.file, `postgres:agent_waypoints.blobs/${hash}`);
  });

  it('the same content in two runs is stored once; deleting one run keeps it for the other, deleting both removes it', async () => {
    const s = await ws.open();
    const one = await startRun(s, machine('a', 'h'), 'one');
    const two = await startRun(s, machine('a', 'h'), 'two');
    const text = 'a file version shared by both runs\n'.repeat(100);
    const hash = await s.putBlob(one.runId, text);
    assert.equal(await s.putBlob(two.runId, text), hash);
    const copies = () =>
      admin(async (c) =>
        Number((await c.query(`SELECT count(*) FROM agent_waypoints.blobs WHERE hash = $1`, [hash])).rows[0].count),
      );
    assert.equal(await copies(), 1);
    await s.deleteRun(one.runId);
    assert.equal(await s.getBlob(two.runId, hash), text);
    await s.deleteRun(two.runId);
    assert.equal(await copies(), 0);
  });
});
