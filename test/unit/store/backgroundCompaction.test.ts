// Compaction while a run works (docs/design.md, "Durable barriers per step"; issue 23): the runner's
// barrier before a request starts a compaction in the background once the log has grown by half of
// what its snapshot covers, so a crash leaves a recent snapshot and a short segment tail. Writes handed
// over while it runs are neither lost nor reordered, and the folder as a crash leaves it reads
// exactly like the live run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';
import { watchedFs } from './faultyFs';

const logFiles = (runDir: string) =>
  fs
    .readdirSync(runDir)
    .filter((n) => n === 'snapshot.json' || n.startsWith('segment-'))
    .sort();

/** One step as the runner writes it: start, barrier, response + intent together, result with the next start. */
async function step(
  s: CheckpointStore,
  id: string,
  k: number,
  msgs: ChatMessage[],
  intentAcked = () => {},
  barrier: { toolsNext?: boolean } = {},
): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
  await s.makeDurable(id, barrier);
  // Handed over at once after the barrier, while a background compaction may be running.
  await s.append(id, h.preLlm(k, msgs.length));
  const a = h.assistantWithCall(k);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(k, msgs, { pending_llm_response: h.pendingResponse(a, k) })), {
    durability: 'next-barrier',
  });
  await s.recordIntent(id, {
    tool_call_id: `call_${k}`,
    step: k,
    tool_name: 'w',
    input_hash: `i${k}`,
    side_effecting: true,
  });
  intentAcked();
  const out = `output of step ${k} `.repeat(20);
  await s.recordResult(
    id,
    `call_${k}`,
    { output: out, output_hash: `o${k}`, is_error: false, blob: null },
    { durability: 'next-barrier' },
  );
  await s.append(id, h.postTools(k));
  return [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
}

async function reading(s: CheckpointStore, id: string): Promise<string> {
  const records = await s.list(id, { limit: 1000 });
  return h.canonical({ records, effects: await s.listEffects(id), latest: await s.loadSnapshot(id) });
}

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
    await s.flush(); // waits for a compaction still running, writes what is queued
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

  it('a crash at any point while it compacts in the background, writes queued behind it, loses nothing acknowledged', async () => {
    const root = path.join(dir, 'store');
    const states = path.join(dir, 'states');
    let armed = false;
    let intents = 0;
    const ackedAt: number[] = [];
    // Before each mutating call while armed: the folder as a SIGKILL right then would leave it.
    const mutating = new Set(['createExclusive', 'openForUpdate', 'write', 'pwrite', 'fsync', 'fdatasync', 'truncate']);
    const fsl = watchedFs((name) => {
      if (armed && (mutating.has(name) || ['rename', 'link', 'unlink', 'rmrf'].includes(name))) {
        fs.cpSync(root, path.join(states, String(ackedAt.length)), { recursive: true });
        ackedAt.push(intents);
      }
    });
    const s = await openDiskStoreReady(root, { compactAfterCommits: 8, fs: fsl });
    const { run, lease } = await s.createRun(h.newRun('killed while compacting'), h.owner('w'));
    const id = run.run_id;
    const runDir = path.join(root, 'runs', id);
    await s.append(id, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    for (let k = 1; k <= 12; k++) msgs = await step(s, id, k, msgs, () => intents++);
    const segBefore = logFiles(runDir)[0];
    armed = true;
    for (let k = 13; k <= 24; k++) msgs = await step(s, id, k, msgs, () => intents++);
    armed = false;
    assert.notEqual(logFiles(runDir)[0], segBefore, 'a compaction ran while armed');
    assert.ok(
      fs
        .readdirSync(states)
        .some((n) => fs.readdirSync(path.join(states, n, 'runs', id)).some((f) => f.includes('.snapshot.json'))),
      'some crash states fall inside the snapshot write',
    );
    await lease.release();
    await s.close();

    for (let i = 0; i < ackedAt.length; i++) {
      const state = path.join(states, String(i));
      fs.rmSync(path.join(state, 'runs', id, 'owner.lock'), { force: true });
      const reports: CorruptionReport[] = [];
      const t = await openDiskStoreReady(state, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
      const l = await t.acquire(id, h.owner('after crash'));
      assert.deepEqual(reports, [], `crash point ${i}: nothing reported`);
      const effects = await t.listEffects(id);
      assert.ok(
        effects.length >= ackedAt[i]!,
        `crash point ${i}: ${effects.length} intents, ${ackedAt[i]} acknowledged`,
      );
      const snap = await t.loadSnapshot(id);
      assert.equal(snap.snapshot.messages.length, snap.record.snapshot!.message_count, `crash point ${i}: whole lists`);
      await l.release();
      await t.close();
    }
    console.log(`      crash points while compacting in the background: ${ackedAt.length}`);
  });
});
