// One owner per run across machines, in one process: leases with fencing tokens. (Two processes, a
// SIGKILLed holder and a SIGSTOPped one are in pg/processes.int.test.ts.)
import assert from 'node:assert/strict';
import { RunLockedError, RunNotOwnedError } from '../../../../src/store/api/errors';
import * as h from '../helpers';
import { admin, ageLease, machine, pgWorkspace, startRun } from './support';

describe('shared store (postgres): one owner per run', function () {
  this.timeout(60_000);
  let ws: ReturnType<typeof pgWorkspace>;
  beforeEach(() => (ws = pgWorkspace('lease')));
  afterEach(() => ws.closeAll());

  it('a second machine is refused, told which machine and window hold the run, and reads it read-only', async () => {
    const a = await ws.open();
    const b = await ws.open();
    const { runId } = await startRun(a, machine('VS Code window “api”', 'laptop-a'));
    const err = await h.rejects(b.acquire(runId, machine('VS Code window “api”', 'desktop-b')), RunLockedError);
    assert.match(err.message, /VS Code window “api” \(pid \d+ on laptop-a\)/);
    assert.equal((await b.owner(runId))?.hostname, 'laptop-a');
    assert.equal((await b.latest(runId)).seq, 3, 'the other machine reads it');
    await h.rejects(b.append(runId, h.preTools(1)), RunNotOwnedError);
  });

  it('a lease whose holder stopped heartbeating is taken over; the old holder’s writes are refused and never land', async () => {
    const a = await ws.open({ heartbeatMs: 60_000 });
    const b = await ws.open();
    const { runId, lease } = await startRun(a, machine('window a', 'host-a'));
    await ageLease(ws.workspace, runId);
    const taken = await b.acquire(runId, machine('window b', 'host-b'));
    await b.append(runId, h.preTools(1)); // seq 4, by the new owner
    await b.flush();
    await h.rejects(a.setRunState(runId, 'paused_cancelled', 'old owner'), RunNotOwnedError);
    assert.equal(lease.lost, true, 'the refused write tells the old holder it lost the run');
    await h.rejects(a.append(runId, h.preTools(1)), RunNotOwnedError);
    const c = await ws.open();
    assert.equal((await c.getRun(runId))?.state, 'running', 'the old holder’s state change never landed');
    assert.deepEqual(
      (await c.list(runId)).map((r) => r.seq),
      [4, 3, 2, 1],
    );
    assert.equal((await c.owner(runId))?.label, 'window b');
    await taken.release();
  });

  it('the heartbeat notices a takeover before the old holder writes anything', async () => {
    const a = await ws.open({ heartbeatMs: 60_000 });
    const b = await ws.open();
    const { runId, lease } = await startRun(a, machine('window a', 'host-a'));
    await ageLease(ws.workspace, runId);
    await b.acquire(runId, machine('window b', 'host-b'));
    assert.equal(lease.lost, false);
    await a.engine.heartbeat();
    assert.equal(lease.lost, true);
  });

  it('tokens only grow: a run given back and taken again is held under a higher token', async () => {
    const a = await ws.open();
    const { runId, lease } = await startRun(a, machine('a', 'h'));
    const token = () =>
      admin(async (c) =>
        Number(
          (
            await c.query(`SELECT lease_token FROM agent_waypoints.runs WHERE workspace = $1 AND run_id = $2`, [
              ws.workspace,
              runId,
            ])
          ).rows[0]?.lease_token,
        ),
      );
    assert.equal(await token(), 1);
    await lease.release();
    const again = await a.acquire(runId, machine('a', 'h'));
    assert.equal(await token(), 2);
    await again.release();
    assert.equal(await token(), 2, 'giving a run back keeps its token');
  });

  it('runs belong to their workspace identity: another project on the same database sees none of them', async () => {
    const a = await ws.open();
    const { runId } = await startRun(a, machine('a', 'h'));
    const other = pgWorkspace('other-project');
    try {
      const o = await other.open();
      assert.deepEqual((await o.listRuns()).runs, []);
      assert.equal(await o.getRun(runId), undefined);
      const same = await o.createRun({ ...h.newRun('same id, other project'), run_id: runId }, machine('o', 'h'));
      assert.equal(same.run.run_id, runId, 'the same id is free in another workspace');
      await same.lease.release();
    } finally {
      await other.closeAll();
    }
    assert.equal((await (await ws.open()).getRun(runId))?.title, 'shared run');
  });
});
