// A compaction in a worker thread (disk/snapshotOffThread.ts): the worker reads the run's files as a load
// does while the run's appends go on; what it stages reads back as the run the host's thread holds, and
// when the files are not that run, the host's thread compacts the run from memory instead.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady, type DiskStoreOptions } from '../../../src/store/disk/store';
import { offThreadCounts } from '../../../src/store/disk/snapshotOffThread';
import { parseSegment } from '../../../src/store/disk/segment';
import type { CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import { bundleScript } from '../../support/bundleChild';
import * as h from './helpers';
import { logFiles, reading, step } from './backgroundSupport';

const ID = 'r-same';

/**
 * The same run in `root`, each step's compaction finished before the next. The clock moves by the step,
 * not by the call: a timer that fires in one folder's run and not the other's moves no timestamp.
 */
async function sameRun(root: string, opts: DiskStoreOptions, steps: number): Promise<string> {
  let clock = 1_700_000_000_000;
  const s = await openDiskStoreReady(root, { compactAfterCommits: 8, now: () => clock, ...opts });
  const { lease } = await s.createRun({ ...h.newRun('same'), run_id: ID, thread_id: 't-same' }, h.owner('w'));
  await s.append(ID, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let k = 1; k <= steps; k++) {
    clock += 1000;
    msgs = await step(s, ID, k, msgs);
    await s.whenIdle(ID);
  }
  const live = await reading(s, ID);
  await lease.release();
  await s.close();
  return live;
}

/** The folder opened afresh: what it reads as, and what it reported. */
async function reopened(root: string): Promise<{ read: string; reports: CorruptionReport[] }> {
  const reports: CorruptionReport[] = [];
  const s = await openDiskStoreReady(root, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
  const read = await reading(s, ID);
  await s.close();
  return { read, reports };
}

describe('store: a compaction in a worker thread', function () {
  this.timeout(120_000);
  const tmp = h.suiteTmp();

  it('stages a snapshot that reads back as the run the host’s thread would have compacted', async () => {
    const hereDir = tmp('aw-here-');
    const workerDir = tmp('aw-worker-');
    const here = await sameRun(hereDir, { compactOffThreadFrom: Infinity }, 30);
    const before = offThreadCounts.snapshots;
    const worker = await sameRun(workerDir, { compactOffThreadFrom: 0 }, 30);
    assert.ok(
      offThreadCounts.snapshots - before >= 3,
      `snapshots made in a worker: ${offThreadCounts.snapshots - before}`,
    );
    assert.equal(worker, here, 'the live runs read alike');
    const a = await reopened(hereDir);
    const b = await reopened(workerDir);
    assert.deepEqual([a.reports, b.reports], [[], []]);
    assert.equal(b.read, here, 'reopened, the worker’s folder reads as the run did');
    assert.equal(a.read, here);
    // (The commits after the worker's last snapshot were encoded against the codec it handed back, and
    // a load computes its own from the snapshot: had the two differed, they would not read back alike.)
    assert.ok(
      logFiles(path.join(workerDir, 'runs', ID)).some((n) => n.startsWith('segment-') && !n.endsWith('0001.log')),
      'commits followed a compaction',
    );
  });

  it('leaves the compaction to the host’s thread when the files are not the run it holds', async () => {
    const root = tmp('aw-mismatch-');
    const s = await openDiskStoreReady(root, { compactAfterCommits: 4, compactOffThreadFrom: 0 });
    const { lease } = await s.createRun({ ...h.newRun('changed under it'), run_id: ID }, h.owner('w'));
    await s.append(ID, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    for (let k = 1; k <= 3; k++) msgs = await step(s, ID, k, msgs);
    await s.whenIdle(ID);
    // A commit frame of the live segment overwritten behind the store's back: the worker's run stops
    // short of the one in memory, so its snapshot is not used.
    const runDir = path.join(root, 'runs', ID);
    const file = path.join(
      runDir,
      logFiles(runDir)
        .filter((n) => n.startsWith('segment-'))
        .at(-1)!,
    );
    const bytes = fs.readFileSync(file);
    const last = parseSegment(bytes, { runId: ID }).frames.at(-1)!;
    bytes.fill(0x41, last.start + 20, last.end - 20);
    fs.writeFileSync(file, bytes);
    const before = offThreadCounts.snapshots;
    let k = 4;
    for (; k <= 12 && fs.existsSync(file); k++) {
      msgs = await step(s, ID, k, msgs);
      await s.whenIdle(ID);
    }
    assert.ok(!fs.existsSync(file), 'a compaction replaced the damaged segment');
    assert.equal(offThreadCounts.snapshots, before, 'that snapshot was not the worker’s');
    msgs = await step(s, ID, k, msgs);
    const live = await reading(s, ID);
    await lease.release();
    await s.close();
    const again = await reopened(root);
    assert.deepEqual(again.reports, []);
    assert.equal(again.read, live, 'the run as the host held it, damage and all gone');
  });

  it('runs from the bundles as the extension ships them: the store’s, and the worker’s beside it', async () => {
    const dir = tmp('aw-bundled-');
    const child = await bundleScript(path.join(__dirname, 'offThreadChild.ts'), path.join(dir, 'child.cjs'));
    await bundleScript(
      path.join(__dirname, '../../../src/store/disk/snapshotWorker.ts'),
      path.join(dir, 'snapshotWorker.js'),
    );
    const root = path.join(dir, 'store');
    const out = JSON.parse(execFileSync(process.execPath, [child, root, ID], { encoding: 'utf8' })) as {
      snapshots: number;
      records: number;
    };
    assert.ok(out.snapshots >= 2, `snapshots the bundled worker made: ${out.snapshots}`);
    const again = await reopened(root);
    assert.deepEqual(again.reports, []);
    assert.equal((JSON.parse(again.read) as { records: unknown[] }).records.length, out.records);
  });
});
