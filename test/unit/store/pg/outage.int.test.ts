// The database goes away under a running run (the server stopped hard, as a crash or a failover
// would): the next durable write fails with the reason and nothing acknowledged is lost; what the
// window holds in memory stays readable; when the server is back, the same window takes the run
// again and every checkpoint is there once.
import assert from 'node:assert/strict';
import { StoreWriteError } from '../../../../src/store/api/errors';
import type { PgStatus } from '../../../../src/store/pg/engine';
import { sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { machine, pgWorkspace, startRun } from './support';

describe('shared store (postgres): the database goes away', function () {
  this.timeout(120_000);
  let ws: ReturnType<typeof pgWorkspace>;
  beforeEach(() => (ws = pgWorkspace('outage')));
  afterEach(async () => {
    if (!sharedPostgres().running()) sharedPostgres().start();
    await ws.closeAll();
  });

  it('writes fail with the reason while it is away; the window takes its run back when it returns; nothing lost or doubled', async () => {
    const statuses: PgStatus[] = [];
    const me = machine('window', 'host');
    const s = await ws.open({ settleMs: 500, onStatus: (st) => statuses.push(st) });
    const { runId, lease } = await startRun(s, me);
    await s.append(runId, h.preTools(1)); // write-behind: queued, not yet durable
    sharedPostgres().stopServer('immediate');
    try {
      const intent = { tool_call_id: 'call_1', step: 1, tool_name: 'w', input_hash: 'i', side_effecting: true };
      const err = await h.rejects(s.recordIntent(runId, intent), StoreWriteError);
      assert.equal(err.code, 'EPGUNREACHABLE');
      assert.match(err.message, /shared run store.*unreachable.*nothing acknowledged was lost/is);
      assert.doesNotMatch(err.message, /postgres@/, 'the connection string is never in a message');
      assert.equal(statuses.at(-1)?.reachable, false);
      assert.deepEqual(
        (await s.listRuns()).runs.map((r) => r.run_id),
        [runId],
        'the listing stays',
      );
      assert.equal((await s.latest(runId)).seq, 4, 'this window still reads its run');
      await assert.rejects(
        lease.release(),
        StoreWriteError,
        'the queued checkpoint cannot be flushed: the lease stays',
      );
    } finally {
      sharedPostgres().start();
    }
    const again = await s.acquire(runId, me); // flushes what was queued, gives the old lease back, takes a new one
    assert.equal(statuses.at(-1)?.reachable, true);
    const other = await ws.open();
    assert.deepEqual(
      (await other.list(runId)).map((r) => r.seq),
      [4, 3, 2, 1],
    );
    assert.deepEqual(
      await other.listEffects(runId),
      [],
      'the intent that failed was never acknowledged, and is not there',
    );
    await s.recordIntent(runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      input_hash: 'i',
      side_effecting: true,
    });
    assert.equal((await other.listEffects(runId)).length, 1);
    await again.release();
  });
});
