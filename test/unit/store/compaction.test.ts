// compact(): a crash at any point leaves a readable run that reads exactly as before. The fs layer
// copies the whole store folder before every mutating call of the compaction (= the state a crash
// right then would leave), and each copy is opened and read back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { FsLayer } from '../../../src/store/disk/fsLayer';
import { watchedFs } from './faultyFs';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import { canonical } from './helpers';
import * as h from './helpers';

const MUTATING = new Set<keyof FsLayer>([
  'createExclusive',
  'openForUpdate',
  'write',
  'pwrite',
  'fsync',
  'fdatasync',
  'truncate',
  'close',
  'rename',
  'link',
  'unlink',
  'rmrf',
  'mkdir',
  'utimes',
]);

/** The run's log files: snapshot.json and its segment(s). */
const logFiles = (runDir: string) =>
  fs
    .readdirSync(runDir)
    .filter((n) => n === 'snapshot.json' || n.startsWith('segment-'))
    .sort();

/** Before each mutating call (while armed), copies `root` to states/<n>. */
function crashPoints(root: string, states: string): { fs: FsLayer; arm(on: boolean): void; count(): number } {
  let armed = false;
  let n = 0;
  const wrapped = watchedFs((call) => {
    if (armed && MUTATING.has(call)) fs.cpSync(root, path.join(states, String(n++)), { recursive: true });
  });
  return { fs: wrapped, arm: (on) => (armed = on), count: () => n };
}

async function reading(s: CheckpointStore, id: string): Promise<string> {
  const records = await s.list(id, { limit: 1000 });
  const snaps = [];
  for (const r of records) if (r.snapshot) snaps.push(await s.loadSnapshot(id, r.seq));
  return canonical({
    records,
    snaps,
    approvals: await s.listApprovals(id),
    effects: await s.listEffects(id),
    summary: await s.getRun(id),
  });
}

describe('store: compaction is crash-safe at every point', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-compact-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function buildRun(
    s: CheckpointStore,
    id: string,
    from: number,
    to: number,
    msgs: ChatMessage[],
  ): Promise<ChatMessage[]> {
    for (let k = from; k <= to; k++) {
      await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
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
      const out = `output of step ${k} `.repeat(10);
      await s.recordResult(id, `call_${k}`, { output: out, output_hash: `o${k}`, is_error: false, blob: null });
      msgs = [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
      if (k === from + 1) msgs = msgs.slice(0, 2); // a rewind in the middle of the history
    }
    await s.requestApproval(id, {
      tool_call_id: 'ask',
      step: to,
      tool_name: 'w',
      category: 'write',
      arguments: {},
      input_hash: 'x',
      uncertain: false,
      reason: 'r',
    });
    return msgs;
  }

  it('every intermediate state of two compactions reads exactly like the run before', async () => {
    const states = path.join(dir, 'states');
    const root = path.join(dir, 'store');
    const cp = crashPoints(root, states);
    const s = await openDiskStoreReady(root, { fs: cp.fs });
    const { run, lease } = await s.createRun(h.newRun('compact me'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    const msgs = await buildRun(s, id, 1, 4, [{ role: 'user', content: 'go' }]);
    await s.flush();
    const runDir = path.join(root, 'runs', id);
    const before1 = await reading(s, id);
    cp.arm(true);
    await s.compact(id);
    cp.arm(false);
    const first = cp.count();
    const after1 = logFiles(runDir);
    assert.equal(after1.length, 2, `${after1}`);
    assert.match(after1[0]!, /^segment-\d{12}\.log$/, 'a fresh segment for what comes next');
    assert.equal(after1[1], 'snapshot.json');
    assert.equal(await reading(s, id), before1);
    await buildRun(s, id, 5, 6, msgs);
    await s.flush();
    const before2 = await reading(s, id);
    cp.arm(true);
    await s.compact(id);
    cp.arm(false);
    assert.equal(logFiles(runDir).length, 2, 'one snapshot and one segment after compaction');
    await lease.release();
    await s.close();
    assert.ok(first >= 6 && cp.count() > first, `crash points captured: ${first} + ${cp.count() - first}`);
    console.log(
      `      crash points checked: ${cp.count()} (${first} in the first compaction, ${cp.count() - first} in the second)`,
    );

    for (let i = 0; i < cp.count(); i++) {
      const state = path.join(states, String(i));
      fs.rmSync(path.join(state, 'runs', id, 'owner.lock')); // the crashed owner is gone (its pid here is still ours)
      const reports: CorruptionReport[] = [];
      const t = await openDiskStoreReady(state, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
      const l = await t.acquire(id, h.owner('after crash'));
      const got = await reading(t, id);
      const want = i < first ? before1 : before2;
      if (got !== want) {
        const a = JSON.parse(got);
        const b = JSON.parse(want);
        const diff = Object.keys(b).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
        assert.fail(
          `crash point ${i}: ${diff.map((k) => `${k}: ${JSON.stringify(a[k]).slice(0, 300)} vs ${JSON.stringify(b[k]).slice(0, 300)}`).join('; ')}`,
        );
      }
      assert.deepEqual(reports, [], `crash point ${i}: nothing reported`);
      await t.append(id, h.preTools(99));
      await l.release();
      await t.close();
      const names = logFiles(path.join(state, 'runs', id));
      assert.ok(
        names.filter((n) => n.startsWith('segment-')).length <= 2,
        `crash point ${i}: no more than the segment before and after the compaction (${names})`,
      );
      const again = await openDiskStoreReady(state);
      await (await again.acquire(id, h.owner('again'))).release();
      await again.close();
      assert.ok(
        logFiles(path.join(state, 'runs', id)).filter((n) => n.startsWith('segment-')).length <= 2,
        `crash point ${i}: leftovers are retired`,
      );
    }
  });

  it('a damaged snapshot falls back to the segment while it still exists', async () => {
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun(), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await buildRun(s, id, 1, 3, [{ role: 'user', content: 'go' }]);
    await s.flush();
    const before = await reading(s, id);
    const runDir = path.join(dir, 'runs', id);
    const segments = logFiles(runDir).map((n) => [n, fs.readFileSync(path.join(runDir, n))] as const);
    await s.compact(id);
    await lease.release();
    await s.close();
    // the state of a crash right after the snapshot was published, with the snapshot then damaged
    for (const n of logFiles(runDir)) if (n !== 'snapshot.json') fs.rmSync(path.join(runDir, n));
    for (const [n, b] of segments) fs.writeFileSync(path.join(runDir, n), b);
    fs.writeFileSync(
      path.join(runDir, 'snapshot.json'),
      fs.readFileSync(path.join(runDir, 'snapshot.json')).subarray(0, 100),
    );
    const reports: CorruptionReport[] = [];
    const t = await openDiskStoreReady(dir, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    const l = await t.acquire(id, h.owner('w'));
    assert.equal(await reading(t, id), before);
    assert.equal(reports.length, 1);
    assert.equal(reports[0]!.file, `runs/${id}/snapshot.json`);
    assert.equal(reports[0]!.lost_seqs, null);
    assert.equal(reports[0]!.data_lost, false);
    assert.match(reports[0]!.lost, /nothing/);
    assert.equal(reports[0]!.quarantined.length, 1);
    await l.release();
    await t.close();
  });
});

describe('store: compaction when a run is let go', () => {
  it('compacts on release once the log has grown as much as its compacted part, and not before', async () => {
    const dir = h.tmpDir('aw-autocompact-');
    try {
      const s = await openDiskStoreReady(dir, { compactAfterCommits: 4 });
      const { run, lease } = await s.createRun(h.newRun(), h.owner('w'));
      const id = run.run_id;
      const files = () => logFiles(path.join(dir, 'runs', id));
      for (let i = 0; i < 6; i++) await s.append(id, i === 0 ? h.runStarted() : h.terminal(i));
      assert.deepEqual(files(), ['segment-000000000001.log']);
      await lease.release();
      assert.deepEqual(
        files(),
        ['segment-000000000007.log', 'snapshot.json'],
        'compacted: commits 1–6 in the snapshot',
      );
      let l = await s.acquire(id, h.owner('w'));
      for (let i = 0; i < 4; i++) await s.append(id, h.terminal(7 + i));
      await l.release();
      assert.deepEqual(
        files(),
        ['segment-000000000007.log', 'snapshot.json'],
        '4 new commits < the 6 compacted: not yet',
      );
      l = await s.acquire(id, h.owner('w'));
      for (let i = 0; i < 2; i++) await s.append(id, h.terminal(11 + i));
      await l.release();
      assert.deepEqual(files(), ['segment-000000000013.log', 'snapshot.json']);
      assert.equal((await s.latest(id)).seq, 12);
      await s.close();
      const t = await openDiskStoreReady(dir);
      assert.deepEqual(
        (await t.list(id, { limit: 100 })).map((r) => r.seq),
        [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
      );
      await t.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
