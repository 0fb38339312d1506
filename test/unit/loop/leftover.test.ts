// A command outlives a SIGKILL of its window (issue 12): run_command starts it in a process group
// of its own. On resume it must be found still running and waited for — asking "may already have
// run?" while it still works invites a second run. Found by its environment marker / recorded pid.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { bundleScript } from '../../support/bundleChild';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import type { Effect } from '../../../src/store/api/schema';
import {
  EFFECT_ENV,
  findLeftovers,
  killLeftovers,
  processStartMs,
  waitForLeftovers,
} from '../../../src/runner/tools/leftovers';
import { lines, tmp } from './support';

const slow: Scenario = {
  name: 'slow-command',
  description: 'offline demo model: one command that takes a while, then an answer',
  model: DEMO_MODEL_ID,
  turns: [
    {
      reply: {
        content: 'working',
        tool_calls: [{ name: 'run_command', arguments: { command: 'sleep 2; echo done >> effects.txt' } }],
      },
    },
    { reply: { content: 'finished' } },
  ],
  subconversations: [],
};

interface Child {
  events: Record<string, unknown>[];
  signal: NodeJS.Signals | null;
}

let childJs = '';
function runChild(env: Record<string, string>): Promise<Child> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [childJs], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('exit', (_code, signal) => {
      const events = out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const failed = events.find((e) => e.event === 'error');
      if (failed) reject(new Error(`child failed: ${String(failed.message)}\n${err}`));
      else resolve({ events, signal });
    });
  });
}

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
  this.timeout(120_000);
  let server: ModelServer;
  before(async () => {
    childJs = await bundleScript(path.join(__dirname, 'crashChild.ts'));
    server = await startModelServer({ scenario: slow });
  });
  after(async () => server?.close());

  it('SIGKILL while the command runs: resume waits for it, then asks — with its effect already visible', async () => {
    const store = tmp('leftover-store');
    const workspace = tmp('leftover-ws');
    const env = { BASE_URL: server.url, STORE_DIR: store, WORKSPACE: workspace };
    // Kill right after the command's process is recorded: it is sleeping, in its own process group.
    const writes = (await runChild({ ...env, MODE: 'start', KILL_AT: '0' })).events
      .filter((e) => e.event === 'write')
      .map((e) => String(e.what));
    const killAt = writes.indexOf('recordProcess') + 1;
    assert.ok(killAt > 0, `the command's process is recorded (${writes.join(', ')})`);
    const trial = { store: tmp('leftover-store2'), workspace: tmp('leftover-ws2') };
    server.reset();
    const killed = await runChild({
      BASE_URL: server.url,
      STORE_DIR: trial.store,
      WORKSPACE: trial.workspace,
      MODE: 'start',
      KILL_AT: String(killAt),
    });
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(
      lines(path.join(trial.workspace, 'effects.txt')),
      [],
      'the command had not finished when its window died',
    );
    const s = openDiskStore(trial.store);
    const runId = (await s.listRuns()).runs[0]!.run_id;
    await s.close();
    const t0 = Date.now();
    const resumed = await runChild({
      BASE_URL: server.url,
      STORE_DIR: trial.store,
      WORKSPACE: trial.workspace,
      MODE: 'resume',
      RUN_ID: runId,
    });
    const waiting = resumed.events.find((e) => e.event === 'leftovers' && e.status === 'waiting');
    assert.ok(waiting, 'the resumed run found the command still running and waited for it');
    assert.equal(resumed.events.find((e) => e.event === 'done')?.state, 'awaiting_approval');
    assert.ok(Date.now() - t0 >= 1000, 'it waited');
    assert.deepEqual(
      lines(path.join(trial.workspace, 'effects.txt')),
      ['done'],
      'when the user is asked, the effect is already visible',
    );
    const s2 = openDiskStore(trial.store);
    const [approval] = await s2.listApprovals(runId, { pendingOnly: true });
    await s2.close();
    assert.equal(approval?.uncertain, true);
    assert.match(approval!.reason, /still running when the run resumed and was waited for/);
    const decided = await runChild({
      BASE_URL: server.url,
      STORE_DIR: trial.store,
      WORKSPACE: trial.workspace,
      MODE: 'decide',
      RUN_ID: runId,
      DECISIONS: JSON.stringify([
        {
          kind: 'reject',
          toolCallId: approval!.tool_call_id,
          inputHash: approval!.input_hash,
          reason: 'it already ran',
        },
      ]),
    });
    assert.equal(decided.events.find((e) => e.event === 'done')?.state, 'completed');
    assert.deepEqual(lines(path.join(trial.workspace, 'effects.txt')), ['done'], 'exactly once');
  });

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
