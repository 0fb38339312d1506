// A store of many runs opens from its index's head (index_head.json: the newest runs and every
// unfinished one): the Runs view's first page and startup's unfinished runs are listed without
// reading index.json or any run's log; anything beyond the head reads the whole index, and a head
// that no longer matches index.json or the runs folder is not used.
import assert from 'node:assert/strict';
import os from 'node:os';
import { openDiskStore, openDiskStoreReady, Store } from '../../../src/store';
import type { IndexHead } from '../../../src/store/core/engine';
import { DiskEngine } from '../../../src/store/disk/engine';
import { nodeFs } from '../../../src/store/disk/fsLayer';
import { defaultLockOptions } from '../../../src/store/disk/lock';
import { FaultyFs } from './faultyFs';
import { everyPage, fillRuns } from './listingSupport';
import * as h from './helpers';

const HEAD = 10;
const RUNS = 30;

/** Runs r0 (oldest) … r29, every fifth paused (unfinished), the rest completed. */
async function manyRuns(dir: string): Promise<string[]> {
  return fillRuns(await openDiskStoreReady(dir, { headRuns: HEAD }), RUNS);
}

const rel = (dir: string, reads: string[]) => reads.map((p) => p.slice(dir.length));

/** Every page of the store's listing, as a store that has read its whole index lists them. */
async function pagesOfWhole(dir: string) {
  const whole = await openDiskStoreReady(dir);
  await whole.whenWhole();
  const pages = await everyPage(whole, HEAD);
  await whole.close();
  return pages;
}

describe('store: opening a store of many runs from its index head', function () {
  this.timeout(60_000);
  const tmp = h.suiteTmp();

  it('lists the first page and every unfinished run from the head alone: no index.json, no run’s log, at most the head’s summaries', async () => {
    const dir = tmp('aw-head-');
    const ids = await manyRuns(dir);
    const expected = await pagesOfWhole(dir);

    const ffs = new FaultyFs();
    const s = openDiskStore(dir, { fs: ffs, headRuns: HEAD });
    try {
      const first = await s.listRuns({ limit: HEAD });
      assert.deepEqual(first.runs, expected[0], 'the newest page, as the whole index lists it');
      const paused = await s.listRuns({ limit: 100, states: ['paused_error', 'interrupted'] });
      assert.deepEqual(
        paused.runs.map((r) => r.title).sort(),
        ['r0', 'r10', 'r15', 'r20', 'r25', 'r5'],
        'every unfinished run, however old',
      );
      assert.deepEqual(rel(dir, ffs.reads), ['/index_head.json'], 'the head only');
      const unfinishedOlder = ids.slice(0, RUNS - HEAD).filter((_, i) => i % 5 === 0).length;
      assert.equal(s.index.entries.size, HEAD + unfinishedOlder, 'the summaries read: the head’s');

      // A page past the head reads the whole index, and pages on exactly as it does.
      assert.deepEqual(await everyPage(s, HEAD), expected);
      assert.ok(rel(dir, ffs.reads).includes('/index.json'));
      assert.equal(s.index.entries.size, RUNS);
      assert.equal(ffs.reads.filter((p) => p.includes('/runs/')).length, 0, 'still no run’s log');
    } finally {
      await s.close();
    }
  });

  it('a head that no longer matches is not used: a run made after it was written is listed, from index.json and the runs folder', async () => {
    const dir = tmp('aw-head-stale-');
    await manyRuns(dir);
    // Another window makes a run and has not written the index yet (its timer is far off).
    const other = await openDiskStoreReady(dir, { indexStructuralMs: 3_600_000, indexProgressMs: 3_600_000 });
    const { run, lease } = await other.createRun(h.newRun('made by another window'), h.owner('other'));
    try {
      const ffs = new FaultyFs();
      const s = openDiskStore(dir, { fs: ffs, headRuns: HEAD });
      try {
        const first = await s.listRuns({ limit: HEAD });
        assert.equal(first.runs[0]?.run_id, run.run_id, 'the new run, newest');
        assert.ok(rel(dir, ffs.reads).includes('/index.json'));
      } finally {
        await s.close();
      }
    } finally {
      await lease.release();
      await other.close();
    }
  });

  it('after a run finishes in this window, the head written at close lists it in its new place; closing reads nothing more', async () => {
    const dir = tmp('aw-head-moved-');
    const ids = await manyRuns(dir);
    const s = openDiskStore(dir, { headRuns: HEAD });
    const lease = await s.acquire(ids[0]!, h.owner('w')); // the oldest run, unfinished, outside the newest page
    await s.setRunState(ids[0]!, 'completed', null);
    await lease.release();
    await s.close();
    const ffs = new FaultyFs();
    const t = openDiskStore(dir, { fs: ffs, headRuns: HEAD });
    try {
      const first = await t.listRuns({ limit: HEAD });
      assert.equal(first.runs[0]?.run_id, ids[0], 'newest now');
      assert.equal(first.runs[0]?.state, 'completed');
      await t.close();
      assert.deepEqual(rel(dir, ffs.reads), ['/index_head.json'], 'opened, listed and closed: the head only');
    } finally {
      await t.close();
    }
  });

  /**
   * A disk engine whose head gives its unfinished runs apart, after the newest, when the test says
   * (as the shared store reads them: a query of their own).
   */
  function laterUnfinished(dir: string, fs = nodeFs) {
    let release!: (ok: boolean) => void;
    const gate = new Promise<boolean>((r) => (release = r));
    class Engine extends DiskEngine {
      override async openIndexHead(): Promise<IndexHead | undefined> {
        const head = await super.openIndexHead();
        if (!head?.cutoff) return head;
        const [ms, id] = head.cutoff;
        const isNewer = (e: IndexHead['entries'][number]) =>
          e.updated_ms > ms || (e.updated_ms === ms && e.run_id >= id);
        return {
          ...head,
          entries: head.entries.filter(isNewer),
          unfinished: gate.then((ok) => {
            if (!ok) throw new Error('the unfinished runs could not be read');
            return { entries: head.entries.filter((e) => !isNewer(e)), unindexed: [] };
          }),
        };
      }
    }
    const engine = new Engine(dir, {
      fs,
      now: Date.now,
      lock: { ...defaultLockOptions(), hostname: os.hostname(), now: Date.now },
    });
    return { store: new Store(engine, { headRuns: HEAD }).start(), release };
  }

  const settledSoon = async (p: Promise<unknown>) => {
    let settled = false;
    void p.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    return settled;
  };

  it('unfinished runs read apart: listable with the newest alone; a listing of unfinished runs waits for them', async () => {
    const dir = tmp('aw-head-later-');
    const ids = await manyRuns(dir);
    const expected = await pagesOfWhole(dir);

    const { store: s, release } = laterUnfinished(dir);
    try {
      await s.whenOpen();
      assert.deepEqual((await s.listRuns({ limit: HEAD })).runs, expected[0], 'the newest page, before the rest');
      assert.equal(s.index.entries.size, HEAD, 'the newest alone so far');
      const paused = s.listRuns({ limit: 100, states: ['paused_error', 'interrupted'] });
      assert.equal(await settledSoon(paused), false, 'the listing of unfinished runs waits for them');
      await s.deleteRun(ids[5]!); // r5: unfinished, older than the newest; deleted before its entry came
      release(true);
      assert.deepEqual(
        (await paused).runs.map((r) => r.title).sort(),
        ['r0', 'r10', 'r15', 'r20', 'r25'],
        'every unfinished run, however old; the one deleted meanwhile stays deleted',
      );
      assert.deepEqual(
        await everyPage(s, HEAD),
        expected.map((page) => page.filter((r) => r.run_id !== ids[5])).filter((page) => page.length > 0),
      );
    } finally {
      await s.close();
    }
  });

  it('unfinished runs read apart that cannot be read: the whole index answers the listing of unfinished runs', async () => {
    const dir = tmp('aw-head-later-fails-');
    await manyRuns(dir);
    const ffs = new FaultyFs();
    const { store: s, release } = laterUnfinished(dir, ffs);
    try {
      await s.whenOpen();
      release(false);
      const paused = await s.listRuns({ limit: 100, states: ['paused_error', 'interrupted'] });
      assert.deepEqual(paused.runs.map((r) => r.title).sort(), ['r0', 'r10', 'r15', 'r20', 'r25', 'r5']);
      assert.ok(rel(dir, ffs.reads).includes('/index.json'), 'read from the whole index');
    } finally {
      await s.close();
    }
  });
});
