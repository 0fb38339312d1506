// The recorded responses of real servers through the product's own run loop (AgentRunner →
// RunExecution): each response is stored at post_llm exactly as assembled, its tool calls run
// once, their results go back with matching ids, and what is sent back never carries the
// model's reasoning as content. Cut-off responses pause resumably; a durable response is never
// requested twice.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createProvider } from '../../../src/runner/provider';
import { ToolRegistry, type Tool } from '../../../src/runner/tools';
import { recordedDir } from '../../fixtures/modelServer/replay';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { RECORDED_TOOLS, RECORDINGS, type Recording } from '../runner/recordings';
import { makeRunner, tmp } from './support';

const FINAL = '(offline demo model) All done.';
const scenarioFor = (r: Recording, replay: Record<string, unknown> = {}): ScenarioInput => ({
  name: 'recorded-run',
  description: `recorded: ${r.file}, then a scripted answer`,
  model: 'waypoints-demo-model',
  turns: [
    { replay: { file: r.file, ...replay } },
    { reply: { content: FINAL, usage: { prompt_tokens: 10, completion_tokens: 5 } } },
  ],
  subconversations: [],
});

/** The recorded tools, counting how often each runs. */
function countingTools(): { registry: ToolRegistry; runs: Map<string, number> } {
  const runs = new Map<string, number>();
  const tools = RECORDED_TOOLS.map((t): Tool => ({
    ...t,
    run: (args, ctx) => (runs.set(t.name, (runs.get(t.name) ?? 0) + 1), t.run(args, ctx)),
  }));
  return { registry: new ToolRegistry(tools), runs };
}

const runnerFor = (
  server: ModelServer,
  r: Recording,
  extra: Parameters<typeof makeRunner>[0] = { baseURL: server.url },
) => {
  const { registry, runs } = countingTools();
  const t = makeRunner({
    ...extra,
    baseURL: server.url,
    deps: {
      tools: registry,
      provider: (model) =>
        createProvider({ baseURL: server.url, model, maxRetries: 0, timeoutMs: 5000, stream: r.stream }),
      ...extra.deps,
    },
  });
  return { ...t, runs };
};

describe('agent loop: recorded responses of real servers', function () {
  this.timeout(30_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  for (const r of RECORDINGS) {
    it(`${r.file}: stored exactly, tools run once, results and the answer go back`, async () => {
      server = await startModelServer({ scenario: scenarioFor(r) });
      const { runner, store, runs } = runnerFor(server, r);
      const reasoning: string[] = [];
      runner.events.on((e) => void (e.type === 'llm-delta' && e.kind === 'reasoning' && reasoning.push(e.delta)));
      const h = await runner.start({ task: 'use the tools' });
      const out = await h.done;
      assert.equal(out.state, 'completed', out.detail ?? '');
      const calls = r.message.tool_calls ?? [];

      const postLlm = (await store.list(h.runId, { limit: 100 })).filter((c) => c.phase === 'post_llm').reverse();
      const first = (await store.loadSnapshot(h.runId, postLlm[0]!.seq))!.snapshot.pending_llm_response!;
      assert.deepEqual(
        { ...first, received_ms: 0 },
        {
          id: r.id,
          model: r.model,
          finish_reason: r.finish_reason,
          message: r.message,
          usage: r.usage,
          received_ms: 0,
        },
      );
      assert.equal(reasoning.join(''), r.stream ? (r.message.reasoning ?? '') : '');

      const snap = (await store.loadSnapshot(h.runId))!.snapshot;
      const toolMessages = snap.messages.filter((m) => m.role === 'tool');
      assert.deepEqual(
        toolMessages.map((m) => m.tool_call_id),
        calls.map((c) => c.id),
      );
      toolMessages.forEach((m, i) =>
        typeof r.tool_outputs[i] === 'string'
          ? assert.equal(m.content, r.tool_outputs[i])
          : assert.match(m.content, r.tool_outputs[i] as RegExp),
      );
      const ran = [...runs.values()].reduce((a, b) => a + b, 0);
      assert.equal(ran, r.tool_outputs.filter((o) => typeof o === 'string').length, 'each valid call ran once');

      if (calls.length === 0) {
        assert.equal(
          out.finalText,
          r.message.content,
          'a final answer without calls ends the run: the answer, not the reasoning',
        );
        assert.equal(server.stats().total, 1);
        return;
      }
      assert.equal(out.finalText, FINAL);
      assert.deepEqual(server.stats().per_turn, { 'main#0': 1, 'main#1': 1 });
      assert.equal(snap.llm_calls, 2);
      if (r.usage) {
        // The run's total is the two ledger entries: the recorded one (with its cached/reasoning parts) and the scripted 10 + 5.
        assert.deepEqual(snap.usage, {
          ...r.usage,
          input_tokens: r.usage.input_tokens + 10,
          output_tokens: r.usage.output_tokens + 5,
          total_tokens: r.usage.total_tokens + 15,
        });
      } else {
        // A server that reported no usage: the request was counted by us, and the total says so.
        assert.equal(snap.usage.estimated, true);
        assert.ok(snap.usage.input_tokens > 10 && snap.usage.output_tokens > 5, JSON.stringify(snap.usage));
      }
      // What went back: the assistant turn as the server sent it, without reasoning as content.
      const sent = server.requests[1]!.raw_messages as Array<Record<string, unknown>>;
      const { reasoning: _r, reasoning_from: from, ...plain } = r.message;
      const echoed = from === 'reasoning_content' ? { ...plain, reasoning_content: r.message.reasoning } : plain;
      assert.deepEqual(sent[2], echoed);
      assert.deepEqual(
        sent.slice(3).map((m) => m.tool_call_id),
        calls.map((c) => c.id),
      );
    });
  }

  it('a response cut off mid-stream pauses the run (no tool runs); resuming asks again and completes', async () => {
    const r = RECORDINGS.find((x) => x.file === 'openai-gpt4o-parallel-toolcalls-split-args.sse')!;
    const bytes = fs.readFileSync(`${recordedDir()}/${r.file}`);
    const cut = bytes.indexOf('"arguments":": 2, "', bytes.indexOf('call_fBSgA47J5VeONggizTIvl7AH'));
    server = await startModelServer({ scenario: scenarioFor(r, { cut_after_bytes: cut, cut_times: 1 }) });
    const { runner, store, runs } = runnerFor(server, r);
    const h = await runner.start({ task: 'use the tools' });
    const paused = await h.done;
    assert.equal(paused.state, 'paused_error');
    assert.match(
      paused.detail ?? '',
      /The model call failed and the run was paused; resume to try again\. The connection to .* closed in the middle of the response/,
    );
    assert.equal(runs.size, 0, 'the complete first call of a cut response did not run');
    assert.equal((await store.loadSnapshot(h.runId))!.snapshot.pending_llm_response, null);
    const done = await (await runner.resume(h.runId)).done;
    assert.equal(done.state, 'completed', done.detail ?? '');
    assert.deepEqual(server.stats().per_turn, { 'main#0': 2, 'main#1': 1 });
    assert.deepEqual(
      [...runs.entries()],
      [
        ['add', 1],
        ['multiply', 1],
      ],
    );
  });

  it('a server that repeats a tool-call id in a later response (Gemini: none at all) gets a unique, stored id', async () => {
    const r = RECORDINGS.find((x) => x.file.startsWith('gemini'))!;
    const scenario = scenarioFor(r);
    scenario.turns.unshift({ replay: { file: r.file } });
    server = await startModelServer({ scenario });
    const { runner, store, runs } = runnerFor(server, r);
    const h = await runner.start({ task: 'twice' });
    assert.equal((await h.done).state, 'completed');
    const snap = (await store.loadSnapshot(h.runId))!.snapshot;
    const ids = snap.messages.flatMap((m) =>
      m.role === 'assistant'
        ? (m.tool_calls ?? []).map((c) => c.id)
        : m.role === 'tool'
          ? [`result:${m.tool_call_id}`]
          : [],
    );
    assert.deepEqual(ids, ['call_noid_0', 'result:call_noid_0', 'call_noid_0~s2.0', 'result:call_noid_0~s2.0']);
    assert.deepEqual(
      snap.tool_executions.map((e) => [e.tool_call_id, e.replayed]),
      [
        ['call_noid_0', false],
        ['call_noid_0~s2.0', false],
      ],
    );
    assert.equal(runs.get('return_list_of_int'), 2, 'the second call ran: it was not mistaken for the first');
  });

  it('a durable response is never requested again: approval pending, a new process resumes and runs its calls', async () => {
    const r = RECORDINGS.find((x) => x.file === 'deepseek-reasoner-toolcall.json')!;
    server = await startModelServer({ scenario: scenarioFor(r) });
    const storeDir = tmp('recorded-store');
    const ask = {
      policy: {
        categories: { read: 'ask' as const, write: 'ask' as const, command: 'ask' as const, subagent: 'auto' as const },
      },
    };
    const first = runnerFor(server, r, { baseURL: server.url, storeDir, ...ask });
    const h = await first.runner.start({ task: 'weather?' });
    assert.equal((await h.done).state, 'awaiting_approval');
    await first.store.close();

    const second = runnerFor(server, r, { baseURL: server.url, storeDir, ...ask });
    const [approval] = await second.store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(approval?.tool_call_id, 'call_00_9V0vrf86Pc9aelHCJMZqnJBo');
    const resumed = await second.runner.decideApprovals(h.runId, [
      { toolCallId: approval.tool_call_id, inputHash: approval.input_hash, kind: 'approve' },
    ]);
    const out = await resumed!.done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.deepEqual(
      server.stats().per_turn,
      { 'main#0': 1, 'main#1': 1 },
      'one request per turn: the stored response was not asked for again',
    );
    assert.deepEqual([...second.runs.entries()], [['weather', 1]]);
    await second.store.close();
  });
});
