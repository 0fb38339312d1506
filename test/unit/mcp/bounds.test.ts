// MCP calls through the real runner against the scripted server (test/fixtures/mcp/scripted.mjs):
// what a stdio server may see of the host's environment, how long a call may last whatever the
// server sends, and what the model reads when the server answers with an error.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import type { ServerDef } from '../../../src/runner/mcp/config';
import { defs, scriptedStdio } from '../../support/mcpServers';
import { closeServers, mcpRunner, type McpTestRunner } from './support';

const scenario = (name: string, args: Record<string, unknown> = {}): ScenarioInput => ({
  name: 'mcp-bounds',
  description: 'one call of the scripted server, then an answer',
  turns: [
    { reply: { content: 'Calling it.', tool_calls: [{ name: `scripted__${name}`, arguments: args }] } },
    { reply: { content: 'Done.' } },
  ],
});

/** Every tool of the scripted server always allowed (bound to its identity, as the user's list would be). */
const allowAll = (servers: ServerDef[]) =>
  ['env', 'forever', 'cancelled', 'fail', 'big', 'match'].map((tool) => ({
    server: 'scripted',
    tool,
    identity: servers[0]!.identity,
  }));

describe('MCP calls: bounded and honest (scripted server, real runner)', function () {
  this.timeout(60_000);
  let model: ModelServer | undefined;
  const runners: McpTestRunner[] = [];
  const saved = { ...process.env };
  afterEach(async () => {
    await closeServers(...runners.splice(0));
    await model?.close();
    model = undefined;
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  });

  /** Runs one call to the end and returns what the model was sent as its result. */
  async function runCall(name: string, args: Record<string, unknown>, servers: ServerDef[], callTimeoutMs?: number) {
    model = await startModelServer({ scenario: scenario(name, args) });
    const r = mcpRunner({
      baseURL: model.url,
      servers,
      rules: allowAll(servers),
      ...(callTimeoutMs ? { callTimeoutMs } : {}),
    });
    runners.push(r);
    const h = await r.runner.start({ task: `call ${name}` });
    assert.equal((await h.done).state, 'completed');
    const [effect] = await r.store.listEffects(h.runId);
    const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')!.content!;
    return { r, runId: h.runId, effect: effect!, sent };
  }

  it("a stdio server sees only the environment its definition names, never the host's keys", async () => {
    process.env.OPENAI_API_KEY = 'sk-host-secret';
    process.env.AW_TEST_TOKEN = 'aw-host-secret';
    process.env.GITHUB_TOKEN = 'ghp-host-secret';
    process.env.AW_NAMED = 'named-by-config';
    const servers = defs({ scripted: scriptedStdio({ PASSED: '${env:AW_NAMED}', LITERAL: 'x' }) });
    const { sent } = await runCall('env', {}, servers);
    const env = JSON.parse(sent) as Record<string, string>;
    assert.equal(env.PASSED, 'named-by-config', 'a variable the definition names');
    assert.equal(env.LITERAL, 'x');
    assert.equal(env.PATH, process.env.PATH, 'the minimal base');
    assert.equal(env.HOME, process.env.HOME);
    for (const leaked of ['OPENAI_API_KEY', 'AW_TEST_TOKEN', 'GITHUB_TOKEN', 'AW_NAMED'])
      assert.equal(env[leaked], undefined, `${leaked} reached the server`);
    assert.ok(!sent.includes('host-secret'), 'no value of the host reached the server');
  });
});
