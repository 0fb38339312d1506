// The runs tree's model on a 1000-step run (the benchmark's, seeded): its node opens a page of whole
// steps, reading one page's records, and Load more goes on where it stopped.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { writeFinishedRun } from '../../../../bench/workload';
import { openDiskStoreReady } from '../../../../src/store';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { RunsTreeModel, STEP_PAGE } from '../../../../src/views/runs/treeModel';
import { owner, tmp } from '../../loop/support';

/** Counts the checkpoint records a store hands out through list(). */
function counting(store: CheckpointStore): { store: CheckpointStore; read: () => number } {
  let read = 0;
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'list') {
        return async (...args: Parameters<CheckpointStore['list']>) => {
          const out = await target.list(...args);
          read += out.length;
          return out;
        };
      }
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: wrapped, read: () => read };
}

describe('runs tree: a 1000-step run', function () {
  this.timeout(120_000);
  const STEPS = 1000;
  let dir: string;
  const runId = 'tree-long-run';

  before(async () => {
    // The benchmark's run (seeded), written in memory and imported into a disk store.
    dir = (await writeFinishedRun(tmp('tree-long'), runId, STEPS, owner())).dir;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('expands in pages of whole steps, reading one page’s records; Load more continues where it stopped (time printed)', async () => {
    const disk = await openDiskStoreReady(dir); // a fresh window: the run's log is read on first expand
    const { store, read } = counting(disk);
    const model = new RunsTreeModel(store);
    try {
      await model.load();
      const total = model.get(runId)!.last_seq;
      const t0 = performance.now();
      const first = await model.steps(runId);
      const coldMs = performance.now() - t0;
      const readFirst = read();
      // A second window's model over a store that has the log in memory: the tree's own cost.
      const other = new RunsTreeModel(store);
      await other.load();
      const t1 = performance.now();
      await other.steps(runId);
      const warmMs = performance.now() - t1;
      other.dispose();
      console.log(
        `      1000-step run (${total} checkpoints): first expand ${coldMs.toFixed(0)} ms (its log read from disk), ${warmMs.toFixed(1)} ms with the log in memory; ${readFirst} records read`,
      );

      assert.equal(first.steps.length, STEP_PAGE);
      assert.equal(first.exhausted, false);
      assert.deepEqual(
        first.steps.map((s) => s.step),
        Array.from({ length: STEP_PAGE }, (_, i) => STEPS - i),
        'the newest steps, newest first',
      );
      assert.ok(readFirst < total / 4, `one page's records were read (${readFirst} of ${total})`);
      assert.match(first.steps[0]!.label, /^Step 1000 · \w+/);

      await model.loadMore(runId);
      const second = await model.steps(runId);
      assert.equal(second.steps.length, 2 * STEP_PAGE);
      const seqs = second.steps.flatMap((s) => s.records.map((r) => r.seq));
      assert.equal(new Set(seqs).size, seqs.length, 'no checkpoint twice');
      assert.equal(Math.min(...seqs), Math.min(...second.steps.at(-1)!.records.map((r) => r.seq)));
      // The page boundary did not cut a step: every step holds the same phases as a whole one.
      for (const s of second.steps)
        assert.deepEqual(
          s.records.map((r) => r.phase).slice(0, 3),
          ['step_started', 'pre_llm', 'post_llm'],
          `step ${s.step}`,
        );
    } finally {
      model.dispose();
      await disk.close();
    }
  });
});
