// A full disk inside a tool batch: a command runs, then storing its large output fails.
// The tool result must never say the command failed when it ran (a real model would run it again);
// the run pauses with the disk's error, and resuming after space is freed runs nothing twice.
import assert from 'node:assert/strict';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import { FaultyFs } from '../store/faultyFs';
import { assertNoFalseFailures, AUTO, bigOutputs, resumeToEnd } from './diskFullSupport';
import { lines, makeRunner, tmp } from './support';

/** A disk that fills up when the first command's output is stored: from then on no write gets through. */
class FillingDisk extends FaultyFs {
  private full = false;
  override async createExclusive(p: string): Promise<number> {
    if (!this.full && /\/blobs\//.test(p)) {
      this.full = true;
      for (const op of ['createExclusive', 'pwrite', 'write'] as const) this.inject(op, 'ENOSPC');
    }
    return super.createExclusive(p);
  }
}

describe('agent loop: a full disk inside a tool batch', function () {
  this.timeout(300_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: bigOutputs })));
  afterEach(async () => server.close());

  it('ENOSPC while storing a command’s output: the run pauses with the disk’s error; the result says the command ran; resume runs it once', async () => {
    const fsl = new FaultyFs();
    const storeDir = tmp('full-inj');
    const store = openDiskStore(storeDir, { fs: fsl });
    const { runner, workspace } = makeRunner({ baseURL: server.url, store, policy: AUTO });
    fsl.inject('createExclusive', 'ENOSPC', { match: /\/blobs\//, times: 1 });
    const h = await runner.start({ task: 'print a lot' });
    const out = await h.done;
    assert.equal(out.state, 'paused_error');
    assert.match(
      out.detail ?? '',
      /run_command ran, but its full output could not be stored .*ENOSPC.*does not run again/s,
    );
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['1'], 'the command ran once');
    const effect = (await store.listEffects(h.runId))[0]!;
    assert.equal(effect.result?.is_error, false, 'its recorded result is what happened: exit code 0');
    assert.match(effect.result!.output, /the full output could not be kept \(storage error ENOSPC\)/);
    await resumeToEnd(runner, store, h.runId, workspace);
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['1', '2', '3', '4'], 'each command exactly once');
    await assertNoFalseFailures(store, h.runId, 'injected');
    await store.close();
  });

  it('a disk that stays full after the output failed: the pause never says the result is recorded when a reopen does not find it', async () => {
    const fsl = new FillingDisk();
    const storeDir = tmp('full-after');
    const store = openDiskStore(storeDir, { fs: fsl });
    const { runner, workspace } = makeRunner({ baseURL: server.url, store, policy: AUTO });
    const h = await runner.start({ task: 'print a lot' });
    const out = await h.done;
    assert.equal(out.state, 'paused_error');
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['1'], 'the command ran once');
    assert.doesNotMatch(out.detail ?? '', /is recorded/, 'its result never reached the disk');
    assert.match(out.detail ?? '', /run_command ran, but its full output could not be stored .*may ask you/s);
    await store.close().catch(() => undefined);

    fsl.clear();
    const reopened = openDiskStore(storeDir);
    const effect = (await reopened.listEffects(h.runId))[0]!;
    assert.equal(effect.result, null, 'after a reopen the result is not there: the pause said so');
    const again = makeRunner({ baseURL: server.url, store: reopened, workspace, policy: AUTO });
    await resumeToEnd(again.runner, reopened, h.runId, workspace);
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['1', '2', '3', '4'], 'each command exactly once');
    await reopened.close();
  });
});
