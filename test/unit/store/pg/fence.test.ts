// Fenced before every side effect, and every write under the token: a holder proves its lease at the
// moment a call would start (one fenced statement that fails closed), and its run summary — the
// listing's row — is written under its token like its history, so a window that was taken over
// neither starts a call nor writes over the new owner's summary.
import assert from 'node:assert/strict';
import { RunNotOwnedError, StoreWriteError } from '../../../../src/store/api/errors';
import { openPgStoreReady } from '../../../../src/store/pg/store';
import { CuttingProxy } from '../../../support/pgProxy';
import { sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { admin, ageLease, machine, pgWorkspace, startRun } from './support';

const summaryRow = (workspace: string, runId: string) =>
  admin(async (c) => {
    const r = await c.query<{ summary: string; summary_commits: number }>(
      `SELECT summary, summary_commits FROM agent_waypoints.runs WHERE workspace = $1 AND run_id = $2`,
      [workspace, runId],
    );
    return { summary: JSON.parse(r.rows[0]!.summary) as unknown, commits: r.rows[0]!.summary_commits };
  });

describe('shared store (postgres): fenced before every side effect', function () {
  this.timeout(60_000);
  let ws: ReturnType<typeof pgWorkspace>;
  let proxy: CuttingProxy | undefined;
  beforeEach(() => (ws = pgWorkspace('fence')));
  afterEach(async () => {
    proxy?.up();
    await ws.closeAll();
    await proxy?.close();
    proxy = undefined;
  });

  it('the holder proves its lease with one fenced statement that renews it; once taken over it is refused and the lease is lost', async () => {
    const a = await ws.open({ heartbeatMs: 60_000 });
    const { runId, lease } = await startRun(a, machine('window a', 'host-a'));
    assert.equal(a.isShared(runId), true);
    await ageLease(ws.workspace, runId);
    await a.assertOwner(runId);
    const b = await ws.open();
    await h.rejects(b.acquire(runId, machine('window b', 'host-b')), Error, /held by window a/);
    await ageLease(ws.workspace, runId);
    const taken = await b.acquire(runId, machine('window b', 'host-b'));
    assert.equal(lease.lost, false, 'no heartbeat told a yet');
    await h.rejects(a.assertOwner(runId), RunNotOwnedError);
    assert.equal(lease.lost, true);
    await b.assertOwner(runId);
    await taken.release();
  });

  it('fails closed: a holder that cannot reach the database is not proven (its heartbeat failing says nothing either way)', async () => {
    const c = sharedPostgres();
    proxy = await new CuttingProxy(c.socketDir, c.port).start();
    const a = await openPgStoreReady({
      connectionString: proxy.url(),
      workspace: ws.workspace,
      heartbeatMs: 60_000,
    });
    try {
      const { runId, lease } = await startRun(a, machine('window a', 'host-a'));
      proxy.down();
      await proxy.dropAll();
      await a.engine.heartbeat(); // fails: unknown
      const err = await h.rejects(a.assertOwner(runId), StoreWriteError);
      assert.equal(err.code, 'EPGUNREACHABLE');
      assert.match(err.message, /could not prove .* still holds run .* next call was not started/is);
      assert.equal(lease.lost, false, 'unknown, not lost');
      proxy.up();
      await a.assertOwner(runId);
    } finally {
      await a.close();
    }
  });

  it("a taken-over holder's summary is refused: the listing keeps what the new owner holds, and the old holder learns it lost the run", async () => {
    // progress summaries wait (as they do for 30 s): a's last commit's summary is still to be written
    const a = await ws.open({ heartbeatMs: 60_000, indexProgressMs: 3_600_000 });
    const { runId, lease } = await startRun(a, machine('window a', 'host-a'));
    await a.flush();
    const before = await summaryRow(ws.workspace, runId);
    await a.recordIntent(runId, h.commandIntent('call_1'));
    // a stops; b takes the run over; a comes back and its summary goes out
    await ageLease(ws.workspace, runId);
    const b = await ws.open();
    const taken = await b.acquire(runId, machine('window b', 'host-b'));
    await h.rejects(a.index.save(), RunNotOwnedError);
    assert.equal(lease.lost, true, 'a refused summary is lost ownership');
    assert.deepEqual(await summaryRow(ws.workspace, runId), before, "the old holder's summary never landed");
    await h.rejects(a.assertOwner(runId), RunNotOwnedError);
    await b.setRunState(runId, 'paused_cancelled', 'by the new owner');
    await b.flush();
    assert.equal(
      (await summaryRow(ws.workspace, runId)).commits,
      before.commits + 2,
      "the new owner's summary is written",
    );
    await taken.release();
  });
});
