// Check model connection against the scripted server made to fail each way a real one does.
import assert from 'node:assert/strict';
import { createProvider } from '../../../src/runner/provider';
import { CHECK_PROMPT, checkConnection, CHECK_TOOL_NAME } from '../../../src/runner/provider/check';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer, type ModelServerOptions } from '../../fixtures/modelServer/server';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const checkScenario = (reply: NonNullable<ScenarioInput['turns'][number]['reply']>): ScenarioInput => ({
  name: 'check',
  description: 'offline demo model: answers a connection check',
  turns: [{ reply: { content: '(offline demo model) not a check' } }],
  subconversations: [{ id: 'check', user_contains: 'Agent Waypoints connection check', turns: [{ reply }] }],
});
const CALLS_TOOL = checkScenario({ tool_calls: [{ name: CHECK_TOOL_NAME, arguments: { ok: true } }] });

describe('check model connection', function () {
  this.timeout(20_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const check = async (
    opts: Omit<ModelServerOptions, 'scenario'> & { scenario?: ScenarioInput },
    model = 'waypoints-demo-model',
    apiKey?: string,
  ) => {
    server = await startModelServer({ scenario: CALLS_TOOL, ...opts });
    const provider = createProvider({
      baseURL: server.url,
      model,
      maxRetries: 0,
      timeoutMs: 3000,
      ...(apiKey ? { apiKey } : {}),
    });
    return checkConnection(provider, server.url);
  };

  it('the prompt names the tool', () => assert.ok(CHECK_PROMPT.includes(CHECK_TOOL_NAME)));

  it('passes when the server answers, takes the key and the model calls the tool', async () => {
    const r = await check({ apiKey: 'sk-right' }, 'waypoints-demo-model', 'sk-right');
    assert.deepEqual(
      { ok: r.ok, problem: r.problem, models: r.models },
      { ok: true, problem: null, models: ['waypoints-demo-model'] },
    );
    assert.equal(r.message, `Connected: \`waypoints-demo-model\` at ${server!.url} answered and called a tool.`);
    assert.deepEqual(
      server!.requests.map((q) => [q.conversation, q.tool_names]),
      [['check', [CHECK_TOOL_NAME]]],
    );
  });

  it('401: the API key was refused', async () => {
    const r = await check({ apiKey: 'sk-right' }, 'waypoints-demo-model', 'sk-wrong');
    assert.equal(r.problem, 'auth');
    assert.equal(
      r.message,
      `401: the API key was refused by ${server!.url}. Set the right one with “Agent Waypoints: Set API key”.`,
    );
    assert.equal(server!.requests.length, 0, 'stopped at GET /models');
  });

  it('model not found: names the models the server offers', async () => {
    const r = await check({ models: ['llama3.1:8b', 'qwen2.5-coder:7b'] }, 'gpt-4.1-mini');
    assert.equal(r.problem, 'model_not_found');
    assert.equal(r.message, 'Model `gpt-4.1-mini` not found; the server offers: llama3.1:8b, qwen2.5-coder:7b.');
  });

  it('a model the server refuses tools for: does not call tools', async () => {
    const r = await check({ rejectTools: true });
    assert.equal(r.problem, 'no_tools');
    assert.match(
      r.message,
      /^This model does not call tools: .* refused a request with tools for `waypoints-demo-model`\. .*does not support tools/,
    );
  });

  it('a model that answers in text instead of calling the tool: does not call tools', async () => {
    const r = await check({ scenario: checkScenario({ content: 'OK, the check passed.' }) });
    assert.equal(r.problem, 'no_tools');
    assert.match(
      r.message,
      /^This model does not call tools: `waypoints-demo-model` at .* answered “OK, the check passed\.” instead of calling the check tool\./,
    );
  });

  it('nothing listening at the base URL: unreachable', async () => {
    const tmp = http.createServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const port = (tmp.address() as AddressInfo).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    const baseURL = `http://127.0.0.1:${port}/v1`;
    const r = await checkConnection(createProvider({ baseURL, model: 'm', maxRetries: 0, timeoutMs: 3000 }), baseURL);
    assert.equal(r.problem, 'unreachable');
    assert.equal(
      r.message,
      `Cannot reach ${baseURL}: Connection error. Check agentWaypoints.provider.baseUrl and that the server is running.`,
    );
  });
});
