// The provider against the scripted server over real HTTP: streaming and not, tool-call assembly,
// usage and cost, Azure-style configuration.
import assert from 'node:assert/strict';
import { createProvider, PLACEHOLDER_API_KEY, type ProviderConfig } from '../../../src/runner/provider';
import type { ChatMessage } from '../../../src/store/api/schema';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { Scenario } from '../../fixtures/modelServer/scenario';

const scenario = {
  name: 'provider-basics',
  description: 'test',
  turns: [
    {
      reply: {
        content: 'offline demo model: reading two files',
        tool_calls: [
          { name: 'read_file', arguments: { path: 'src/a.ts', start_line: 1, end_line: 40 } },
          { id: 'call_fixed', name: 'search_text', arguments: { pattern: 'export\\s+function', glob: '**/*.ts' } },
        ],
      },
    },
    {
      reply: {
        content: 'offline demo model: all done — ünïcödé ✓',
        usage: { prompt_tokens: 1000, completion_tokens: 500 },
      },
    },
  ],
} satisfies Partial<Scenario> as unknown as Scenario;

const user: ChatMessage[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'do it' },
];
const afterTools: ChatMessage[] = [
  ...user,
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'x' },
];

describe('runner/provider (scripted server)', () => {
  let server: ModelServer;
  const cfg = (over: Partial<ProviderConfig> = {}): ProviderConfig => ({
    baseURL: server.url,
    model: 'waypoints-demo-model',
    maxRetries: 0,
    timeoutMs: 5000,
    ...over,
  });

  beforeEach(async () => {
    server = await startModelServer({ scenario });
  });
  afterEach(async () => {
    await server.close();
  });

  for (const stream of [true, false]) {
    it(`assembles tool calls into complete ToolCalls (${stream ? 'streaming' : 'non-streaming'})`, async () => {
      const p = createProvider(cfg({ stream }));
      const r = await p.complete({ messages: user });
      assert.equal(r.response.finish_reason, 'tool_calls');
      assert.equal(r.response.message.content, 'offline demo model: reading two files');
      const calls = r.response.message.tool_calls ?? [];
      assert.equal(calls.length, 2);
      assert.deepEqual(calls[0], {
        id: 'call_main_0_0',
        type: 'function',
        function: { name: 'read_file', arguments: JSON.stringify({ path: 'src/a.ts', start_line: 1, end_line: 40 }) },
      });
      assert.equal(calls[1]?.id, 'call_fixed');
      assert.deepEqual(JSON.parse(calls[1]?.function.arguments ?? ''), {
        pattern: 'export\\s+function',
        glob: '**/*.ts',
      });
      assert.equal(r.response.id, 'chatcmpl-main_0');
      assert.equal(r.response.model, 'waypoints-demo-model');
      assert.ok(r.response.usage && r.response.usage.input_tokens > 0 && r.response.usage.output_tokens > 0);
      assert.equal(r.provider_adapter, 'openai-compatible');
      assert.equal(server.requests[0]?.stream, stream);
    });
  }

  it('streams text through onText and returns the same text', async () => {
    const p = createProvider(cfg());
    const deltas: string[] = [];
    const r = await p.complete({ messages: afterTools, onText: (d) => deltas.push(d) });
    assert.ok(deltas.length > 1, 'text arrives in several chunks');
    assert.equal(deltas.join(''), 'offline demo model: all done — ünïcödé ✓');
    assert.equal(r.response.message.content, deltas.join(''));
    assert.equal(r.response.finish_reason, 'stop');
    assert.equal(r.response.message.tool_calls, undefined);
  });

  it('reports usage and prices it from a configured table', async () => {
    const p = createProvider(
      cfg({ model: 'My-Model', prices: { 'my-model': { input_per_mtok: 2, output_per_mtok: 10 } } }),
    );
    const r = await p.complete({ messages: afterTools });
    assert.deepEqual(r.response.usage, { input_tokens: 1000, output_tokens: 500, total_tokens: 1500 });
    assert.ok(Math.abs((r.cost_usd ?? -1) - (1000 * 2 + 500 * 10) / 1e6) < 1e-12);
    assert.equal(r.requested_model, 'My-Model');
    assert.equal(r.normalized_model, 'my-model');
  });

  it('an unknown model costs null (unknown), not 0; the demo model costs 0', async () => {
    const unknown = await createProvider(cfg({ model: 'mystery-model-7b' })).complete({ messages: afterTools });
    assert.equal(unknown.cost_usd, null);
    assert.ok(unknown.response.usage, 'usage is still reported');
    const demo = await createProvider(cfg()).complete({ messages: afterTools });
    assert.equal(demo.cost_usd, 0);
  });

  it('usage without include_usage support: no usage chunk → usage null, cost null', async () => {
    const r = await createProvider(cfg({ streamUsage: false })).complete({ messages: afterTools });
    assert.equal(r.response.usage, null);
    assert.equal(r.cost_usd, null);
  });

  it('sends the tools, the model and a placeholder key when none is configured', async () => {
    const p = createProvider(cfg());
    const tools = [
      { type: 'function' as const, function: { name: 'read_file', parameters: { type: 'object', properties: {} } } },
    ];
    await p.complete({ messages: user, tools });
    const rec = server.requests[0];
    assert.deepEqual(rec?.tool_names, ['read_file']);
    assert.equal(rec?.model, 'waypoints-demo-model');
    assert.deepEqual(rec?.auth, { scheme: 'bearer', key: PLACEHOLDER_API_KEY });
  });

  it('Azure style: api-key header instead of Bearer, api-version query on every request', async () => {
    const p = createProvider(
      cfg({ apiKey: 'azure-secret-key', authHeader: 'api-key', defaultQuery: { 'api-version': '2024-10-21' } }),
    );
    await p.complete({ messages: user });
    const rec = server.requests[0];
    assert.deepEqual(rec?.auth, { scheme: 'api-key', key: 'azure-secret-key' });
    assert.match(rec?.url ?? '', /\/chat\/completions\?api-version=2024-10-21$/);
  });

  it('a resend of the same conversation gets the same response (position matching)', async () => {
    const p = createProvider(cfg());
    const a = await p.complete({ messages: user });
    const b = await p.complete({ messages: user });
    assert.deepEqual(a.response.message, b.response.message);
    assert.equal(server.stats().per_turn['main#0'], 2);
  });

  it('listModels lists the demo model', async () => {
    assert.deepEqual(await createProvider(cfg()).listModels(), ['waypoints-demo-model']);
    assert.equal(server.requests.length, 0, '/models is not an LLM call');
  });

  it('requires a base URL and a model', () => {
    assert.throws(() => createProvider({ baseURL: '', model: 'm' }), /baseURL/);
    assert.throws(() => createProvider({ baseURL: 'http://x', model: '' }), /model/);
  });
});
