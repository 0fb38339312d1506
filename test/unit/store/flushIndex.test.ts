// flush() makes every queued write durable and what a listing shows (index.json, core/indexCache.ts);
// a run's progress alone (its step, last seq) stays on the index's timer and is written on close.
// A caller that flushes at every step must not rewrite the whole index, with its fsyncs, each time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nodeFs, type FsLayer } from '../../../src/store';
import { openDiskStore } from '../../../src/store/disk/store';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

/** The fs layer, counting the durable writes of index.json (each a temp file created, then renamed). */
function countingIndexWrites(): { layer: FsLayer; writes: () => number } {
  let writes = 0;
  const layer: FsLayer = {
    ...nodeFs,
    createExclusive: async (p) => {
      if (path.basename(p).startsWith('.index.json')) writes += 1;
      return nodeFs.createExclusive(p);
    },
  };
  return { layer, writes: () => writes };
}

const indexStep = (dir: string, id: string): number => {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')) as {
    body: { runs: { run_id: string; step: number }[] };
  };
  return doc.body.runs.find((r) => r.run_id === id)!.step;
};

describe('store: flush() and the run index', () => {
  const tmp = h.suiteTmp();

  it('a flush after each step writes the index only when what a listing shows changed; close writes the progress', async () => {
    const dir = tmp('aw-flush-index-');
    const counted = countingIndexWrites();
    const s = openDiskStore(dir, { fs: counted.layer });
    const { run, lease } = await s.createRun(h.newRun(), h.owner('w1'));
    await s.append(run.run_id, h.runStarted());
    await s.flush();
    const afterCreate = counted.writes();
    assert.ok(afterCreate >= 1, 'the new run is in the index after a flush');
    let msgs: ChatMessage[] = [];
    for (let k = 1; k <= 5; k++) {
      await s.append(run.run_id, h.stepStarted(h.snapshot(k, msgs)));
      msgs = [...msgs, { role: 'assistant', content: `step ${k}` }];
      await s.append(run.run_id, h.postLlm(h.snapshot(k, msgs)));
      await s.flush();
    }
    assert.equal(counted.writes(), afterCreate, 'progress alone is not written by a flush');
    assert.equal(indexStep(dir, run.run_id), 0);
    await s.setRunState(run.run_id, 'paused_cancelled', null);
    await s.flush();
    assert.equal(counted.writes(), afterCreate + 1, 'a change of state is written by the flush');
    assert.equal(indexStep(dir, run.run_id), 5, 'and with it the progress as it is');
    await s.append(run.run_id, h.stepStarted(h.snapshot(6, msgs)));
    await lease.release();
    await s.close();
    assert.equal(indexStep(dir, run.run_id), 6, 'close writes the progress');
  });
});
