// The vscode-free transcript model: store records → view items, paging, threads. Runs are made by
// the real runner against the scripted model server (memory store), so the records are real.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import type { ToolItem, TranscriptItem } from '../../../../src/views/run/items';
import { buildRunItems } from '../../../../src/views/run/transcript';
import { loadRunData } from '../../../../src/views/run/runData';
import { ThreadTranscript, threadRuns } from '../../../../src/views/run/thread';
import { createMemoryStore, openDiskStoreReady } from '../../../../src/store';
import { planRunItems } from '../../../../src/views/run/transcript';
import { BENCH_OWNER } from '../../../../bench/contenders/ours';
import { applyOp, Workload } from '../../../../bench/workload';
import { makeRunner, tmp } from '../../loop/support';
import { assertNewestIsTheEnd, idle } from './support';

const reply = (content: string | null, calls: { name: string; arguments: Record<string, unknown> }[] = []) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
});
const scenario = (turns: Scenario['turns']): Scenario => ({
  name: 'transcript',
  description: 'offline demo model: transcript',
  model: DEMO_MODEL_ID,
  turns,
  subconversations: [],
});
const kinds = (items: TranscriptItem[]) => items.map((i) => i.kind);

const EDIT_THEN_ANSWER = scenario([
  reply('I will **edit** it.', [
    { name: 'edit_file', arguments: { path: 'a.txt', old_text: 'hello', new_text: 'bonjour' } },
    { name: 'run_command', arguments: { command: 'echo ran' } },
  ]),
  reply('Done: `a.txt` says bonjour.'),
  reply('And the follow-up is answered.'),
]);

describe('run view: transcript model', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: EDIT_THEN_ANSWER })));
  afterEach(async () => server.close());

  async function finishedRun() {
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } },
    });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello world\n');
    const h = await t.runner.start({ task: 'Say bonjour in a.txt' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const pendingRun = (await t.store.getRun(h.runId))!;
    const pending = buildRunItems(await loadRunData(t.store, pendingRun, 1, idle));
    const [approval] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    const resumed = await t.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    return { ...t, runId: h.runId, pending };
  }

  it('a run reads as the task, the agent’s text, tool cards and a waypoint per step; a waiting approval is in its card', async () => {
    const { store, runId, pending } = await finishedRun();
    const waiting = pending.find((i): i is ToolItem => i.kind === 'tool' && i.name === 'edit_file')!;
    assert.equal(waiting.status, 'awaiting');
    assert.equal(waiting.approval?.pending, true);
    assert.match(waiting.approval!.inputHash, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      waiting.diff!.filter((l) => /^[-+]/.test(l)),
      ['-hello', '+bonjour'],
    );
    assert.equal(pending.at(-1)?.kind, 'tool', 'the header says it waits; no status line repeats it');

    const items = buildRunItems(await loadRunData(store, (await store.getRun(runId))!, 1, idle));
    assert.deepEqual(kinds(items), ['turn', 'user', 'waypoint', 'assistant', 'tool', 'tool', 'waypoint', 'assistant']);
    const [edit, command] = items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.equal(edit!.title, 'edit_file a.txt');
    assert.deepEqual([edit!.status, edit!.approval?.decision], ['done', 'approved']);
    assert.equal(command!.title, 'run_command echo ran');
    assert.equal(command!.exitCode, 0);
    assert.ok(command!.durationMs !== null && command!.durationMs >= 0);
    const final = items.at(-1)!;
    assert.ok(
      final.kind === 'assistant' && final.final && final.text === 'Done: `a.txt` says bonjour.',
      'the final answer',
    );
    const [w1, w2] = items.filter((i) => i.kind === 'waypoint');
    assert.ok(
      w1?.kind === 'waypoint' && w1.step === 1 && w1.summary === 'edit_file a.txt, run_command echo ran · approved',
    );
    assert.ok(w1.phases.some((p) => p.phase === 'post_llm') && w1.phases.some((p) => p.phase === 'post_tool_batch'));
    assert.ok(
      w2?.kind === 'waypoint' && w2.step === 2 && w2.summary === 'final answer',
      'the words the Runs tree uses for the step',
    );
    assert.deepEqual(new Set(items.map((i) => i.key)).size, items.length, 'keys are unique');
  });

  it('a thread pages its items; a follow-up turn shows only what is new, and a queued message until it is delivered', async () => {
    const { runner, store, runId } = await finishedRun();
    const out = await runner.send(runId, 'Now the follow-up');
    assert.equal(out.kind, 'follow-up');
    if (out.kind === 'follow-up') await out.handle.done;
    const thread = (await store.getRun(runId))!.thread_id;
    const runs = await threadRuns(store, thread);
    assert.equal(runs.length, 2);
    const t = new ThreadTranscript(store, idle);
    assert.equal(await t.refresh(runs), true);
    assert.equal(await t.refresh(runs), false, 'nothing changed: nothing rebuilt');
    const outline = t.outline();
    const all = t.page(0, outline.length);
    assert.deepEqual(
      all.map((i) => i.key),
      outline.map((o) => o[0]),
    );
    const secondTurn = all.slice(all.findIndex((i) => i.kind === 'turn' && i.turn === 2));
    assert.deepEqual(kinds(secondTurn), ['turn', 'user', 'waypoint', 'assistant']);
    assert.ok(secondTurn[1]!.kind === 'user' && secondTurn[1]!.text === 'Now the follow-up');
    assert.equal(
      all.filter((i) => i.kind === 'user' && i.text === 'Say bonjour in a.txt').length,
      1,
      'the first turn is not repeated',
    );
    assert.deepEqual(
      t.page(3, 5).map((i) => i.key),
      outline.slice(3, 5).map((o) => o[0]),
    );

    const { lease } = {
      lease: await store.acquire(runs[1]!.run_id, { owner_id: 'x', label: 'x', pid: 1, hostname: 'h' }),
    };
    await store.postMessage(runs[1]!.run_id, { id: 'q1', text: 'queued one' });
    await lease.release();
    t.invalidate(runs[1]!.run_id);
    await t.refresh(await threadRuns(store, thread));
    const last = t.page(0, 1000).at(-1)!;
    assert.ok(last.kind === 'user' && last.queued && last.text === 'queued one');
  });
});

describe('run view: a batch whose intents went ahead, while it runs', function () {
  this.timeout(30_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  it('the call that started is running; the ones whose intents wait for their turn are waiting, not running', async () => {
    server = await startModelServer({
      scenario: scenario([
        reply('Two commands.', [
          { name: 'run_command', arguments: { command: 'echo one' } },
          { name: 'run_command', arguments: { command: 'echo two' } },
        ]),
        reply('Done.'),
      ]),
    });
    const memory = createMemoryStore();
    let reached!: () => void;
    const atFirst = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let first: string | null = null;
    // Holds the runner inside the first call (between its start and its end) until the view was read.
    const store = new Proxy(memory, {
      get(target, prop, recv) {
        const v = Reflect.get(target, prop, recv);
        if (prop !== 'recordProcess' || typeof v !== 'function') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: Parameters<typeof memory.recordProcess>) => {
          first ??= args[1];
          if (args[1] === first) {
            reached();
            await gate;
          }
          return memory.recordProcess(...args);
        };
      },
    });
    const t = makeRunner({
      baseURL: server.url,
      store,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const h = await t.runner.start({ task: 't' });
    await atFirst;
    const effects = await memory.listEffects(h.runId);
    assert.equal(effects.length, 2, 'both intents went ahead');
    const live = { isActive: () => true, runningCalls: () => new Set([first!]) };
    const items = buildRunItems(await loadRunData(memory, (await memory.getRun(h.runId))!, 1, live));
    const tools = items.filter((i): i is ToolItem => i.kind === 'tool');
    assert.deepEqual(
      tools.map((i) => [i.title, i.status]),
      [
        ['run_command echo one', 'running'],
        ['run_command echo two', 'waiting'],
      ],
    );
    release();
    assert.equal((await h.done).state, 'completed');
  });
});

describe('run view: the end of a long run from its newest checkpoints', () => {
  it('plans exactly the end of the whole run, for any number of newest checkpoints', async () => {
    const store = createMemoryStore();
    const runId = 'long';
    const workload = new Workload(11, runId);
    const { lease } = await store.createRun({ ...workload.runInput, run_id: runId }, BENCH_OWNER);
    await store.append(runId, workload.runStarted);
    for (let s = 0; s < 60; s++) for (const op of workload.nextStep().ops) await applyOp(store, runId, op);
    await lease.release();
    await assertNewestIsTheEnd(store, runId, [1, 2, 5, 17, 50, 123, 200, 299, 10_000]);
    await store.close();
  });
});

/** The run below has 351 checkpoints: its end is kept from 300 on (the default, 1000, is for the product). */
const KEEP_END = { keepEndFrom: 300 };

describe('run view: the end of a long run nobody has read, from what its compaction kept', function () {
  this.timeout(120_000);

  it('plans exactly the end of the whole run without reading its log; stale or too short: read whole', async () => {
    const dir = tmp('view-kept-end');
    const runId = 'long-kept';
    const writer = await openDiskStoreReady(dir, KEEP_END);
    const workload = new Workload(12, runId);
    const { lease } = await writer.createRun({ ...workload.runInput, run_id: runId }, BENCH_OWNER);
    await writer.append(runId, workload.runStarted);
    for (let s = 0; s < 70; s++) for (const op of workload.nextStep().ops) await applyOp(writer, runId, op);
    await writer.setRunState(runId, 'completed', null);
    await lease.release(); // finished and long: compacted as it finished, its end kept
    await writer.close();
    const run = (await (await openDiskStoreReady(dir, KEEP_END)).getRun(runId))!;
    assert.ok(run.last_seq > 300, `${run.last_seq} checkpoints`);
    const seg = fs.readdirSync(path.join(dir, 'runs', runId)).filter((n) => n.startsWith('segment-'));
    assert.equal(seg.length, 1);

    for (const n of [5, 50, 123, 200, 250]) {
      // A fresh window: the newest n from what was kept (200 were), then the whole run.
      const store = await openDiskStoreReady(dir, KEEP_END);
      const newest = planRunItems(await loadRunData(store, run, 1, idle, { newest: n }));
      const whole = planRunItems(await loadRunData(store, run, 1, idle));
      assert.ok(newest.length > 0 || n < 10, `${n}: steps held whole`);
      const tail = whole.slice(whole.length - newest.length);
      assert.deepEqual(
        newest.map((p) => p.key),
        tail.map((p) => p.key),
        `${n}: the end of the whole run`,
      );
      assert.deepEqual(
        newest.map((p) => p.build()),
        tail.map((p) => p.build()),
        `${n}: the same items`,
      );
      await store.close();
    }

    // Proof that no log was read: both copies of the snapshot's chunks damaged, the end still whole.
    const broken = tmp('view-kept-end-broken');
    fs.cpSync(dir, broken, { recursive: true });
    const file = path.join(broken, 'runs', runId, 'snapshot.json');
    const bytes = fs.readFileSync(file);
    const gap = bytes.indexOf(' '.repeat(4095));
    for (const at of [gap - 100, bytes.length - 100]) bytes[at] = bytes[at]! ^ 0x20; // the last chunk of each copy
    fs.writeFileSync(file, bytes);
    const reports: string[] = [];
    const reader = await openDiskStoreReady(broken, {
      ...KEEP_END,
      onEvent: (e) => void (e.kind === 'corruption' && reports.push(e.report.file)),
    });
    const fresh = await openDiskStoreReady(dir, KEEP_END);
    assert.deepEqual(await reader.readEnd(runId, { records: 200 }), await fresh.readEnd(runId, { records: 200 }));
    assert.deepEqual(reports, [], 'nothing read yet that could be found damaged');
    await reader.list(runId).catch(() => []); // now the log is read: its damage is found and said
    assert.deepEqual(reports, [`runs/${runId}/snapshot.json`]);
    await reader.close();

    // Another window appends (and still holds the run): the kept end is stale, the run is read whole.
    const other = await openDiskStoreReady(dir, KEEP_END);
    const held = await other.acquire(runId, { owner_id: 'o', label: 'o', pid: 2, hostname: 'h' });
    await other.postMessage(runId, { id: 'late', text: 'one more thing' });
    const after = await openDiskStoreReady(dir, KEEP_END);
    const end = await after.readEnd(runId, { records: 200 });
    assert.ok(
      end.inbox.some((m) => m.id === 'late'),
      'the commit after the compaction is there',
    );
    assert.ok(
      (await fresh.readEnd(runId, { records: 200 })).inbox.some((m) => m.id === 'late'),
      'not the stale end',
    );
    await held.release();
    await Promise.all([other.close(), after.close(), fresh.close()]);
  });
});
