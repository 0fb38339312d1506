// A command outlives a SIGKILL of its window: run_command starts it in a process group of its own. On
// resume it must be found still running and waited for (leftover.int.test.ts kills a real window);
// here, how it is found — by its environment marker or its recorded pid — and how it is killed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Effect } from '../../../src/store/api/schema';
import {
  EFFECT_ENV,
  findLeftovers,
  killLeftovers,
  processStartMs,
  waitForLeftovers,
} from '../../../src/runner/tools/leftovers';

const effect = (key: string, over: Partial<Effect> = {}): Effect => ({
  run_id: 'r',
  tool_call_id: key,
  step: 1,
  tool_name: 'run_command',
  input_hash: 'h',
  idempotency_key: key,
  side_effecting: true,
  intent_ms: 1,
  result: null,
  ...over,
});

describe('agent loop: a command still running from before a crash', function () {
  this.timeout(60_000);

  it('finds a command by its marker, waits for it, and kill ends the wait', async () => {
    const key = `run-x/1/call_${process.pid}`;
    const child = spawn('sh', ['-c', 'sleep 30'], {
      env: { ...process.env, [EFFECT_ENV]: key },
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    const e = effect(key, { process: { pid: child.pid!, hostname: 'elsewhere', started_ms: 1 } });
    const found = await findLeftovers([
      e,
      effect('other-key'),
      effect(key + 'x', { result: { output: '', output_hash: '', is_error: false, blob: null, finished_ms: 2 } }),
    ]);
    assert.deepEqual(
      found.map((f) => f.toolCallId),
      [key],
      'only the live, unfinished call',
    );
    assert.ok(found[0]!.pids.includes(child.pid!));
    const t0 = Date.now();
    const waiting = waitForLeftovers([e], new AbortController().signal, 50);
    killLeftovers(found, 200);
    await waiting;
    assert.ok(Date.now() - t0 < 10_000, 'the wait ended with the kill');
    assert.deepEqual(await findLeftovers([e]), []);
  });
  it('a recorded pid whose process started at another time is someone else’s (pid reuse): not waited for, not offered to kill', async () => {
    const unrelated = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    unrelated.unref();
    const pid = unrelated.pid!;
    const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
    // The recorded-pid path (macOS, BSD): on Linux the environment marker decides instead.
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    try {
      const reused = effect('reused', {
        process: { pid, hostname: os.hostname(), started_ms: Date.now() - 3_600_000 },
      });
      assert.deepEqual(await findLeftovers([reused]), [], 'a process that started an hour after the command is not it');
      const same = effect('same', { process: { pid, hostname: os.hostname(), started_ms: Date.now() } });
      assert.deepEqual(
        (await findLeftovers([same])).map((l) => l.pids),
        [[pid]],
        'the process that started with the command is found',
      );
    } finally {
      Object.defineProperty(process, 'platform', platform);
      process.kill(-pid, 'SIGKILL');
    }
  });

  it('kill checks each process again: a pid that now belongs to another process is not signalled', async () => {
    const victim = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    victim.unref();
    const pid = victim.pid!;
    const start = await processStartMs(pid);
    assert.ok(start !== null && Math.abs(start - Date.now()) < 10_000, `start time read (${start})`);
    const exited = new Promise((r) => victim.on('exit', r));
    // What a leftover found long ago looks like once its pid was reused by this unrelated process.
    killLeftovers([{ toolCallId: 'old', pids: [pid], started: { [pid]: start! - 3_600_000 } }], 50);
    const gone = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 1500))]);
    assert.equal(gone, false, 'the unrelated process was left alone');
    killLeftovers([{ toolCallId: 'now', pids: [pid], started: { [pid]: start! } }], 50);
    assert.ok(
      await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]),
      'the process itself is killed',
    );
  });
});
