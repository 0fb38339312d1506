// A run whose log files were deleted: the report names the missing file, never "Run … does not exist"
// and never a new run — the witness file beside the log (or, without it, the run index) says how much
// had been acknowledged.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { CheckpointNotFoundError } from '../../../src/store/api/errors';
import type { CorruptionReport } from '../../../src/store/api/types';
import * as h from './helpers';

describe('store: a deleted log names the missing file', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-missing-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function makeRun(compacted: boolean, after = 0): Promise<string> {
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('victim'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await s.append(id, h.terminal(1));
    if (compacted) await s.compact(id);
    for (let i = 0; i < after; i++) await s.append(id, h.preTools(2 + i));
    await lease.release();
    await s.close();
    return id;
  }

  const runDir = (id: string) => path.join(dir, 'runs', id);
  const segments = (id: string) => fs.readdirSync(runDir(id)).filter((n) => n.startsWith('segment-'));

  /** Opens the store, takes the run as its owner, and returns the report naming `file` (and the store). */
  async function reopen(id: string, file: string) {
    const reports: CorruptionReport[] = [];
    const s = await openDiskStoreReady(dir, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    await (await s.acquire(id, h.owner('r'))).release();
    const r = reports.find((x) => x.file === `runs/${id}/${file}`);
    assert.ok(r, `${file} is named: ${JSON.stringify(reports.map((x) => [x.file, x.reason]))}`);
    assert.equal(r.data_lost, true);
    return { s, r };
  }

  it("deleting an uncompacted run's only segment is reported as the loss it is: that file named, never a new run", async () => {
    const id = await makeRun(false);
    assert.deepEqual(segments(id), ['segment-000000000001.log']);
    fs.rmSync(path.join(runDir(id), 'segment-000000000001.log'));
    const { s, r } = await reopen(id, 'segment-000000000001.log');
    assert.match(r.reason, /segment-000000000001\.log is missing .*the run.s witness says 2 commits/);
    const run = (await s.getRun(id))!;
    assert.equal(run.damage?.state_before, 'completed', 'the witness beside the segment says how far it got');
    assert.equal(run.state, 'completed', 'a finished run stays finished');
    await h.rejects(s.latest(id), CheckpointNotFoundError, /no usable checkpoint/);
    await s.close();
  });

  it('deleting the segment and the witness beside it: the run index is the witness', async () => {
    const id = await makeRun(false);
    fs.rmSync(path.join(runDir(id), 'segment-000000000001.log'));
    fs.rmSync(path.join(runDir(id), 'witness'));
    const { s, r } = await reopen(id, 'segment-000000000001.log');
    assert.match(r.reason, /is missing .*the run index says 2 commits/);
    assert.doesNotMatch(r.reason, /does not exist/);
    await s.close();
  });

  it('deleting both log files of a compacted run says which is missing', async () => {
    const id = await makeRun(true);
    for (const n of fs.readdirSync(runDir(id)))
      if (n === 'snapshot.json' || n.startsWith('segment-')) fs.rmSync(path.join(runDir(id), n));
    const { s, r } = await reopen(id, 'segment-000000000001.log');
    assert.match(r.reason, /is missing \(and no snapshot\.json holds its commits\)/);
    await s.close();
  });

  it("deleting a compacted run's segment with commits after the snapshot reports that segment", async () => {
    const id = await makeRun(true, 2);
    const [seg] = segments(id);
    fs.rmSync(path.join(runDir(id), seg!));
    const reports: CorruptionReport[] = [];
    const s = await openDiskStoreReady(dir, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    const l = await s.acquire(id, h.owner('r'));
    assert.equal((await s.latest(id)).phase, 'run_terminal', 'the snapshot still reads');
    assert.ok(
      reports.some((r) => r.file === `runs/${id}/${seg}` && r.data_lost),
      `the lost segment is named: ${JSON.stringify(reports.map((r) => [r.file, r.reason]))}`,
    );
    await l.release();
    await s.close();
  });
});
