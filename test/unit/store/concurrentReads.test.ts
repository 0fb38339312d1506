// Readers that ask for a run at once (the run view reads its checkpoints, snapshot, approvals,
// effects, inbox and restores together) share one read of its log: the first open of a long run
// is not paid once per reader. A run another window owns is refreshed once per round the same way.
// A read that ends after this window acquired the run leaves the owner's handle in place.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { FaultyFs } from './faultyFs';
import * as h from './helpers';

/** A file layer that can hold its next read of a run's segment open until the test lets it go. */
class HeldRead extends FaultyFs {
  private gate: { reached: () => void; open: Promise<void> } | null = null;

  /** Holds the next segment read; resolves once that read has begun. */
  holdNextSegmentRead(): { begun: Promise<void>; letGo: () => void } {
    let letGo!: () => void;
    const open = new Promise<void>((resolve) => (letGo = resolve));
    let reached!: () => void;
    const begun = new Promise<void>((resolve) => (reached = resolve));
    this.gate = { reached, open };
    return { begun, letGo };
  }

  override async readFile(p: string) {
    const g = this.gate;
    if (g && /segment-\d+\.log$/.test(p)) {
      this.gate = null;
      const bytes = await super.readFile(p);
      g.reached();
      await g.open;
      return bytes;
    }
    return super.readFile(p);
  }
}

describe('store: concurrent reads of a run', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-concurrent-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("first reads read the run's log once and agree on what they read", async () => {
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

  it("a read that ends after this window acquired the run leaves the owner's handle in place: the owner's next writes go on", async () => {
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('read-then-acquire'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await s.append(id, h.preTools(1));
    await lease.release();
    await s.close();

    const ffs = new HeldRead();
    const r = await openDiskStoreReady(dir, { fs: ffs });
    // A read of the run (as a "finished" event makes the Runs tree do) holds its segment read open…
    const held = ffs.holdNextSegmentRead();
    const read = r.latest(id);
    await held.begun;
    // …while this window acquires the run, and the read ends only after.
    const mine = await r.acquire(id, h.owner('w2'));
    held.letGo();
    assert.equal((await read)?.seq, 2, 'the read answers what the log held');
    // The owner writes on: the read's handle did not take the owner's place.
    await r.append(id, h.preTools(2));
    await r.flush();
    assert.equal((await r.latest(id))?.seq, 3);
    await mine.release();
    await r.close();
    const again = await openDiskStoreReady(dir);
    assert.equal((await again.latest(id))?.seq, 3, 'the write is on disk');
    await again.close();
  });
});
