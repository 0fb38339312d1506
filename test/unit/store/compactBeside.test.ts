// A compaction while the run works never holds its writes up: it is written beside them and swapped in
// between two commits, carrying the commits that came meanwhile (disk/besideCompaction.ts). The
// compaction is held at its snapshot write by the fs layer while the run goes on.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { nodeFs, type FsLayer } from '../../../src/store/disk/fsLayer';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';
import { logFiles, step } from './backgroundSupport';

/** The real file system; `before(call, args)` may hold a call until the promise it returns settles. */
function gatedFs(before: (call: string, args: unknown[]) => Promise<void> | void): FsLayer {
  return Object.fromEntries(
    Object.entries(nodeFs).map(([call, fn]) => [
      call,
      async (...args: unknown[]) => {
        await before(call, args);
        return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as unknown as FsLayer;
}

async function reading(s: CheckpointStore, id: string): Promise<string> {
  const records = await s.list(id, { limit: 1000 });
  return h.canonical({ records, effects: await s.listEffects(id), latest: await s.loadSnapshot(id) });
}

/** The folder `copy` opened as after a crash (lock gone): its reading, and what it reported. */
async function readCrashCopy(copy: string, id: string): Promise<{ text: string; reports: CorruptionReport[] }> {
  fs.rmSync(path.join(copy, 'runs', id, 'owner.lock'), { force: true });
  const reports: CorruptionReport[] = [];
  const t = await openDiskStoreReady(copy, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
  const l = await t.acquire(id, h.owner('after crash'));
  const text = await reading(t, id);
  await l.release();
  await t.close();
  return { text, reports };
}

describe('store: a compaction beside the run’s writes', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-beside-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes made while a compaction is held complete before it ends; it then carries them into its new segment', async () => {
    const root = path.join(dir, 'store');
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = true;
    let reached: () => void = () => undefined;
    const atSnapshot = new Promise<void>((resolve) => (reached = resolve));
    let swapCopy: string | null = null;
    const fsl = gatedFs((call, args) => {
      const file = typeof args[0] === 'string' ? path.basename(args[0]) : '';
      if (call === 'createExclusive' && /^\.snapshot\.json\..*\.tmp$/.test(file) && holding) {
        holding = false; // (the first compaction only)
        reached();
        return held;
      }
      // Just before the old segment goes: both segments and the new snapshot are there.
      if (call === 'unlink' && /^segment-\d+\.log$/.test(file) && !swapCopy) {
        swapCopy = path.join(dir, 'at-swap');
        fs.cpSync(root, swapCopy, { recursive: true });
      }
      return undefined;
    });
    const s = await openDiskStoreReady(root, { compactAfterCommits: 8, fs: fsl });
    const { run, lease } = await s.createRun(h.newRun('compacted beside'), h.owner('w'));
    const id = run.run_id;
    const runDir = path.join(root, 'runs', id);
    await s.append(id, h.runStarted());
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    let k = 0;
    let heldAt = 0;
    let started = false;
    void atSnapshot.then(() => (started = true));
    // Steps until the compaction they start is held at its snapshot write, then five more, each with a
    // durable intent (a compaction that held them up would leave this waiting).
    const steps = (async () => {
      while (!started) msgs = await step(s, id, ++k, msgs);
      heldAt = k;
      for (let i = 0; i < 5; i++) msgs = await step(s, id, ++k, msgs);
      await s.flush(); // (what the last step queued, durable too)
    })();
    const stalled = new Promise<string>((resolve) => setTimeout(() => resolve('stalled'), 20_000).unref());
    const first = await Promise.race([steps.then(() => 'steps'), stalled]);
    assert.equal(first, 'steps', `the steps went on while the compaction was held (at step ${k})`);
    assert.deepEqual(logFiles(runDir), ['segment-000000000001.log'], 'nothing replaced yet');
    const live = await reading(s, id);
    const during = path.join(dir, 'during');
    fs.cpSync(root, during, { recursive: true });

    release();
    await s.whenIdle(id);
    const files = logFiles(runDir);
    assert.equal(files.length, 2, `one snapshot and one segment: ${files}`);
    const newFirst = Number(/\d+/.exec(files.find((f) => f.startsWith('segment-'))!)![0]);
    const commits = h.witnessOf(root, id).witness!.commits;
    assert.ok(newFirst > 1 && newFirst < commits, `the new segment (from ${newFirst}) holds commits up to ${commits}`);
    assert.ok((await reading(s, id)) === live, 'the run reads as before the swap');

    // There the old segment is superseded, never read: its commits after the snapshot follow the log
    // before it. Damage in it reports nothing (read, a flipped bit would be reported, even corrected).
    const damaged = path.join(dir, 'at-swap-damaged');
    fs.cpSync(swapCopy!, damaged, { recursive: true });
    const oldSeg = path.join(damaged, 'runs', id, 'segment-000000000001.log');
    const bytes = fs.readFileSync(oldSeg);
    const lastFrameEnd = bytes.lastIndexOf(0x0a);
    bytes[lastFrameEnd - 20]! ^= 0x04;
    fs.writeFileSync(oldSeg, bytes);
    // A crash while it was held, just before the old segment went, and now: each reads like the live run.
    for (const copy of [during, swapCopy!]) {
      const r = await readCrashCopy(copy, id);
      assert.deepEqual(r.reports, [], `${path.basename(copy)}: nothing reported`);
      assert.ok(r.text === live, `${path.basename(copy)}: reads exactly like the live run`);
    }
    const r = await readCrashCopy(damaged, id);
    assert.deepEqual(r.reports, [], 'a superseded segment is not read');
    assert.ok(r.text === live, 'and the run reads from the new one');
    assert.ok(!fs.existsSync(oldSeg), 'its owner retired it');

    msgs = await step(s, id, ++k, msgs);
    await s.flush();
    const after = await reading(s, id);
    const now = path.join(dir, 'now');
    fs.cpSync(root, now, { recursive: true });
    assert.ok((await readCrashCopy(now, id)).text === after, 'a step after the swap went on to the new segment');
    assert.ok(heldAt >= 2 && k === heldAt + 6, `held at step ${heldAt}, ${k} steps`);
    await lease.release();
    await s.close();
  });
});
