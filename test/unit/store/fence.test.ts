// Fenced before every side effect, on the local stores: `assertOwner` answers from the run's lock —
// a stat of owner.lock while it is the file this window made, refused once another window linked its
// own; a window whose heartbeat is overdue (it was stopped) touches its lock first, and a window that
// judged that lock stale a moment before puts it back instead of taking the run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { RunLockedError, RunNotOwnedError } from '../../../src/store/api/errors';
import { nodeFs, type FsLayer } from '../../../src/store';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import * as h from './helpers';

describe('store: fenced before every side effect (local stores)', function () {
  const tmp = h.suiteTmp();

  it('disk: the holder is proven by its lock; once another window took the run over, it is refused and its lease lost', async () => {
    const dir = tmp('aw-fence-');
    const a = await openDiskStoreReady(dir, { heartbeatMs: 60_000 });
    const { run, lease } = await a.createRun(h.newRun(), h.owner('a'));
    await a.assertOwner(run.run_id);
    assert.equal(a.isShared(run.run_id), false);
    // b's clock is an hour ahead: a's lock looks stale to it
    const b = await openDiskStoreReady(dir, { now: () => Date.now() + 3_600_000 });
    const taken = await b.acquire(run.run_id, h.owner('b'));
    await h.rejects(a.assertOwner(run.run_id), RunNotOwnedError);
    assert.equal(lease.lost, true);
    await b.assertOwner(run.run_id);
    await taken.release();
    await Promise.all([a.close(), b.close()]);
  });

  it('disk: a holder whose heartbeat is overdue touches its lock before it proves it; a window that found it stale just before puts it back', async () => {
    const dir = tmp('aw-fence-');
    let shift = -3_600_000; // a acquires "an hour ago", then stops heartbeating (its timer never fires)
    const a = await openDiskStoreReady(dir, { heartbeatMs: 3_600_000, now: () => Date.now() + shift });
    const { run, lease } = await a.createRun(h.newRun(), h.owner('a'));
    const lockFile = path.join(dir, 'runs', run.run_id, 'owner.lock');
    const anHourAgo = (Date.now() - 3_600_000) / 1000;
    fs.utimesSync(lockFile, anHourAgo, anHourAgo);
    shift = 0; // a comes back
    let proven = false;
    // b judges the lock stale, and a proves its lease before b moves the lock aside
    const racing: FsLayer = {
      ...nodeFs,
      rename: async (from, to) => {
        if (from === lockFile && !proven) {
          await a.assertOwner(run.run_id);
          proven = true;
        }
        await nodeFs.rename(from, to);
      },
    };
    const b = await openDiskStoreReady(dir, { fs: racing });
    await h.rejects(b.acquire(run.run_id, h.owner('b')), RunLockedError, /held by a/);
    assert.equal(proven, true);
    assert.equal(lease.lost, false);
    await a.assertOwner(run.run_id);
    assert.equal((await b.owner(run.run_id))?.label, 'a');
    await a.append(run.run_id, h.runStarted());
    await lease.release();
    await Promise.all([a.close(), b.close()]);
  });

  it('memory: the holder is proven by its lock; a stolen lock is refused', async () => {
    const disk = new MemoryDisk();
    const s = await openMemoryStore({ disk });
    const { run } = await s.createRun(h.newRun(), h.owner('a'));
    await s.assertOwner(run.run_id);
    disk.stealLock(run.run_id, h.owner('b'));
    await h.rejects(s.assertOwner(run.run_id), RunNotOwnedError);
    await s.close();
  });
});
