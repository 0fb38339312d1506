// Readers that ask for a run at once (the run view reads its checkpoints, snapshot, approvals,
// effects, inbox and restores together) share one read of its log: the first open of a long run
// is not paid once per reader. A run another window owns is refreshed once per round the same way.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { FaultyFs } from './faultyFs';
import * as h from './helpers';

describe('store: concurrent first reads of a run', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-concurrent-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("read the run's log once and agree on what they read", async () => {
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('shared-read'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    for (let i = 0; i < 5; i++) await s.append(id, h.preTools(1 + i));
    await lease.release();
    await s.close();

    const ffs = new FaultyFs();
    const r = await openDiskStoreReady(dir, { fs: ffs });
    const logReads = () => ffs.reads.filter((p) => /segment-\d+\.log$/.test(p)).length;
    assert.equal(logReads(), 0, 'opening the store reads no run log');
    const [records, latest, approvals, effects, inbox, restores] = await Promise.all([
      r.list(id, { limit: 1000 }),
      r.latest(id),
      r.listApprovals(id),
      r.listEffects(id),
      r.listInbox(id),
      r.listRestores(id),
    ]);
    assert.equal(logReads(), 1, 'six readers at once: one read of the log');
    assert.equal(records.length, 6);
    assert.equal(latest?.seq, records[0]!.seq);
    assert.deepEqual([approvals, effects, inbox, restores], [[], [], [], []]);
    // Later reads come from memory; a reader after the first read finished shares nothing stale.
    await r.list(id, { limit: 1 });
    assert.equal(logReads(), 1);
    await r.close();
  });
});
