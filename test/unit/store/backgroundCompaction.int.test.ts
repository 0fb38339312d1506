// Compaction while a run works, crashed at every point: the folder as a SIGKILL before each mutating
// file call leaves it, while a background compaction runs and writes queue behind it, reopens with
// nothing acknowledged lost and nothing reported (backgroundCompaction.test.ts: the rest).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';
import { watchedFs } from './faultyFs';
import { logFiles, step } from './backgroundSupport';

/**
 * The folder as it is now. A compaction's removal of old segments runs beside the run's writes, so a
 * file listed may be gone before it is copied: the copy is then taken again (the state after it).
 */
function copyState(from: string, to: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.cpSync(from, to, { recursive: true });
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT' || attempt >= 5) throw err;
      fs.rmSync(to, { recursive: true, force: true });
    }
  }
}

describe('store: compaction while the run works', function () {
  this.timeout(300_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-bgcompact-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

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
        copyState(root, path.join(states, String(ackedAt.length)));
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
