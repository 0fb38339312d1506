// A run whose log files were deleted (issue 23): the error or the report names the missing file,
// never "Run … does not exist" for a run whose index entry says commits were acknowledged (the
// witness lived in the deleted segment).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { AgentCheckpointCorruptionError } from '../../../src/store/api/errors';
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

  it("deleting an uncompacted run's only segment says that file is missing", async () => {
    const id = await makeRun(false);
    assert.deepEqual(segments(id), ['segment-000000000001.log']);
    fs.rmSync(path.join(runDir(id), 'segment-000000000001.log'));
    const s = await openDiskStoreReady(dir);
    for (const read of [() => s.latest(id), () => s.acquire(id, h.owner('r'))]) {
      const err = await h.rejects(read(), AgentCheckpointCorruptionError);
      assert.equal(err.file, `runs/${id}/segment-000000000001.log`);
      assert.match(err.message, /segment-000000000001\.log is missing/);
      assert.match(err.message, /the run index says \d+ commit/);
      assert.doesNotMatch(err.message, /does not exist/);
    }
    await s.close();
  });

  it('deleting both files of a compacted run says which is missing', async () => {
    const id = await makeRun(true);
    for (const n of fs.readdirSync(runDir(id)))
      if (n === 'snapshot.json' || n.startsWith('segment-')) fs.rmSync(path.join(runDir(id), n));
    const s = await openDiskStoreReady(dir);
    const err = await h.rejects(s.latest(id), AgentCheckpointCorruptionError);
    assert.match(err.message, /is missing \(and no snapshot\.json holds its commits\)/);
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
