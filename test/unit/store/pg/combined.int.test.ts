// The store the extension uses with the `postgres` kind: the shared store for new runs beside this
// machine's local runs. When the database is away the local runs stay usable and the view is told;
// it reconnects by itself; local runs are copied over once and only once; retention never prunes a
// run that still owes a decision or an effect's outcome.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { StoreWriteError } from '../../../../src/store/api/errors';
import { openDiskStore } from '../../../../src/store/disk/store';
import { CombinedStore, type SharedState } from '../../../../src/store/pg/combined';
import { openPgStore } from '../../../../src/store/pg/store';
import { CuttingProxy } from '../../../support/pgProxy';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { machine, startRun } from './support';

const me = machine('VS Code window', 'laptop');

describe('shared store (postgres): beside the local runs', function () {
  this.timeout(60_000);
  let proxy: CuttingProxy;
  let dir: string;
  let workspace: string;
  const open: CombinedStore[] = [];
  beforeEach(async () => {
    const c = sharedPostgres();
    proxy = await new CuttingProxy(c.socketDir, c.port).start();
    dir = h.tmpDir('aw-combined-');
    workspace = freshWorkspace('combined');
  });
  afterEach(async () => {
    proxy.up();
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
    await proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const combined = (o: { retryMs?: number; now?: () => number } = {}) => {
    const s = new CombinedStore({
      local: openDiskStore(dir, o.now ? { now: o.now } : {}),
      openShared: async (onStatus) =>
        openPgStore({
          connectionString: proxy.url(),
          workspace,
          onStatus,
          settleMs: 200,
          ...(o.now ? { now: o.now } : {}),
        }),
      retryMs: o.retryMs ?? 100,
    });
    open.push(s);
    return s;
  };
  const until = (s: CombinedStore, kind: SharedState['kind']) =>
    new Promise<void>((resolve) => {
      if (s.state.kind === kind) return resolve();
      const sub = s.onState((st) => st.kind === kind && (sub.dispose(), resolve()));
    });

  it('the database away at start: local runs stay usable, new runs wait for it with the reason, it reconnects by itself', async () => {
    const first = combined();
    await until(first, 'connected');
    const local = await first.local.createRun(h.newRun('local run'), me);
    await first.local.append(local.run.run_id, h.runStarted());
    await local.lease.release();
    await first.close();
    open.splice(0);

    proxy.down();
    const s = combined();
    await until(s, 'unreachable');
    assert.match(s.state.kind === 'unreachable' ? s.state.error : '', /ECONNRESET|terminated|connect/i);
    assert.deepEqual(
      (await s.listRuns()).runs.map((r) => r.title),
      ['local run'],
    );
    const lease = await s.acquire(local.run.run_id, me);
    await s.append(local.run.run_id, h.preTools(1));
    await lease.release();
    const err = await h.rejects(s.createRun(h.newRun('new'), me), StoreWriteError);
    assert.match(err.message, /shared run store is not connected: .*Runs on this machine stay usable/);
    proxy.up();
    await until(s, 'connected');
    const made = await s.createRun(h.newRun('shared run'), me);
    await s.append(made.run.run_id, h.runStarted());
    await made.lease.release();
    assert.deepEqual((await s.listRuns()).runs.map((r) => r.title).sort(), ['local run', 'shared run']);
    assert.equal(s.shared?.index.get(made.run.run_id)?.title, 'shared run', 'the new run is in the shared store');
    assert.equal(s.local.index.get(made.run.run_id), undefined);
  });

  it('the database goes away mid-session: the state says so, writes fail with the reason, and the retry brings it back', async () => {
    const s = combined();
    await until(s, 'connected');
    const { runId, lease } = await startRun(s.shared! as never, me);
    proxy.down();
    await proxy.dropAll();
    await h.rejects(s.setRunState(runId, 'paused_cancelled', 'x'), StoreWriteError);
    assert.equal(s.state.kind, 'unreachable');
    assert.equal((await s.latest(runId)).seq, 3, 'what the window holds stays readable');
    proxy.up();
    await until(s, 'connected');
    await s.setRunState(runId, 'paused_cancelled', 'after the outage');
    await lease.release();
    assert.equal((await s.getRun(runId))?.state, 'paused_cancelled');
  });

  it('copies local runs to the shared store once: ids kept, export format checked, listed once, resumable there', async () => {
    const s = combined();
    await until(s, 'connected');
    const ids: string[] = [];
    for (const title of ['one', 'two']) {
      const r = await startRun(s.local as never, me, title);
      await r.lease.release();
      ids.push(r.runId);
    }
    const first = await s.copyLocalToShared(me);
    assert.deepEqual(first.copied.sort(), [...ids].sort());
    assert.deepEqual(first.failed, []);
    const again = await s.copyLocalToShared(me);
    assert.deepEqual(again.copied, [], 'nothing twice');
    assert.deepEqual(again.already.sort(), [...ids].sort());
    assert.deepEqual((await s.listRuns()).runs.map((r) => r.run_id).sort(), [...ids].sort(), 'each run listed once');
    const lease = await s.acquire(ids[0]!, me);
    await s.append(ids[0]!, h.terminal(1));
    await lease.release();
    assert.equal(s.shared?.index.get(ids[0]!)?.state, 'completed', 'written in the shared store');
    // Copied through the import (issue 18's rules for any import: its meta says so, decisions on calls
    // that have not run are asked again); its history is the same.
    type Body = { meta: { imported?: { from_run_id: string } }; records: unknown; lists: unknown; effects: unknown };
    const shared = ((await s.shared!.exportRun(ids[1]!)) as { body: Body }).body;
    const local = ((await s.local.exportRun(ids[1]!)) as { body: Body }).body;
    assert.equal(shared.meta.imported?.from_run_id, ids[1]);
    for (const k of ['records', 'lists', 'effects'] as const) assert.deepEqual(shared[k], local[k], k);
  });

  it('retention prunes finished shared runs, never one that owes a decision or an effect’s outcome', async () => {
    let t = 1_000_000;
    const s = combined({ now: () => t });
    await until(s, 'connected');
    const shared = s.shared!;
    const done = await startRun(shared as never, me, 'done');
    await shared.append(done.runId, h.terminal(1));
    const owes = await startRun(shared as never, me, 'owes a decision');
    await shared.requestApproval(owes.runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      category: 'write',
      arguments: {},
      input_hash: 'i',
      uncertain: true,
      reason: 'may already have run',
    });
    await shared.setRunState(owes.runId, 'failed', 'gave up');
    const effect = await startRun(shared as never, me, 'effect without outcome');
    await shared.recordIntent(effect.runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      input_hash: 'i',
      side_effecting: true,
    });
    await shared.setRunState(effect.runId, 'failed', 'gave up');
    for (const r of [done, owes, effect]) await r.lease.release();
    t += 10 * 86_400_000;
    assert.deepEqual(await s.pruneFinished(86_400_000), [done.runId]);
    assert.deepEqual((await s.listRuns()).runs.map((r) => r.title).sort(), [
      'effect without outcome',
      'owes a decision',
    ]);
  });
});
