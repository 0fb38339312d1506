// MCP calls through the real runner against the scripted server (test/fixtures/mcp/scripted.mjs):
// what a stdio server may see of the host's environment, how long a call may last whatever the
// server sends, and what the model reads when the server answers with an error.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import type { ServerDef } from '../../../src/runner/mcp/config';
import type { ToolCall } from '../../../src/store/api/schema';
import { defs, scriptedStdio } from '../../support/mcpServers';
import { toolCtx } from '../runner/helpers';
import { closeServers, mcpRunner, type McpTestRunner } from './support';

type Call = { name: string; arguments: Record<string, unknown> };
const scenario = (calls: Call[]): ScenarioInput => ({
  name: 'mcp-bounds',
  description: 'calls of the scripted server, then an answer',
  turns: [
    {
      reply: {
        content: 'Calling it.',
        tool_calls: calls.map((c) => ({ name: `scripted__${c.name}`, arguments: c.arguments })),
      },
    },
    { reply: { content: 'Done.' } },
  ],
});

/** Every tool of the scripted server always allowed (bound to its identity, as the user's list would be). */
function toolCall(name: string, args: unknown): ToolCall {
  return {
    id: `call_${Math.random().toString(36).slice(2)}`,
    type: 'function',
    function: { name, arguments: JSON.stringify(args) },
  };
}

/** Polls a condition (each poll is a round trip to the server, so no fixed sleep is needed). */
async function waitFor(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) if (Date.now() > end) throw new Error('condition not met in time');
}

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

  /** Runs the calls (one batch) to the end; returns what the model was sent as their results. */
  async function runCalls(calls: Call[], servers: ServerDef[], timeouts: { idle?: number; total?: number } = {}) {
    model = await startModelServer({ scenario: scenario(calls) });
    const r = mcpRunner({
      baseURL: model.url,
      servers,
      rules: allowAll(servers),
      ...(timeouts.idle ? { callTimeoutMs: timeouts.idle } : {}),
      ...(timeouts.total ? { callTotalTimeoutMs: timeouts.total } : {}),
    });
    runners.push(r);
    const progress: number[] = [];
    r.runner.events.on((e) => e.type === 'tool-progress' && progress.push(e.progress));
    const h = await r.runner.start({ task: 'call the scripted server' });
    assert.equal((await h.done).state, 'completed');
    const sent = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content!);
    return { r, runId: h.runId, sent, progress };
  }

  it("a stdio server sees only the environment its definition names, never the host's keys", async () => {
    process.env.OPENAI_API_KEY = 'sk-host-secret';
    process.env.AW_TEST_TOKEN = 'aw-host-secret';
    process.env.GITHUB_TOKEN = 'ghp-host-secret';
    process.env.AW_NAMED = 'named-by-config';
    const servers = defs({ scripted: scriptedStdio({ PASSED: '${env:AW_NAMED}', LITERAL: 'x' }) });
    const [sent] = (await runCalls([{ name: 'env', arguments: {} }], servers)).sent as [string];
    const env = JSON.parse(sent) as Record<string, string>;
    assert.equal(env.PASSED, 'named-by-config', 'a variable the definition names');
    assert.equal(env.LITERAL, 'x');
    assert.equal(env.PATH, process.env.PATH, 'the minimal base');
    assert.equal(env.HOME, process.env.HOME);
    for (const leaked of ['OPENAI_API_KEY', 'AW_TEST_TOKEN', 'GITHUB_TOKEN', 'AW_NAMED'])
      assert.equal(env[leaked], undefined, `${leaked} reached the server`);
    assert.ok(!sent.includes('host-secret'), 'no value of the host reached the server');
  });

  it('a server that sends progress and never answers fails at the total deadline and is told to cancel', async function () {
    this.timeout(20_000); // without a total deadline the call would never end
    const servers = defs({ scripted: scriptedStdio() });
    const started = Date.now();
    const { r, sent, progress } = await runCalls([{ name: 'forever', arguments: {} }], servers, {
      idle: 1000,
      total: 2500,
    });
    assert.match(
      sent[0]!,
      /^scripted__forever failed: MCP server "scripted" did not finish within 3 s \(the longest a call may take, progress or not\); the call was cancelled\. It may have done part of its work\.$/,
    );
    assert.ok(progress.length >= 5, `progress kept coming past the idle deadline: ${progress.length}`);
    assert.ok(Date.now() - started < 15_000);
    // The server was told: notifications/cancelled for that request.
    const ctx = toolCtx(r.workspace);
    let told: { reason: string }[] = [];
    await waitFor(async () => {
      const out = await r.tools.execute(toolCall('scripted__cancelled', {}), ctx);
      told = JSON.parse(out.output) as { reason: string }[];
      return told.length > 0;
    });
    assert.match(told[0]!.reason, /the call took longer than allowed/);
  });

  it("the server's own JSON-RPC error reaches the model: code, message and small data, -32000 and -32001 too", async () => {
    const servers = defs({ scripted: scriptedStdio() });
    const big = { blob: 'y'.repeat(5000) };
    const { sent, r } = await runCalls(
      [
        { name: 'fail', arguments: { code: -32001, message: 'upstream quota exhausted', data: { retryAfter: 30 } } },
        { name: 'fail', arguments: { code: -32000, message: 'database connection closed' } },
        { name: 'fail', arguments: { code: -32603, message: 'internal', data: big } },
      ],
      servers,
    );
    assert.deepEqual(sent, [
      'scripted__fail failed: MCP server "scripted" answered with error -32001: upstream quota exhausted (data: {"retryAfter":30})',
      'scripted__fail failed: MCP server "scripted" answered with error -32000: database connection closed',
      'scripted__fail failed: MCP server "scripted" answered with error -32603: internal (its data, 5011 characters, is left out)',
    ]);
    assert.equal(r.mcp.status()[0]!.state.kind, 'ready', 'an error answer is not a dead server');
  });
});
