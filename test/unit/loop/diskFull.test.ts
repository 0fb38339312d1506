// A full disk inside a tool batch (issue 12): a command runs, then storing its large output fails.
// The tool result must never say the command failed when it ran (a real model would run it again);
// the run pauses with the disk's error, and resuming after space is freed runs nothing twice.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import type { CheckpointStore, StoreEvent } from '../../../src/store/api/types';
import { FaultyFs } from '../store/faultyFs';
import { withSmallDisk } from '../store/smallDisk';
import { lines, makeRunner, tmp } from './support';

const COMMANDS = 4;
/** Each command prints 300 KB of its own (over the 32 KB cap: the full output goes to a blob) and records that it ran. */
const command = (n: number) => `yes x${n} | head -c 300000; echo ${n} >> effects.txt`;
const bigOutputs: Scenario = {
  name: 'big-outputs',
  description: 'offline demo model: commands with 300 KB of output',
  model: DEMO_MODEL_ID,
  turns: [
    ...Array.from({ length: COMMANDS }, (_, i) => ({
      reply: {
        content: `command ${i + 1}`,
        tool_calls: [{ name: 'run_command', arguments: { command: command(i + 1) } }],
      },
    })),
    { reply: { content: 'done' } },
  ],
  subconversations: [],
};
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

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

/** Every tool message and effect result: none may claim that a command failed because of the disk. */
async function assertNoFalseFailures(store: CheckpointStore, runId: string, label: string): Promise<void> {
  const texts = [
    ...(await store.loadSnapshot(runId)).snapshot.messages
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content)),
    ...(await store.listEffects(runId)).map((e) => e.result?.output ?? ''),
  ];
  for (const t of texts) {
    assert.doesNotMatch(
      t,
      /failed|no space left|ENOSPC: /i,
      `${label}: a tool result claims a failure: ${t.slice(0, 200)}`,
    );
    // Either what the command did, or the user's own "do not run it again" for a call that may have run.
    if (t)
      assert.match(
        t,
        /^(exit code: 0|Not run again \(it may already have run)/,
        `${label}: the command's real status is recorded: ${t.slice(0, 120)}`,
      );
  }
}

/** Resumes (declining "may already have run" calls whose effect is visible) until the run completes. */
async function resumeToEnd(
  runner: ReturnType<typeof makeRunner>['runner'],
  store: CheckpointStore,
  runId: string,
  workspace: string,
): Promise<void> {
  let out = await (await runner.resume(runId)).done;
  for (let i = 0; i < 20 && out.state !== 'completed'; i++) {
    if (out.state === 'awaiting_approval') {
      const seen = lines(path.join(workspace, 'effects.txt'));
      const pending = await store.listApprovals(runId, { pendingOnly: true });
      const decisions = pending.map((a) => {
        const n = String((a.arguments as { command: string }).command).match(/echo (\d)/)![1]!;
        return seen.includes(n)
          ? ({ kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' } as const)
          : ({ kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash } as const);
      });
      out = (await (await runner.decideApprovals(runId, decisions))?.done) ?? out;
    } else out = await (await runner.resume(runId)).done;
  }
  assert.equal(out.state, 'completed', out.detail ?? '');
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

  it('a real small disk at many free-space levels: never a false "failed", each command once after space is freed, no corrupt file', async () => {
    await withSmallDisk({ sizeKb: 3072 }, async (disk) => {
      const rows: string[] = [];
      for (const freeKb of [24, 64, 160, 320, 480, 700, 1000, 1400, 2000, 2800]) {
        server.reset();
        const fsl = new FaultyFs(); // pass-through on tmpfs; the capacity when no tmpfs could be mounted
        const storeDir = path.join(disk.root, `store-${freeKb}`);
        const workspace = tmp(`full-ws-${freeKb}`);
        disk.leaveFree(freeKb * 1024, fsl);
        const events: StoreEvent[] = [];
        let store = openDiskStore(storeDir, { fs: fsl, onEvent: (e) => events.push(e) });
        let { runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO });
        let state = 'not started';
        let detail = '';
        let runId: string | undefined;
        try {
          const h = await runner.start({ task: 'print a lot' });
          runId = h.runId;
          const out = await h.done;
          state = out.state;
          detail = out.detail ?? '';
          if (out.state !== 'completed')
            assert.match(out.detail ?? '', /ENOSPC|no space/i, `${freeKb} KB free: paused with the disk's error`);
        } catch (err) {
          state = `refused at start: ${(err as { code?: string }).code}`; // nothing ran
          assert.match(String(err), /ENOSPC|no space/i);
        }
        const ranBefore = lines(path.join(workspace, 'effects.txt')).length;
        await store.close().catch(() => undefined);
        disk.release(fsl);
        if (runId) {
          store = openDiskStore(storeDir, { onEvent: (e) => events.push(e) });
          ({ runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO }));
          if (/is recorded/.test(detail))
            assert.ok(
              (await store.listEffects(runId)).every((e) => e.result !== null),
              `${freeKb} KB free: the pause said the result is recorded, and a reopen finds it`,
            );
          await resumeToEnd(runner, store, runId, workspace);
          assert.deepEqual(
            lines(path.join(workspace, 'effects.txt')),
            ['1', '2', '3', '4'],
            `${freeKb} KB free: each command exactly once`,
          );
          await assertNoFalseFailures(store, runId, `${freeKb} KB free`);
          await store.close();
        }
        assert.deepEqual(
          events.filter((e) => e.kind === 'corruption'),
          [],
          `${freeKb} KB free: no corrupt file`,
        );
        rows.push(`${String(freeKb).padStart(5)} KB free → ${state}; ${ranBefore} command(s) ran before the pause`);
        fs.rmSync(storeDir, { recursive: true, force: true });
      }
      console.log(`      full disk (${disk.kind}):\n        ${rows.join('\n        ')}`);
    });
  });
});
