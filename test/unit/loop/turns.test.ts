// Follow-up turns and the inbox, end to end: the real runner, real HTTP to the scripted model,
// the memory store. What the model is shown is checked on the server side.
import assert from 'node:assert/strict';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import type { AgentRunner } from '../../../src/runner/runner';
import { lines, makeRunner } from './support';

const reply = (
  content: string | null,
  calls: { name: string; arguments: Record<string, unknown> }[] = [],
  extra: Partial<Scenario['turns'][number]> = {},
) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
  ...extra,
});
const scenario = (name: string, turns: Scenario['turns']): Scenario => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  turns,
  subconversations: [],
});
const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

/** Sends `text` once the model call of `step` has begun (the run is working). */
function sendDuringStep(runner: AgentRunner, runId: () => string, step: number, text: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sub = runner.events.on((e) => {
      if (e.type !== 'llm' || e.status !== 'start' || e.runId !== runId() || e.step !== step) return;
      sub.dispose();
      runner.send(runId(), text).then(resolve, reject);
    });
  });
}

const userTexts = (s: ModelServer, i: number) =>
  s.requests[i]!.messages.filter((m) => m.role === 'user').map((m) => m.content);

describe('agent loop: follow-up turns and the inbox', function () {
  this.timeout(60_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a message sent while the run works is delivered at the next step boundary, exactly once', async () => {
    server = await startModelServer({
      scenario: scenario('inbox', [
        reply('Looking.', [{ name: 'list_files', arguments: { path: '.' } }], { chunk_delay_ms: 30 }),
        reply('Listed, and noted your message.'),
      ]),
    });
    const { runner, store } = makeRunner({ baseURL: server.url, policy: AUTO });
    let id = '';
    const sent = sendDuringStep(runner, () => id, 1, 'please also count them');
    const handle = await runner.start({ task: 'list the files' });
    id = handle.runId;
    const outcome = (await sent) as { kind: string; when: string };
    assert.deepEqual([outcome.kind, outcome.when], ['queued', 'next-step']);
    assert.equal((await handle.done).state, 'completed');
    assert.deepEqual(userTexts(server, 0), ['list the files'], 'not in the step it was sent during');
    const second = server.requests[1]!.messages;
    assert.deepEqual(
      second.slice(-2).map((m) => m.role),
      ['tool', 'user'],
      'after the tool result, before the next model call',
    );
    assert.equal(second.at(-1)!.content, 'please also count them');
    const [msg] = await store.listInbox(id);
    assert.equal(msg!.delivered?.step, 2);
    const messages = (await store.loadSnapshot(id)).snapshot.messages;
    assert.equal(messages.filter((m) => m.role === 'user' && m.content === 'please also count them').length, 1, 'once');
  });

  it('a message sent while the model writes its final answer makes the run take one more step', async () => {
    server = await startModelServer({
      scenario: scenario('late', [
        reply('All done, I think.', [], { chunk_delay_ms: 30 }),
        reply('Now answered your late message too.'),
      ]),
    });
    const { runner } = makeRunner({ baseURL: server.url, policy: AUTO });
    let id = '';
    const sent = sendDuringStep(runner, () => id, 1, 'one more thing');
    const handle = await runner.start({ task: 'say hi' });
    id = handle.runId;
    await sent;
    const out = await handle.done;
    assert.equal(out.state, 'completed');
    assert.equal(out.finalText, 'Now answered your late message too.');
    assert.deepEqual(userTexts(server, 1), ['say hi', 'one more thing']);
  });

  it('a follow-up on a finished run is a new run in the same thread; the model sees the earlier conversation', async () => {
    server = await startModelServer({
      scenario: scenario('follow-up', [reply('First answer.'), reply('Second answer, knowing the first.')]),
    });
    const { runner, store } = makeRunner({ baseURL: server.url, policy: AUTO });
    const first = await runner.start({ task: 'first question' });
    await first.done;
    const before = (await store.getRun(first.runId))!;
    const out = await runner.send(first.runId, 'second question');
    assert.equal(out.kind, 'follow-up');
    const next = out.kind === 'follow-up' ? out.handle : undefined;
    assert.equal((await next!.done).state, 'completed');
    const run = (await store.getRun(next!.runId))!;
    assert.equal(run.thread_id, before.thread_id, 'same thread');
    assert.deepEqual(
      run.continued_from,
      { run_id: first.runId, seq: before.last_seq },
      'continues from the previous run’s last checkpoint',
    );
    assert.deepEqual((await store.get(run.run_id, 1))?.parent, run.continued_from);
    const seen = server.requests[1]!.messages;
    assert.deepEqual(
      seen.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]),
      [
        ['user', 'first question'],
        ['assistant', 'First answer.'],
        ['user', 'second question'],
      ],
    );
    assert.deepEqual(await store.getRun(first.runId), before, 'the first run is unchanged');
  });

  it('a follow-up from a run paused after its tool batch replays the finished command: it never runs twice', async () => {
    server = await startModelServer({
      scenario: scenario('paused', [
        reply('Recording.', [{ name: 'run_command', arguments: { command: 'echo once >> effects.txt' } }]),
        reply('Recorded, and read your note.'),
      ]),
    });
    const { runner, store, workspace } = makeRunner({ baseURL: server.url, policy: AUTO });
    const first = await runner.start({ task: 'record once', budget: { max_steps: 1 } });
    assert.equal((await first.done).state, 'paused_budget');
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['once']);
    const out = await runner.send(first.runId, 'a note');
    assert.equal(out.kind, 'follow-up');
    const next = out.kind === 'follow-up' ? out.handle : undefined;
    assert.equal((await next!.done).state, 'completed');
    assert.deepEqual(lines(path.join(workspace, 'effects.txt')), ['once'], 'replayed from the carried effect record');
    assert.equal(server.stats().total, 2, 'no second request for the first turn');
    assert.deepEqual(userTexts(server, 1), ['record once', 'a note']);
    assert.equal((await store.getRun(first.runId))?.state, 'paused_budget', 'the paused run stays as it was');
  });

  it('a message to a run waiting for approval is queued and delivered when it continues', async () => {
    server = await startModelServer({
      scenario: scenario('approval', [
        reply('Writing.', [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }]),
        reply('Wrote it; saw your message.'),
      ]),
    });
    const { runner, store } = makeRunner({ baseURL: server.url });
    const h = await runner.start({ task: 'write a.txt' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const out = await runner.send(h.runId, 'and be quick');
    assert.deepEqual(out.kind === 'queued' ? out.when : out.kind, 'after-approvals');
    assert.equal(server.stats().total, 1, 'nothing ran');
    const [approval] = await store.listApprovals(h.runId, { pendingOnly: true });
    const resumed = await runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    assert.deepEqual(userTexts(server, 1), ['write a.txt', 'and be quick']);
  });
});
