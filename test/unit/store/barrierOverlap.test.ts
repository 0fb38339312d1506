// While a barrier's fdatasync is in flight, the store builds what it writes after the commit (the
// tail witness's slot) instead of waiting: writer.ts prepare, runLog.ts prepareWitness. What it
// writes must still come after the barrier and say exactly the run after the commit — never more
// than the log held, and never a stale run; the index (built when read: IndexCache.follow) shows the
// run after it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { nodeFs, openDiskStore, type FsLayer } from '../../../src/store';
import { readRunWitness } from '../../../src/store/disk/load';
import * as h from './helpers';

/** An fs layer whose next fdatasync, once armed, holds (after syncing) until released. */
function heldSync(): { fs: FsLayer; arm(): Promise<() => void> } {
  let armed: ((release: () => void) => void) | null = null;
  const fs: FsLayer = {
    ...nodeFs,
    async fdatasync(fd) {
      await nodeFs.fdatasync(fd);
      const held = armed;
      if (!held) return;
      armed = null;
      await new Promise<void>((release) => held(release));
    },
  };
  return { fs, arm: () => new Promise((resolve) => (armed = resolve)) };
}

describe('disk store: what a barrier records is built while it syncs', () => {
  it('the witness is written after the barrier and names the commit it follows; the index shows the run after it', async () => {
    const { fs, arm } = heldSync();
    const dir = h.tmpDir();
    const s = openDiskStore(dir, { fs, deferMs: 60_000 });
    const { run, lease } = await s.createRun(h.newRun('overlap'), h.owner('t'));
    const id = run.run_id;
    const runDir = path.join(dir, 'runs', id);
    await s.append(id, h.runStarted());
    const witness = async () => {
      const w = await readRunWitness(nodeFs, runDir, id);
      assert.equal(w?.kind, 'ok');
      return w.kind === 'ok' ? w.witness : null;
    };
    const first = await witness();
    assert.equal(first?.commits, 1);
    assert.equal(first?.seq, 1);

    let before = first;
    for (let step = 1; step <= 3; step++) {
      const msg = h.assistantWithCall(step);
      await s.append(id, h.stepStarted(h.snapshot(step, [])));
      await s.append(id, h.preLlm(step, 0));
      // The model's response, handed over for the barrier before the tools run (as the loop does).
      const answered = h.snapshot(step, [msg], { pending_llm_response: h.pendingResponse(msg, step) });
      await s.append(id, h.postLlm(answered), { durability: 'next-barrier' });
      const held = arm();
      const barrier = s.makeDurable(id, { toolsNext: true });
      const release = await held;
      // The commit is written and its fdatasync is in flight: the witness still says the one before.
      const during = await witness();
      assert.deepEqual(during, before, 'unchanged while the barrier is in flight');
      assert.equal(during?.commits, step, 'the witness never counts a commit before its barrier');
      release();
      await barrier;
      const after = await witness();
      assert.equal(after?.commits, step + 1, 'written once the barrier is done');
      assert.equal(after?.seq, 1 + 3 * step, 'the run after the commit: its last checkpoint');
      assert.equal(after?.step, step);
      before = after;
      const listed = await s.getRun(id);
      assert.equal(listed?.last_seq, 1 + 3 * step);
      assert.equal(listed?.last_phase, 'post_llm');
    }

    // A barrier that carries a durable op (applied only once written) builds its records after it.
    await s.recordIntent(id, h.commandIntent('c1', 3));
    const w = await witness();
    assert.equal(w?.commits, 5);
    assert.equal(w?.intents, 1);

    await lease.release();
    await s.close();
    // A fresh open finds the log and its witness agreeing (no lost tail reported).
    const again = openDiskStore(dir);
    const got = await again.getRun(id);
    assert.equal(got?.last_seq, 10);
    assert.equal(got?.damage, undefined);
    await again.close();
  });
});
