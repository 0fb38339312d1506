// Compaction while a run works (docs/design.md, "Durable barriers per step"; issue 23): the runner's
// barrier before a request starts a compaction in the background once the log has grown by half of
// what its snapshot covers, so a crash leaves a recent snapshot and a short segment tail. Writes handed
// over while it runs are neither lost nor reordered, and the folder as a crash leaves it reads
// exactly like the live run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';
import { watchedFs } from './faultyFs';
import { logFiles, reading, step } from './backgroundSupport';

describe('store: compaction while the run works', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-bgcompact-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('compacts in the background at the barrier before a request; a crash copy reads like the live run and keeps a short tail', async () => {
    const root = path.join(dir, 'store');
    const s = await openDiskStoreReady(root, { compactAfterCommits: 8 });
    const { run, lease } = await s.createRun(h.newRun('long run'), h.owner('w'));
    const id = run.run_id;
    const runDir = path.join(root, 'runs', id);
    await s.append(id, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    const firstSegments: number[] = [];
    for (let k = 1; k <= 40; k++) {
      msgs = await step(s, id, k, msgs);
      const seg = logFiles(runDir).find((n) => n.startsWith('segment-'))!;
      firstSegments.push(Number(/\d+/.exec(seg)![0]));
    }
    await s.flush(); // writes what is queued
    await s.whenIdle(id); // and a compaction still running is done
    const compactions = new Set(firstSegments.filter((n) => n > 1)).size;
    assert.ok(compactions >= 2, `compacted while held, more than once: segment starts ${[...new Set(firstSegments)]}`);
    const files = logFiles(runDir);
    assert.equal(files.length, 2, `one snapshot and one segment: ${files}`);
    const tailFrom = Number(/\d+/.exec(files[0]!)![0]);
    const total = (await s.list(id, { limit: 1000 })).length;
    assert.equal(total, 161, `checkpoints written: ${total}`);
    // The segment after the snapshot holds at most about a third of the commits (plus one step's).
    const commitsNow = h.witnessOf(root, id).witness?.commits ?? NaN;
    assert.ok(
      Number.isFinite(commitsNow) && commitsNow - tailFrom + 1 <= commitsNow / 3 + 8,
      `tail ${commitsNow - tailFrom + 1} of ${commitsNow} commits`,
    );
    const live = await reading(s, id);

    const crashed = path.join(dir, 'crashed');
    fs.cpSync(root, crashed, { recursive: true });
    fs.rmSync(path.join(crashed, 'runs', id, 'owner.lock'));
    const t = await openDiskStoreReady(crashed);
    const l = await t.acquire(id, h.owner('after crash'));
    assert.equal(await reading(t, id), live, 'the crash copy reads exactly like the live run');
    await l.release();
    await t.close();
    await lease.release();
    await s.close();
  });

  it('the barrier before tool calls starts no compaction (their writes would wait for it); the one before a request does', async () => {
    const root = path.join(dir, 'store');
    const s = await openDiskStoreReady(root, { compactAfterCommits: 8 });
    const { run, lease } = await s.createRun(h.newRun('tools next'), h.owner('w'));
    const id = run.run_id;
    const runDir = path.join(root, 'runs', id);
    await s.append(id, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    for (let k = 1; k <= 30; k++) msgs = await step(s, id, k, msgs, undefined, { toolsNext: true });
    await s.flush();
    assert.deepEqual(logFiles(runDir), ['segment-000000000001.log'], 'never compacted at a barrier before tools');
    await s.append(id, h.stepStarted(h.snapshot(31, msgs)));
    await s.makeDurable(id);
    await s.whenIdle(id); // waits for the compaction it started
    assert.ok(
      logFiles(runDir).includes('snapshot.json'),
      `compacted at the barrier before a request: ${logFiles(runDir)}`,
    );
    // Nothing running: whenIdle writes nothing (what is queued stays queued for the next barrier).
    const pre = await s.append(id, h.preLlm(31, msgs.length));
    await s.whenIdle(id);
    const other = await openDiskStoreReady(root);
    assert.ok((await other.latest(id)).seq < pre.seq, 'whenIdle made nothing queued durable');
    await other.close();
    await lease.release();
    await s.close();
  });

  it('the barrier returns before the compaction it starts begins (the request goes out first); whenIdle waits for it', async () => {
    const root = path.join(dir, 'store');
    // Every call the store makes on the file system, and whether the caller had the barrier back by then.
    const calls: { call: string; afterBarrier: boolean }[] = [];
    let returned = false;
    const fsl = watchedFs((name, args) => {
      const what = typeof args[0] === 'string' ? path.basename(args[0]) : 'fd';
      calls.push({ call: `${name} ${what}`, afterBarrier: returned });
    });
    // (no timer of the store's fires meanwhile: the index, the lock's heartbeat, the backstop)
    const hour = 3_600_000;
    const s = await openDiskStoreReady(root, {
      compactAfterCommits: 8,
      fs: fsl,
      indexStructuralMs: hour,
      indexProgressMs: hour,
      heartbeatMs: hour,
      deferMs: hour,
    });
    const { run, lease } = await s.createRun(h.newRun('upkeep after the caller'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    for (let k = 1; k <= 12; k++) msgs = await step(s, id, k, msgs, undefined, { toolsNext: true });
    await s.append(id, h.stepStarted(h.snapshot(13, msgs)));
    calls.length = 0;
    await s.makeDurable(id).then(() => (returned = true));
    await s.whenIdle(id);
    const before = calls.filter((c) => !c.afterBarrier).map((c) => c.call);
    // The barrier's own commit: the owner lock checked, the frame written and synced, the witness slot.
    assert.deepEqual(
      before,
      ['stat owner.lock', 'pwrite fd', 'fdatasync fd', 'pwrite fd'],
      'before the caller had the barrier back, only its commit was written',
    );
    const after = calls.filter((c) => c.afterBarrier).map((c) => c.call);
    assert.ok(
      after.some((c) => c.includes('snapshot')),
      `the compaction it started ran after it: ${after.join(', ')}`,
    );
    assert.ok(fs.readdirSync(path.join(root, 'runs', id)).includes('snapshot.json'), 'and whenIdle waited for it');
    await lease.release();
    await s.close();
  });
});
