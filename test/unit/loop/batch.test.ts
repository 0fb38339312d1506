// A tool batch's intents go ahead (docs/design.md, "Durable barriers per step"): the side-effecting
// calls whose intents are valid at the batch's start are made durable in one barrier with the model's
// response, before any call runs; a call whose pre-images an earlier call of the batch may change takes
// them (and its barrier) just before it runs; a batch that stops early withdraws what never started.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import type { FileVersion } from '../../../src/store/api/schema';
import { barrierFs, lines, makeRunner, tmp } from './support';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
type Call = { name: string; arguments: Record<string, unknown>; id: string };
const batch = (name: string, calls: Call[]): ScenarioInput => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  turns: [{ reply: { content: null, tool_calls: calls } }, { reply: { content: 'done' } }],
});
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const beforeOf = (v: FileVersion | undefined) => (v?.kind === 'file' ? v.sha256 : v?.kind);

describe('agent loop: the intents of a tool batch go ahead of it', function () {
  this.timeout(60_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  it('one barrier before the batch carries the response and every intent valid at its start; pre-images an earlier call may change are taken just before their call', async () => {
    server = await startModelServer({
      scenario: batch('pre-images', [
        { id: 'w1', name: 'write_file', arguments: { path: 'a.txt', content: 'one' } },
        { id: 'w2', name: 'write_file', arguments: { path: 'a.txt', content: 'two' } }, // a.txt again: after w1
        { id: 'w3', name: 'write_file', arguments: { path: 'c.txt', content: 'c' } }, // ahead
        { id: 'r1', name: 'read_file', arguments: { path: 'a.txt' } },
        { id: 'cmd', name: 'run_command', arguments: { command: 'printf x > b.txt' } }, // ahead: no pre-images
        { id: 'w4', name: 'write_file', arguments: { path: 'b.txt', content: 'y' } }, // after a command
      ]),
    });
    const dir = tmp('batch-store');
    const { fs: counting, barriers } = barrierFs();
    const store = openDiskStore(dir, { fs: counting });
    const t = makeRunner({ baseURL: server.url, store, policy: AUTO });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'orig');
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'completed');
    await store.close();

    const first = barriers.find((b) => b.includes('post_llm'))!;
    assert.equal(first.filter((c) => c === 'intent').length, 3, `ahead: w1, w3, cmd — ${JSON.stringify(barriers)}`);
    assert.equal(barriers.flat().filter((c) => c === 'intent').length, 5);
    const reopened = openDiskStore(dir);
    const effects = new Map((await reopened.listEffects(h.runId)).map((e) => [e.tool_call_id, e]));
    await reopened.close();
    const before = (id: string, file: string) => beforeOf(effects.get(id)!.files!.find((f) => f.path === file)?.before);
    assert.equal(before('w1', 'a.txt'), sha('orig'));
    assert.equal(before('w2', 'a.txt'), sha('one'), "w2's pre-image is w1's output, taken after w1 ran");
    assert.equal(before('w3', 'c.txt'), 'absent');
    assert.equal(before('cmd', 'b.txt'), 'absent', "the command's scan was taken just before it ran");
    assert.equal(before('w4', 'b.txt'), sha('x'), "w4's pre-image is the command's output");
    assert.equal(fs.readFileSync(path.join(t.workspace, 'a.txt'), 'utf8'), 'two');
    assert.equal(fs.readFileSync(path.join(t.workspace, 'b.txt'), 'utf8'), 'y');
  });

  it('with every intent ahead, a step of three side-effecting calls and a read costs two barriers', async () => {
    server = await startModelServer({
      scenario: batch('two-barriers', [
        { id: 'r1', name: 'list_files', arguments: { path: '.' } },
        { id: 'w1', name: 'write_file', arguments: { path: 'notes.txt', content: 'n' } },
        { id: 'c1', name: 'run_command', arguments: { command: 'echo one >> log.txt' } },
        { id: 'c2', name: 'run_command', arguments: { command: 'echo two >> log.txt' } },
      ]),
    });
    const { fs: counting, barriers } = barrierFs();
    const store = openDiskStore(tmp('batch-store'), { fs: counting });
    const t = makeRunner({ baseURL: server.url, store, policy: AUTO });
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'completed');
    await store.close();
    // The step: [its start … the response, the three intents], then [the results, the next step's start].
    const at = barriers.findIndex((b) => b.includes('post_llm'));
    assert.deepEqual(
      barriers[at]!.filter((c) => c === 'intent' || c === 'post_llm'),
      ['post_llm', 'intent', 'intent', 'intent'],
    );
    assert.equal(barriers[at + 1]!.filter((c) => c === 'result').length, 3, JSON.stringify(barriers));
    assert.ok(barriers[at + 1]!.includes('step_started'), JSON.stringify(barriers));
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['one', 'two']);
  });

  it('a pause between the calls of a batch withdraws the intents of those that never started: resume runs them without asking', async () => {
    server = await startModelServer({
      scenario: batch('pause', [
        { id: 'w1', name: 'write_file', arguments: { path: 'w.txt', content: 'w' } },
        { id: 'c1', name: 'run_command', arguments: { command: 'echo one >> log.txt' } },
        { id: 'c2', name: 'run_command', arguments: { command: 'echo two >> log.txt' } },
        { id: 'c3', name: 'run_command', arguments: { command: 'echo three >> log.txt' } },
      ]),
    });
    const dir = tmp('batch-store');
    const { fs: counting, barriers } = barrierFs();
    const store = openDiskStore(dir, { fs: counting });
    const t = makeRunner({ baseURL: server.url, store, policy: AUTO });
    t.runner.events.on((e) => {
      if (e.type === 'tool' && e.toolCallId === 'c1' && e.status === 'end') t.runner.cancel(e.runId);
    });
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'paused_cancelled');
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['one']);
    assert.ok(
      barriers.flat().filter((c) => c === 'withdrawn').length === 2,
      `the withdrawals are durable with the pause: ${JSON.stringify(barriers)}`,
    );

    // Another window sees the run as the pause left it: w1 and c1 finished, nothing recorded for c2 or c3.
    const other = openDiskStore(dir);
    assert.deepEqual(
      (await other.listEffects(h.runId)).map((e) => [e.tool_call_id, e.result !== null]),
      [
        ['w1', true],
        ['c1', true],
      ],
    );
    await other.close();

    const out = await (await t.runner.resume(h.runId)).done;
    assert.equal(out.state, 'completed');
    assert.deepEqual(await t.store.listApprovals(h.runId), [], 'nothing was asked: c2 and c3 never started');
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['one', 'two', 'three'], 'each once (c1 replayed)');
    assert.equal(fs.readFileSync(path.join(t.workspace, 'w.txt'), 'utf8'), 'w');
    assert.equal(server.stats().total, 2, 'the response was not requested again');
    const effects = await t.store.listEffects(h.runId);
    assert.deepEqual(
      effects.map((e) => [e.tool_call_id, e.result?.is_error]),
      [
        ['w1', false],
        ['c1', false],
        ['c2', false],
        ['c3', false],
      ],
    );
    await store.close();
  });

  it('a barrier before the batch that fails withdraws the intents it would have carried: resume asks nothing and runs each call once', async () => {
    server = await startModelServer({
      scenario: batch('ahead-fails', [
        { id: 'c1', name: 'run_command', arguments: { command: 'echo one >> log.txt' } },
        { id: 'c2', name: 'run_command', arguments: { command: 'echo two >> log.txt' } },
      ]),
    });
    const dir = tmp('batch-store');
    const disk = openDiskStore(dir);
    let fail = true;
    const store = new Proxy(disk, {
      get(target, prop, recv) {
        const v = Reflect.get(target, prop, recv);
        if (prop !== 'makeDurable' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
        return async (runId: string, opts?: { toolsNext?: boolean }) => {
          if (fail && opts?.toolsNext) {
            fail = false;
            throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          }
          return disk.makeDurable(runId, opts);
        };
      },
    });
    const t = makeRunner({ baseURL: server.url, store, policy: AUTO });
    const h = await t.runner.start({ task: 't' });
    const paused = await h.done;
    assert.equal(paused.state, 'paused_error');
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), [], 'nothing ran');
    assert.deepEqual(await disk.listEffects(h.runId), [], 'both intents withdrawn');
    const out = await (await t.runner.resume(h.runId)).done;
    assert.equal(out.state, 'completed');
    assert.deepEqual(await disk.listApprovals(h.runId), [], 'nothing asked');
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['one', 'two']);
    assert.equal(server.stats().per_turn['main#0'], 1, 'the response was not requested again');
    await disk.close();
  });
});
