// A long run's compaction does not hold the host's thread: with the log past the worker's threshold,
// the snapshot is encoded and checked in a worker thread while the run's steps go on (the stall
// sampler's bound is the one every hostile input is held to: 200 ms of the thread's CPU at a time).
import assert from 'node:assert/strict';
import path from 'node:path';
import { openDiskStoreReady, type DiskStoreOptions } from '../../../src/store/disk/store';
import { offThreadCounts } from '../../../src/store/disk/snapshotOffThread';
import type { ChatMessage } from '../../../src/store/api/schema';
import { StallSampler } from '../../support/stallSampler';
import * as h from './helpers';
import { logFiles } from './backgroundSupport';

/** Text that does not compress to nothing: words of a fixed pseudo-random sequence. */
function text(seed: number, chars: number): string {
  let x = seed;
  const words: string[] = [];
  let n = 0;
  while (n < chars) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const w = (x % 100_000).toString(36);
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ');
}

/** `steps` steps of a run whose every tool output is `chars` long; the longest stall of the host's thread. */
async function longRun(root: string, opts: DiskStoreOptions, steps: number, chars: number) {
  const s = await openDiskStoreReady(root, { compactAfterCommits: 16, ...opts });
  const { run, lease } = await s.createRun(h.newRun('long'), h.owner('w'));
  const id = run.run_id;
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  const { report } = await StallSampler.during(async () => {
    for (let k = 1; k <= steps; k++) {
      await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
      await s.makeDurable(id);
      const a = h.assistantWithCall(k);
      msgs = [...msgs, a];
      await s.append(id, h.postLlm(h.snapshot(k, msgs, { pending_llm_response: h.pendingResponse(a, k) })));
      await s.recordIntent(id, {
        tool_call_id: `call_${k}`,
        step: k,
        tool_name: 'w',
        input_hash: `i${k}`,
        side_effecting: true,
      });
      const out = text(k, chars);
      await s.recordResult(id, `call_${k}`, { output: out, output_hash: `o${k}`, is_error: false, blob: null });
      await s.append(id, h.postTools(k));
      msgs = [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
    }
    await s.whenIdle(id);
  });
  const records = (await s.list(id, { limit: 100_000 })).length;
  await lease.release();
  await s.close();
  return { report, records, files: logFiles(path.join(root, 'runs', id)) };
}

describe('store: a long run’s compaction and the host’s thread', function () {
  this.timeout(300_000);
  const tmp = h.suiteTmp();

  it('compacts a log of tens of MB in a worker thread: no step’s thread held past the bound', async () => {
    const before = offThreadCounts.snapshots;
    // (In the host's thread, the same run's compactions held it past the bound, and the run took twice as long.)
    const r = await longRun(tmp('aw-long-'), {}, 100, 160 * 1024);
    assert.ok(
      offThreadCounts.snapshots - before >= 2,
      `compactions in a worker: ${offThreadCounts.snapshots - before}`,
    );
    assert.deepEqual(r.files.length, 2, `one snapshot and one segment: ${r.files}`);
    assert.equal(r.records, 1 + 100 * 3, 'every checkpoint written');
    assert.ok(r.report.maxStallMs <= 200, `the host's thread was held for ${r.report.maxStallMs.toFixed(0)} ms`);
  });
});
