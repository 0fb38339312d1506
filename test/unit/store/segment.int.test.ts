// The segment log torn by a SIGKILL mid-append, at every byte offset of a record: the torn tail is cut
// off and noted, never reported as corruption, and the log goes on (segment.test.ts: the rest).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseSegment } from '../../../src/store/disk/segment';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import * as h from './helpers';
import { segmentIn, stepWithEffect } from './segmentSupport';

describe('store: the segment log', function () {
  this.timeout(300_000);
  const tmp = h.suiteTmp();

  it('a SIGKILL mid-append, at every byte offset of the record: the torn tail is cut off and noted, never reported as corruption', async () => {
    const dir = tmp('aw-torn-');
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('torn'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await stepWithEffect(s, id, 1, [{ role: 'user', content: 'go' }]);
    const runDir = path.join(dir, 'runs', id);
    const seqBefore = (await s.latest(id)).seq;
    await s.append(id, h.terminal(1)); // the record that will be torn
    await lease.release();
    await s.close();
    const segment = fs.readFileSync(segmentIn(runDir));
    const parsed = parseSegment(segment);
    const last = parsed.frames.at(-1)!;
    // The witness as it was before the last append: it never counted the torn commit.
    const now = h.witnessOf(dir, id).witness!;
    const witnessBefore = { ...now, commits: now.commits - 1 };
    const pristine = tmp('aw-torn-pristine-');
    fs.cpSync(dir, pristine, { recursive: true });
    let cases = 0;
    for (let cut = last.start + 1; cut < last.end; cut++) {
      const c = tmp(`aw-torn-${cut}-`);
      fs.cpSync(pristine, c, { recursive: true });
      const segFile = segmentIn(path.join(c, 'runs', id));
      fs.writeFileSync(segFile, segment.subarray(0, cut)); // the append reached the file up to `cut`
      h.setWitness(c, id, witnessBefore); // and was never acknowledged
      fs.rmSync(path.join(c, 'index.json'));
      const o = await h.openCollecting(c);
      const l = await o.s.acquire(id, h.owner('after crash'));
      assert.deepEqual(o.reports, [], `cut at ${cut}: not corruption`);
      assert.ok(
        o.recovered.some((r) => /torn frame.*never acknowledged/.test(r.message)),
        `cut at ${cut}: noted (${o.recovered.map((r) => r.message)})`,
      );
      assert.equal((await o.s.latest(id)).seq, seqBefore, `cut at ${cut}: the last acknowledged checkpoint`);
      assert.equal(fs.statSync(segFile).size, last.start, `cut at ${cut}: the torn bytes are cut off`);
      assert.equal((await o.s.append(id, h.terminal(1))).seq, seqBefore + 1, 'the log goes on');
      await l.release();
      await o.s.close();
      const again = await h.openCollecting(c);
      assert.equal((await again.s.latest(id)).phase, 'run_terminal');
      assert.deepEqual(
        [...again.reports, ...again.recovered.filter((r) => !r.file.endsWith('index.json'))],
        [],
        'clean after the repair',
      );
      await again.s.close();
      fs.rmSync(c, { recursive: true, force: true });
      cases++;
    }
    assert.equal(cases, last.end - last.start - 1);
    console.log(
      `      torn tail: ${cases} cut offsets of a ${last.end - last.start}-byte record, each cut off and noted`,
    );
  });
});
