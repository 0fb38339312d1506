// A write-behind commit (a command's process record: written, not synced) goes out with whatever was
// queued before it, including writes handed over for the next barrier. Those are then written but not
// durable: the next makeDurable owes them a barrier though nothing is queued — an fdatasync of what was
// written, not a commit of its own — and the process record costs no barrier of its own.
import assert from 'node:assert/strict';
import { openDiskStore } from '../../../src/store';
import { barrierFs } from '../loop/support';
import * as h from './helpers';

describe('disk store: write-behind commits and the barrier they owe', () => {
  it('a result handed over for the next barrier rides unsynced on a process record; makeDurable syncs it, once', async () => {
    const { fs, barriers } = barrierFs();
    const dir = h.tmpDir();
    const s = openDiskStore(dir, { fs, deferMs: 60_000 });
    const { run, lease } = await s.createRun(h.newRun('write-behind'), h.owner('t'));
    const id = run.run_id;
    await s.recordIntent(id, h.commandIntent('c1'), { durability: 'next-barrier' });
    await s.recordIntent(id, h.commandIntent('c2'), { durability: 'next-barrier' });
    await s.makeDurable(id);
    const n = barriers.length;
    assert.deepEqual(barriers.at(-1), ['intent', 'intent'], 'both intents in one barrier');

    await s.recordResult(
      id,
      'c1',
      { output: 'ok', output_hash: 'o', is_error: false, blob: null },
      {
        durability: 'next-barrier',
      },
    );
    await s.recordProcess(id, 'c2', { pid: 4242, hostname: 'h', started_ms: 1 });
    assert.equal(barriers.length, n, 'the process record and the result before it are written without a barrier');

    await s.makeDurable(id);
    assert.equal(barriers.length, n + 1, 'makeDurable makes the barrier the result was owed');
    assert.deepEqual(barriers.at(-1), ['result', 'process'], 'a sync of what was written: no commit of its own');
    await s.makeDurable(id);
    assert.equal(barriers.length, n + 1, 'nothing owed any more: no barrier');

    await lease.release();
    await s.close();
    const other = openDiskStore(dir);
    const effects = await other.listEffects(id);
    assert.equal(effects.find((e) => e.tool_call_id === 'c1')?.result?.output, 'ok');
    assert.equal(effects.find((e) => e.tool_call_id === 'c2')?.process?.pid, 4242);
    await other.close();
  });

  it("a result handed over as 'written' is in the file before the call returns, and owes the next barrier", async () => {
    const { fs, barriers } = barrierFs();
    const dir = h.tmpDir();
    const s = openDiskStore(dir, { fs, deferMs: 60_000 });
    const { run, lease } = await s.createRun(h.newRun('written'), h.owner('t'));
    const id = run.run_id;
    await s.recordIntent(id, h.commandIntent('c1'), { durability: 'next-barrier' });
    await s.makeDurable(id, { toolsNext: true }); // (no upkeep started: its room's sync would be a barrier too)
    const n = barriers.length;
    const result = { output: 'ok', output_hash: 'o', is_error: false, blob: null };
    await s.recordResult(id, 'c1', result, { durability: 'written' });
    assert.equal(barriers.length, n, 'written without a barrier of its own');
    // Another window reads the run's file as it is now (a crashed window's successor would).
    const reader = openDiskStore(dir);
    assert.equal((await reader.listEffects(id))[0]!.result?.output, 'ok', 'in the file already');
    await reader.close();

    await s.makeDurable(id, { toolsNext: true });
    assert.equal(barriers.length, n + 1, 'the next makeDurable makes the barrier it was owed');
    assert.deepEqual(barriers.at(-1), ['result']);
    await assert.rejects(
      async () => s.recordIntent(id, h.commandIntent('c2'), { durability: 'written' }),
      /durability must be/,
    );
    await lease.release();
    await s.close();
  });
});
