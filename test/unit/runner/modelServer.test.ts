// The scripted server itself: scenario files, position matching, request counting, labelling.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { listScenarioNames, loadScenario, Scenario } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { CODING_TOOLS } from '../../../src/runner/tools';
import { CHECK_TOOL_NAME } from '../../../src/runner/provider/check';
import { rmrf, tmpDir } from './helpers';

const post = (s: ModelServer, body: unknown) =>
  fetch(`${s.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const convo = (assistantTurns: number, firstUser = 'task') => {
  const m: Array<{ role: string; content: string | null }> = [{ role: 'user', content: firstUser }];
  for (let i = 0; i < assistantTurns; i++)
    m.push({ role: 'assistant', content: `a${i}` }, { role: 'user', content: `u${i}` });
  return m;
};

const scenario = Scenario.parse({
  name: 'positions',
  description: 't',
  turns: [
    { reply: { content: 'offline demo model: zero' } },
    { fault: { kind: 'http_500' }, times: 2, reply: { content: 'offline demo model: one' } },
    { reply: { content: 'offline demo model: two' } },
  ],
  subconversations: [
    { id: 'child', user_contains: 'SUBTASK', turns: [{ reply: { content: 'offline demo model: child zero' } }] },
  ],
});

describe('test fixture: scripted model server', () => {
  it('every scenario file parses, and every tool call in them names a real tool with valid arguments', () => {
    const names = listScenarioNames();
    assert.deepEqual(names, ['append', 'approval', 'delegate', 'demo', 'faults']);
    const tools = new Map(CODING_TOOLS.map((t) => [t.name, t]));
    for (const name of names) {
      const s = loadScenario(name);
      assert.equal(s.model, 'waypoints-demo-model');
      for (const turn of [...s.turns, ...s.subconversations.flatMap((c) => c.turns)]) {
        if (turn.reply?.content) assert.match(turn.reply.content, /offline demo model/, `${name}: text is labelled`);
        for (const tc of turn.reply?.tool_calls ?? []) {
          if (name === 'faults') continue; // faults.json is broken on purpose
          if (tc.name === CHECK_TOOL_NAME) continue; // "Check model connection" offers its own tool
          assert.ok(tools.has(tc.name), `${name}: ${tc.name}`);
          assert.ok(
            tools.get(tc.name)?.args.safeParse(tc.arguments).success,
            `${name}: ${tc.name} ${JSON.stringify(tc.arguments)}`,
          );
        }
      }
    }
  });

  it('a broken scenario file is refused with a message naming it', () => {
    const dir = tmpDir();
    const bad = path.join(dir, 'bad-scenario.json');
    fs.writeFileSync(
      bad,
      JSON.stringify({ name: 'x', description: 'y', turns: [{ fault: { kind: 'http_500' }, times: 1 }] }),
    );
    try {
      assert.throws(() => loadScenario(bad), /Invalid scenario .*bad-scenario\.json[\s\S]*needs a reply/);
    } finally {
      rmrf(dir);
    }
  });

  describe('serving', () => {
    let s: ModelServer;
    beforeEach(async () => (s = await startModelServer({ scenario })));
    afterEach(() => s.close());

    it('matches turns by conversation position, not by a global counter', async () => {
      const text = async (r: Response) =>
        ((await r.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content;
      assert.equal(await text(await post(s, { messages: convo(2) })), 'offline demo model: two');
      assert.equal(await text(await post(s, { messages: convo(0) })), 'offline demo model: zero');
      // A "resumed" client re-sending position 0 gets the same turn again.
      assert.equal(await text(await post(s, { messages: convo(0) })), 'offline demo model: zero');
      assert.deepEqual(s.stats(), { total: 3, per_turn: { 'main#2': 1, 'main#0': 2 }, unscripted: 0 });
    });

    it('a fault with times: N fails N times at its position, then serves the reply', async () => {
      assert.equal((await post(s, { messages: convo(1) })).status, 500);
      assert.equal((await post(s, { messages: convo(1) })).status, 500);
      const third = await post(s, { messages: convo(1) });
      assert.equal(third.status, 200);
      assert.deepEqual(
        s.requests.map((r) => [r.position, r.attempt, r.fault]),
        [
          [1, 1, 'http_500'],
          [1, 2, 'http_500'],
          [1, 3, null],
        ],
      );
    });

    it('routes a subconversation by its first user message', async () => {
      const r = (await (await post(s, { messages: convo(0, 'please do SUBTASK now') })).json()) as {
        choices: Array<{ message: { content: string } }>;
      };
      assert.equal(r.choices[0]?.message.content, 'offline demo model: child zero');
      assert.equal(s.requests[0]?.conversation, 'child');
    });

    it('exposes /_stats and /v1/models, neither counted as LLM calls; /_reset clears', async () => {
      await post(s, { messages: convo(0) });
      const stats = await (await fetch(`http://127.0.0.1:${s.port}/_stats`)).json();
      assert.deepEqual(stats, { total: 1, per_turn: { 'main#0': 1 }, unscripted: 0 });
      const models = (await (await fetch(`${s.url}/models`)).json()) as {
        data: Array<{ id: string; owned_by: string }>;
      };
      assert.deepEqual(
        models.data.map((m) => m.id),
        ['waypoints-demo-model'],
      );
      assert.equal(s.requests.length, 1);
      await fetch(`http://127.0.0.1:${s.port}/_reset`, { method: 'POST' });
      assert.equal(s.stats().total, 0);
    });

    it('labels itself as the offline demo model', async () => {
      const r = await post(s, { messages: convo(0) });
      assert.match(r.headers.get('x-waypoints-model-server') ?? '', /offline demo model/);
      const body = (await r.json()) as { system_fingerprint: string; model: string };
      assert.equal(body.system_fingerprint, 'waypoints-offline-demo');
      assert.equal(body.model, 'waypoints-demo-model');
    });

    it('streams SSE chunks ending in [DONE], tool-call arguments split across chunks', async () => {
      await s.close();
      s = await startModelServer({
        scenario: Scenario.parse({
          name: 'sse',
          description: 't',
          turns: [
            { reply: { content: null, tool_calls: [{ name: 'read_file', arguments: { path: 'a/long/path.ts' } }] } },
          ],
        }),
      });
      const text = await (
        await post(s, { stream: true, stream_options: { include_usage: true }, messages: convo(0) })
      ).text();
      const events = text.split('\n\n').filter(Boolean);
      assert.equal(events.at(-1), 'data: [DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
      const argPieces = chunks.flatMap((c) =>
        c.choices.flatMap(
          (ch: { delta: { tool_calls?: Array<{ function: { arguments?: string } }> } }) => ch.delta.tool_calls ?? [],
        ),
      );
      assert.ok(argPieces.length > 3, 'arguments arrive in several deltas');
      assert.equal(
        argPieces.map((p: { function: { arguments?: string } }) => p.function.arguments ?? '').join(''),
        '{"path":"a/long/path.ts"}',
      );
      assert.ok(chunks.at(-1).usage && chunks.at(-1).choices.length === 0, 'usage chunk last');
    });

    it('a malformed request body gets HTTP 400', async () => {
      const r = await fetch(`${s.url}/chat/completions`, { method: 'POST', body: '{nope' });
      assert.equal(r.status, 400);
    });
  });
});
