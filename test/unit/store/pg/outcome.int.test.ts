// A write whose connection breaks while it is in flight: the outcome is unknown to the client, so
// the engine asks the database before it answers — never acknowledging what did not land, never
// writing twice what did. The cut comes from a proxy (test/support/pgProxy.ts) at the exact moment:
// after the server got the statement (it commits, the answer is lost) or before (nothing happens).
import assert from 'node:assert/strict';
import { StoreWriteError } from '../../../../src/store/api/errors';
import { openPgStoreReady, type PgStore } from '../../../../src/store/pg/store';
import { CuttingProxy } from '../../../support/pgProxy';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { admin, machine, startRun } from './support';

const COMMIT = 'INSERT INTO "agent_waypoints".commits';

describe('shared store (postgres): a connection lost mid-write', function () {
  this.timeout(60_000);
  let proxy: CuttingProxy;
  let workspace: string;
  const stores: PgStore[] = [];
  const open = async (settleMs = 3_000) => {
    const s = await openPgStoreReady({ connectionString: proxy.url(), workspace, settleMs });
    stores.push(s);
    return s;
  };
  beforeEach(async () => {
    const c = sharedPostgres();
    proxy = await new CuttingProxy(c.socketDir, c.port).start();
    workspace = freshWorkspace('outcome');
  });
  afterEach(async () => {
    proxy.up();
    for (const s of stores.splice(0)) await s.close().catch(() => undefined);
    await proxy.close();
  });

  /** Every commit row of the run: numbers consecutive, each seq once. */
  async function rows(runId: string): Promise<{ commits: number[]; seqs: number[] }> {
    return admin(async (c) => {
      const r = await c.query(
        `SELECT c.first, c.body FROM agent_waypoints.commits c JOIN agent_waypoints.runs r USING (rid)
         WHERE r.workspace = $1 AND r.run_id = $2 ORDER BY c.first`,
        [workspace, runId],
      );
      const seqs = r.rows.flatMap((x: { body: string }) =>
        (JSON.parse(x.body) as { ops: { op: string; record?: { seq: number } }[] }).ops
          .filter((o) => o.op === 'record')
          .map((o) => o.record!.seq),
      );
      return { commits: r.rows.map((x: { first: number }) => x.first), seqs };
    });
  }

  it('the answer is lost after the server committed: the append resolves and the commit is there once', async () => {
    const s = await open();
    const { runId } = await startRun(s, machine('a', 'h'));
    proxy.arm({ marker: COMMIT, when: 'after-forwarding' });
    await s.append(runId, h.terminal(1));
    assert.equal(proxy.cuts, 1);
    const r = await rows(runId);
    assert.deepEqual(r.commits, [1, 2, 3]);
    assert.deepEqual(r.seqs, [1, 2, 3, 4], 'each checkpoint once');
    await s.append(runId, h.preTools(1)).catch(() => undefined); // the run goes on from the right commit number
    assert.equal((await (await open()).getRun(runId))?.state, 'completed');
  });

  it('the statement never reached the server: it is sent again and lands once', async () => {
    const s = await open();
    const { runId } = await startRun(s, machine('a', 'h'));
    proxy.arm({ marker: COMMIT, when: 'before-forwarding' });
    await s.recordIntent(runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      input_hash: 'i',
      side_effecting: true,
    });
    assert.equal(proxy.cuts, 1);
    assert.deepEqual((await rows(runId)).commits, [1, 2, 3]);
    assert.equal((await (await open()).listEffects(runId)).length, 1);
  });

  it('landed while the database stayed away: the write fails, the next one finds it there, and resuming reads it once', async () => {
    const s = await open(300);
    const { runId, lease } = await startRun(s, machine('a', 'h'));
    proxy.arm({ marker: COMMIT, when: 'after-forwarding' });
    proxy.down();
    const intent = { tool_call_id: 'call_1', step: 1, tool_name: 'w', input_hash: 'i', side_effecting: true };
    const err = await h.rejects(s.recordIntent(runId, intent), StoreWriteError);
    assert.equal(err.code, 'EPGUNREACHABLE');
    assert.deepEqual(await s.listEffects(runId), [], 'not acknowledged, not in this window’s run');
    proxy.up();
    const again = await h.rejects(s.setRunState(runId, 'paused_error', 'the store went away'), StoreWriteError);
    assert.equal(again.code, 'EPGRELOAD', again.message);
    assert.equal(lease.lost, true);
    const resumed = await s.acquire(runId, machine('a', 'h'));
    assert.deepEqual(
      (await s.listEffects(runId)).map((e) => e.tool_call_id),
      ['call_1'],
      'read back from the database: the intent is there once (so it is asked about, never silently re-run)',
    );
    await s.setRunState(runId, 'paused_error', 'resumed after the outage');
    assert.deepEqual((await rows(runId)).commits, [1, 2, 3, 4], 'the landed intent once, then the state');
    await resumed.release();
  });

  it('did not land while the database stayed away: the write fails, and the next one goes through', async () => {
    const s = await open(300);
    const { runId } = await startRun(s, machine('a', 'h'));
    proxy.arm({ marker: COMMIT, when: 'before-forwarding' });
    proxy.down();
    await h.rejects(s.append(runId, h.terminal(1)), StoreWriteError);
    proxy.up();
    await s.append(runId, h.terminal(1));
    assert.deepEqual((await rows(runId)).seqs, [1, 2, 3, 4]);
  });

  it('a takeover whose answer is lost: the window holds the run, not locked out by itself', async () => {
    const s = await open();
    const { runId, lease } = await startRun(s, machine('a', 'h'));
    await lease.release();
    proxy.arm({ marker: 'lease_token = r.lease_token + 1', when: 'after-forwarding' });
    const again = await s.acquire(runId, machine('a', 'h'));
    assert.equal(proxy.cuts, 1);
    await s.append(runId, h.terminal(1));
    await again.release();
    assert.deepEqual((await rows(runId)).seqs, [1, 2, 3, 4]);
  });

  it('a run created while its answer is lost: created once, held by this window', async () => {
    const s = await open();
    proxy.arm({ marker: 'INSERT INTO "agent_waypoints".runs', when: 'after-forwarding' });
    const { run, lease } = await s.createRun(h.newRun('created in the dark'), machine('a', 'h'));
    assert.equal(proxy.cuts, 1);
    await s.append(run.run_id, h.runStarted());
    await lease.release();
    assert.deepEqual(
      (await (await open()).listRuns()).runs.map((r) => r.title),
      ['created in the dark'],
      'one run, not a second under a new id',
    );
  });
});
