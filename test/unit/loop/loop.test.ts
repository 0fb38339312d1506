// The agent loop end to end: real HTTP to the scripted model server, real tools on temp folders,
// the memory store (the contract suite proves it behaves like the disk store).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { CheckpointNotFoundError } from '../../../src/store/api/errors';
import { ResumeNeedsConfirmationError, StaleApprovalError } from '../../../src/runner/errors';
import { lines, makeRunner, phases, tmp } from './support';

const turn = (
  content: string | null,
  calls: { name: string; arguments: Record<string, unknown> | string; id?: string }[] = [],
) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
});
const scenario = (
  name: string,
  turns: Scenario['turns'],
  subconversations: Scenario['subconversations'] = [],
): Scenario => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  turns,
  subconversations,
});

describe('agent loop: scenarios end to end', function () {
  this.timeout(60_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('every phase is checkpointed in order; run_terminal carries the terminal result', async () => {
    server = await startModelServer({
      scenario: scenario('order', [turn('look', [{ name: 'list_files', arguments: { path: '.' } }]), turn('done')]),
    });
    const { runner, store } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 'list', model: 'mystery-model' });
    assert.equal((await h.done).state, 'completed');
    const snapshot = (await store.loadSnapshot(h.runId))!.snapshot;
    assert.equal(snapshot.total_cost_usd, null, 'a model without a price: cost unknown, not zero');
    assert.ok(snapshot.usage.total_tokens > 0, 'usage is still counted');
    assert.deepEqual(await phases(store, h.runId), [
      'run_started',
      'step_started',
      'pre_llm',
      'post_llm',
      'pre_tool_batch',
      'post_tool_batch',
      'step_started',
      'pre_llm',
      'post_llm',
      'run_terminal',
    ]);
    const last = (await store.latest(h.runId))!;
    assert.equal((last.payload.terminal_result as { final_text: string }).final_text, 'done');
    const records = await store.list(h.runId, { limit: 100 });
    for (const r of records) assert.equal(r.parent?.seq ?? 0, r.seq - 1, 'parent is the previous checkpoint');
  });

  it('streams the answer as llm-delta events before post_llm, and the deltas add up to the stored answer', async () => {
    const answer = 'Streaming works: ' + 'word '.repeat(40).trim();
    server = await startModelServer({ scenario: scenario('stream', [turn(answer)]) });
    const { runner, store } = makeRunner({ baseURL: server.url });
    const seen: string[] = [];
    let deltasBeforePostLlm = 0;
    const sub = runner.events.on((e) => {
      if (e.type === 'llm-delta' && e.kind === 'text') seen.push(e.delta);
      if (e.type === 'phase' && e.record.phase === 'post_llm') deltasBeforePostLlm = seen.length;
    });
    const h = await runner.start({ task: 'say something' });
    assert.equal((await h.done).state, 'completed');
    sub.dispose();
    assert.ok(seen.length > 1, `the answer arrived in several deltas (got ${seen.length})`);
    assert.equal(deltasBeforePostLlm, seen.length, 'every delta came before the durable post_llm checkpoint');
    assert.equal(seen.join(''), answer);
    assert.equal((await store.loadSnapshot(h.runId)).snapshot.final_text, answer);
  });

  it('path confinement: ../, absolute paths and symlinks out of the workspace are refused', async () => {
    const outside = tmp('outside');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
    const workspace = tmp('ws');
    fs.symlinkSync(outside, path.join(workspace, 'link'));
    server = await startModelServer({
      scenario: scenario('paths', [
        turn(null, [
          { name: 'read_file', arguments: { path: '../outside/secret.txt' } },
          { name: 'read_file', arguments: { path: path.join(outside, 'secret.txt') } },
          { name: 'read_file', arguments: { path: 'link/secret.txt' } },
          { name: 'write_file', arguments: { path: '../escape.txt', content: 'x' } },
        ]),
        turn('refused'),
      ]),
    });
    const { runner, store } = makeRunner({
      baseURL: server.url,
      workspace,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
    });
    const h = await runner.start({ task: 'escape' });
    assert.equal((await h.done).state, 'completed');
    const tools = (await store.loadSnapshot(h.runId))!.snapshot.messages.filter((m) => m.role === 'tool');
    assert.equal(tools.length, 4);
    for (const t of tools) {
      assert.doesNotMatch(t.content, /top secret/);
      assert.match(t.content, /outside the workspace|leaves the workspace|escapes|refused/i);
    }
    assert.equal(fs.existsSync(path.join(path.dirname(workspace), 'escape.txt')), false);
  });

  it('delegate runs a subagent as a child run with its own checkpoints, linked both ways', async () => {
    server = await startModelServer({ scenario: 'delegate' });
    const { runner, store } = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const h = await runner.start({ task: 'delegate' });
    const out = await h.done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    const snap = (await store.loadSnapshot(h.runId))!.snapshot;
    assert.equal(snap.subagent_executions.length, 1);
    const childId = snap.subagent_executions[0]!.child_run_id;
    const child = (await store.getRun(childId))!;
    assert.equal(child.parent_run_id, h.runId, 'child → parent');
    assert.equal(child.state, 'completed');
    assert.ok((await phases(store, childId)).includes('run_terminal'), 'the child has its own checkpoints');
    const parentPhases = await phases(store, h.runId);
    assert.ok(parentPhases.includes('pre_subagent_batch') && parentPhases.includes('post_subagent_batch'));
  });
});

describe('agent loop: resume semantics', function () {
  this.timeout(60_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  it('a finished run resumes to its stored result with zero LLM calls', async () => {
    server = await startModelServer({ scenario: scenario('fin', [turn('all done')]) });
    const { runner } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't' });
    await h.done;
    const before = server.stats().total;
    const again = await (await runner.resume(h.runId)).done;
    assert.equal(again.state, 'completed');
    assert.equal(again.finalText, 'all done');
    assert.equal(server.stats().total, before, 'no LLM request');
  });

  it('a pending LLM response resumes straight into its tool calls: zero LLM calls for that step', async () => {
    server = await startModelServer({
      scenario: scenario('pending', [
        turn('write', [{ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }]),
        turn('ok'),
      ]),
    });
    const { runner, store, workspace } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't' });
    const paused = await h.done;
    assert.equal(paused.state, 'awaiting_approval');
    const [approval] = await store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(server.stats().per_turn['main#0'], 1);
    const resumed = await runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    assert.equal(server.stats().per_turn['main#0'], 1, 'the response awaiting approval was not requested again');
    assert.equal(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8'), 'A');
  });

  it('approve with edited arguments executes the edited call under a new input hash; reject shows the reason to the model', async () => {
    server = await startModelServer({
      scenario: scenario('edit', [
        turn(null, [
          { name: 'write_file', arguments: { path: 'a.txt', content: 'original' }, id: 'call_a' },
          { name: 'run_command', arguments: { command: 'echo hi > b.txt' }, id: 'call_b' },
        ]),
        turn('ok'),
      ]),
    });
    const { runner, store, workspace } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const pending = await store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(pending.length, 2);
    const a = pending.find((p) => p.tool_call_id === 'call_a')!;
    const b = pending.find((p) => p.tool_call_id === 'call_b')!;
    await assert.rejects(
      runner.decideApprovals(h.runId, [{ kind: 'approve', toolCallId: 'call_a', inputHash: 'f'.repeat(64) }]),
      StaleApprovalError,
    );
    const first = await runner.decideApprovals(h.runId, [
      { kind: 'reject', toolCallId: 'call_b', inputHash: b.input_hash, reason: 'no shell today' },
    ]);
    assert.equal(first, undefined, 'still waiting for call_a');
    const edited = JSON.stringify({ path: 'a.txt', content: 'edited' });
    const done = await runner.decideApprovals(h.runId, [
      { kind: 'approve_edited', toolCallId: 'call_a', inputHash: a.input_hash, argumentsJson: edited },
    ]);
    assert.equal((await done!.done).state, 'completed');
    assert.equal(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8'), 'edited');
    assert.equal(fs.existsSync(path.join(workspace, 'b.txt')), false);
    const decidedA = (await store.listApprovals(h.runId)).find((x) => x.tool_call_id === 'call_a')!;
    assert.notEqual(decidedA.decision!.input_hash, a.input_hash, 'edited arguments → new hash');
    const effect = (await store.listEffects(h.runId)).find((e) => e.tool_call_id === 'call_a')!;
    assert.equal(effect.input_hash, decidedA.decision!.input_hash);
    const tools = (await store.loadSnapshot(h.runId))!.snapshot.messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    assert.ok(
      tools.some((t) => t.includes('no shell today')),
      'the model sees the reason',
    );
    assert.ok(
      tools.some((t) => t.includes('edited the arguments')),
      'the model is told the arguments were edited',
    );
  });

  it('an effect intent without a result is uncertain: the side-effecting call comes back as "may already have run", never re-run silently', async () => {
    server = await startModelServer({
      scenario: scenario('uncertain', [
        turn(null, [
          { name: 'run_command', arguments: { command: 'echo x >> log.txt' }, id: 'call_cmd' },
          { name: 'read_file', arguments: { path: 'README.md' }, id: 'call_read' },
        ]),
        turn('ok'),
      ]),
    });
    const t = makeRunner({ baseURL: server.url });
    fs.writeFileSync(path.join(t.workspace, 'README.md'), 'readme');
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [ask] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    // What a crash mid-tool leaves behind: the decision and the durable intent, no result.
    const lease = await t.store.acquire(h.runId, t.runner.owner);
    await t.store.decideApproval(h.runId, 'call_cmd', { kind: 'approve', reason: null, input_hash: null });
    await t.store.recordIntent(h.runId, {
      tool_call_id: 'call_cmd',
      step: 1,
      tool_name: 'run_command',
      input_hash: ask!.input_hash,
      side_effecting: true,
    });
    await t.store.setRunState(h.runId, 'interrupted', 'crashed');
    await lease.release();

    const resumed = await (await t.runner.resume(h.runId)).done;
    assert.equal(resumed.state, 'awaiting_approval', 'not re-run silently');
    const [uncertain] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(uncertain!.tool_call_id, 'call_cmd');
    assert.equal(uncertain!.uncertain, true);
    assert.match(uncertain!.reason, /may already have run/);
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), [], 'nothing ran while waiting');
    const done = await t.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: 'call_cmd', inputHash: uncertain!.input_hash },
    ]);
    assert.equal((await done!.done).state, 'completed');
    assert.deepEqual(lines(path.join(t.workspace, 'log.txt')), ['x'], 'ran once, after the user said so');
    const tools = (await t.store.loadSnapshot(h.runId))!.snapshot.messages.filter((m) => m.role === 'tool');
    assert.equal(
      tools.find((m) => m.tool_call_id === 'call_read')!.content.includes('readme'),
      true,
      'the read-only call ran',
    );
  });

  it('a fork from post_llm replays the effects its source finished: nothing runs twice', async () => {
    server = await startModelServer({
      scenario: scenario('forked', [
        turn(null, [{ name: 'run_command', arguments: { command: 'echo x >> log.txt' } }]),
        turn('ok'),
      ]),
    });
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } },
    });
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'completed');
    assert.equal(lines(path.join(t.workspace, 'log.txt')).length, 1);
    const post = (await t.store.list(h.runId, { limit: 50 })).find((r) => r.phase === 'post_llm' && r.step === 1)!;
    const fork = await t.store.fork(h.runId, post.seq, t.runner.owner);
    await fork.lease.release();
    assert.equal(
      (await t.store.list(fork.run.run_id, { limit: 1 }))[0]!.parent?.run_id,
      h.runId,
      'the fork points at its source',
    );
    const out = await (await t.runner.resume(fork.run.run_id)).done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.equal(lines(path.join(t.workspace, 'log.txt')).length, 1, 'replayed, not re-run');
    assert.equal((await t.store.loadSnapshot(fork.run.run_id))!.snapshot.replayed_effect_count, 1);
  });

  it('resume with no checkpoint is a CheckpointNotFoundError naming the run', async () => {
    server = await startModelServer({ scenario: scenario('none', [turn('x')]) });
    const { runner } = makeRunner({ baseURL: server.url });
    await assert.rejects(
      runner.resume('no-such-run'),
      (e: Error) => e instanceof CheckpointNotFoundError && e.message.includes('no-such-run'),
    );
  });

  it('a changed extension version or tool set needs explicit confirmation to resume', async () => {
    server = await startModelServer({
      scenario: scenario('ver', [
        turn('w', [{ name: 'write_file', arguments: { path: 'a', content: 'a' } }]),
        turn('ok'),
      ]),
    });
    const store = makeRunner({ baseURL: server.url }).store;
    const v1 = makeRunner({ baseURL: server.url, store, version: '0.1.0' });
    const h = await v1.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'awaiting_approval');
    await store.setRunState(h.runId, 'interrupted', null).catch(() => undefined);
    const v2 = makeRunner({ baseURL: server.url, store, version: '0.2.0' });
    await assert.rejects(
      v2.runner.resume(h.runId),
      (e: Error) => e instanceof ResumeNeedsConfirmationError && /0\.1\.0/.test(e.message),
    );
    const out = await (await v2.runner.resume(h.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval', 'confirmed: it continues (and still waits for the approval)');
  });
});

describe('agent loop: bounded execution, cancel, failures', function () {
  this.timeout(60_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  const loopScenario = () =>
    scenario('loop', [
      ...[0, 1, 2, 3].map((i) => turn(`step ${i}`, [{ name: 'list_files', arguments: { path: '.' } }])),
      turn('finished'),
    ]);

  it('max steps pauses with a checkpoint; resume with a raised budget finishes', async () => {
    server = await startModelServer({ scenario: loopScenario() });
    const { runner, store } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't', budget: { max_steps: 2 } });
    const paused = await h.done;
    assert.equal(paused.state, 'paused_budget');
    assert.match(paused.detail!, /step budget/);
    assert.equal((await store.getRun(h.runId))!.state, 'paused_budget');
    assert.equal(server.stats().total, 2);
    const out = await (await runner.resume(h.runId, { budget: { max_steps: 10 } })).done;
    assert.equal(out.state, 'completed');
    assert.equal(server.stats().total, 5, 'no step ran twice');
  });

  it('max tokens pauses too', async () => {
    server = await startModelServer({ scenario: loopScenario() });
    const { runner } = makeRunner({ baseURL: server.url });
    const out = await (await runner.start({ task: 't', budget: { max_steps: null, max_tokens: 1 } })).done;
    assert.equal(out.state, 'paused_budget');
    assert.match(out.detail!, /token budget/);
  });

  it('cancel pauses resumably; resume completes without repeating finished work', async () => {
    server = await startModelServer({
      scenario: scenario('slow', [
        {
          fault: { kind: 'slow', delay_ms: 1500 },
          times: 1,
          reply: { content: 'a', tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] },
        },
        turn('finished'),
      ]),
    });
    const { runner } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't' });
    setTimeout(() => runner.cancel(h.runId), 300);
    const paused = await h.done;
    assert.equal(paused.state, 'paused_cancelled');
    const out = await (await runner.resume(h.runId)).done;
    assert.equal(out.state, 'completed');
  });

  it('a provider that keeps failing pauses the run (paused_error) with the reason; resume retries', async () => {
    server = await startModelServer({
      scenario: scenario('down', [{ fault: { kind: 'http_500' }, times: 3, reply: { content: 'back' } }]),
    });
    const { runner } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 't' });
    const paused = await h.done;
    assert.equal(paused.state, 'paused_error');
    assert.match(paused.detail!, /500|server/i);
    const out = await (await runner.resume(h.runId)).done;
    assert.equal(out.state, 'completed');
  });

  it('a store write failure pauses the run; nothing in memory is the only copy', async () => {
    server = await startModelServer({
      scenario: scenario('wf', [turn('a', [{ name: 'list_files', arguments: { path: '.' } }]), turn('done')]),
    });
    const base = makeRunner({ baseURL: server.url });
    let failNext = false;
    const flaky = new Proxy(base.store, {
      get(target, prop, recv) {
        const v = Reflect.get(target, prop, recv);
        if (prop === 'append' && typeof v === 'function') {
          return async (...args: unknown[]) => {
            if (failNext && (args[1] as { phase: string }).phase === 'pre_tool_batch') {
              failNext = false;
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            }
            return v.apply(target, args);
          };
        }
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    failNext = true;
    const { runner } = makeRunner({ baseURL: server.url, store: flaky });
    const h = await runner.start({ task: 't' });
    const paused = await h.done;
    assert.equal(paused.state, 'paused_error');
    assert.match(paused.detail!, /ENOSPC/);
    const out = await (await runner.resume(h.runId)).done;
    assert.equal(out.state, 'completed');
    assert.equal(server.stats().per_turn['main#0'], 1, 'the durable post_llm was the resume point: no second LLM call');
  });
});
