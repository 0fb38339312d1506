// The done-when of issue 19, end to end: a 300-step scripted run whose tool outputs add up to many
// times a 16k-token window, against the scripted server enforcing that window exactly as OpenAI
// does (HTTP 400 context_length_exceeded), with the real openai client, runner and tools.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { WindowField } from '../../fixtures/modelServer/window';
import { makeRunner, tmp } from '../loop/support';
import { effectLines, expectedEffects, longScenario, prepareWorkspace } from './longRun';

const WINDOW = 16_384;
const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

/** The main conversation's requests never got two context errors in a row. */
function maxOverflowsInARow(server: ModelServer): number {
  let run = 0;
  let max = 0;
  for (const r of server.requests.filter((q) => !q.condense)) {
    run = r.overflow ? run + 1 : 0;
    max = Math.max(max, run);
  }
  return max;
}

async function longRun(o: { steps: number; windowField: WindowField; contextWindows?: Record<string, number> }) {
  const server = await startModelServer({
    scenario: longScenario(o.steps),
    contextWindow: WINDOW,
    windowField: o.windowField,
  });
  const workspace = tmp('long-run');
  prepareWorkspace(workspace);
  const { runner, store } = makeRunner({
    baseURL: server.url,
    workspace,
    policy: AUTO,
    deps: {
      defaultBudget: { max_steps: o.steps + 5, max_cost_usd: null, max_tokens: null, max_wall_ms: null },
      ...(o.contextWindows ? { context: { windows: o.contextWindows } } : {}),
    },
  });
  const handle = await runner.start({ task: 'Work through every step of the long task.' });
  const out = await handle.done;
  return { server, workspace, store, runId: handle.runId, out };
}

describe('context management: long runs fit the model', function () {
  this.timeout(600_000);
  const servers: ModelServer[] = [];
  after(async () => Promise.all(servers.map((s) => s.close())));

  it('a 300-step run whose outputs are many times a 16k window completes: every effect once, never two context errors in a row, the whole history kept', async () => {
    const r = await longRun({ steps: 300, windowField: 'vllm' });
    servers.push(r.server);
    assert.equal(r.out.state, 'completed', r.out.detail ?? '');
    assert.deepEqual(effectLines(r.workspace), expectedEffects(300), 'each effect exactly once, in order');
    const snap = (await r.store.loadSnapshot(r.runId)).snapshot;
    const outputs = snap.messages.filter((m) => m.role === 'tool');
    assert.equal(outputs.length, 300, 'every tool output is in the stored history');
    const outputChars = outputs.reduce((n, m) => n + m.content.length, 0);
    assert.ok(outputChars > 20 * WINDOW * 4, `outputs ${outputChars} chars ≫ the window`);
    assert.ok(
      outputs.every((m) => m.content.length > 4000),
      'the stored outputs are whole, not stubs',
    );
    const main = r.server.requests.filter((q) => !q.condense);
    assert.ok(
      main.every((q) => (q.prompt_tokens ?? 0) <= WINDOW),
      'every request fit the window',
    );
    assert.equal(maxOverflowsInARow(r.server), 0, 'the window was known from GET /models: no context error at all');
    const condenses = r.server.requests.filter((q) => q.condense);
    assert.ok(condenses.length >= 2, `condensed ${condenses.length} times`);
    const records = (await r.store.list(r.runId, { limit: 100_000 })).reverse();
    const post = records.filter((x) => x.phase === 'post_condense');
    assert.ok(post.length >= 2 && post.length <= condenses.length);
    assert.equal(new Set(post.map((x) => x.payload.condense_id)).size, post.length, 'each condense recorded once');
    // The ledger: every request's entry is on its post_llm checkpoint, and the totals add up.
    const postLlm = records.filter((x) => x.phase === 'post_llm');
    const sum = [...postLlm, ...post].reduce(
      (n, x) => n + ((x.payload.usage as { total_tokens?: number } | null)?.total_tokens ?? 0),
      0,
    );
    assert.equal(snap.usage.total_tokens, sum, 'run total = the sum of the per-request ledger entries');
    assert.equal(snap.llm_calls, r.server.requests.length);
  });

  it('a window the settings overstate: the server refuses once, the run learns the window from the error, condenses and goes on', async () => {
    const r = await longRun({ steps: 60, windowField: 'none', contextWindows: { 'waypoints-demo-model': 65_536 } });
    servers.push(r.server);
    assert.equal(r.out.state, 'completed', r.out.detail ?? '');
    assert.deepEqual(effectLines(r.workspace), expectedEffects(60));
    const overflows = r.server.requests.filter((q) => q.overflow);
    assert.ok(overflows.length >= 1, 'the server enforced its window');
    assert.equal(maxOverflowsInARow(r.server), 1, 'never two context errors in a row');
    const refused = r.server.requests.findIndex((q) => q.overflow && !q.condense);
    const next = r.server.requests.slice(refused + 1).find((q) => !q.condense)!;
    assert.ok(
      next.prompt_tokens! < r.server.requests[refused]!.prompt_tokens!,
      'the retry is smaller, never the same request',
    );
    const records = (await r.store.list(r.runId, { limit: 100_000 })).reverse();
    assert.ok(
      records.some((x) => x.phase === 'pre_llm' && x.payload.retry === 'context_length_exceeded'),
      'the retry is its own pre_llm checkpoint',
    );
    const snap = (await r.store.loadSnapshot(r.runId)).snapshot;
    assert.equal(snap.model_context?.learned_window, WINDOW, "the window from OpenAI's error message");
  });
});
