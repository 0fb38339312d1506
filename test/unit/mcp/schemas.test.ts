// An MCP server's input schemas are not trusted: a backtracking `pattern` or `patternProperties`
// must not stall the host while the model's arguments are checked (before any approval), and a
// schema too large or too deep is not compiled at all. Through the real runner, against the
// scripted server (test/fixtures/mcp/scripted.mjs), with the event loop's delay sampled throughout.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { jsonSchemaArgs } from '../../../src/runner/tools/external';
import { defs, scriptedStdio } from '../../support/mcpServers';
import { closeServers, mcpRunner, type McpTestRunner } from './support';

/**
 * The longest the event loop was blocked while `fn` ran, in ms (Node's own sampler, 10 ms
 * resolution). 200 ms is the bound the issue sets; a backtracking pattern held it for seconds.
 */
async function longestStall<T>(fn: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  try {
    const value = await fn();
    return { value, stallMs: h.max / 1e6 };
  } finally {
    h.disable();
  }
}

describe('MCP input schemas from a server: linear-time patterns, bounded size', function () {
  this.timeout(60_000);
  let model: ModelServer | undefined;
  const runners: McpTestRunner[] = [];
  afterEach(async () => {
    await closeServers(...runners.splice(0));
    await model?.close();
    model = undefined;
  });

  it('checks arguments against backtracking patterns without stalling the host; a matching call runs', async () => {
    const evil = 'a'.repeat(24) + 'b'; // ^(a+)+$ on a backtracking engine: seconds on this input
    const evilKey = 'b'.repeat(24) + 'c';
    model = await startModelServer({
      scenario: {
        name: 'mcp-pattern',
        description: 'two calls whose arguments a backtracking pattern would take seconds to reject, one that matches',
        turns: [
          {
            reply: {
              content: 'Calling it.',
              tool_calls: [
                { name: 'scripted__match', arguments: { word: evil } },
                { name: 'scripted__match', arguments: { word: 'aaa', tags: { [evilKey]: 'x' } } },
                { name: 'scripted__match', arguments: { word: 'aaaa', tags: { bbb: 'x' } } },
              ],
            },
          },
          { reply: { content: 'Done.' } },
        ],
      },
    });
    const servers = defs({ scripted: scriptedStdio() });
    const r = mcpRunner({
      baseURL: model.url,
      servers,
      rules: [{ server: 'scripted', tool: 'match', identity: servers[0]!.identity }],
    });
    runners.push(r);
    // A first run warms what every first run loads (the tokenizer, the shell grammar): only the
    // second run is measured, so the bound is about what the schema's patterns cost.
    await (
      await r.runner.start({ task: 'warm up' })
    ).done;
    model.reset();
    const { value: h, stallMs } = await longestStall(async () => {
      const handle = await r.runner.start({ task: 'match' });
      await handle.done;
      return handle;
    });
    assert.equal((await r.store.getRun(h.runId))!.state, 'completed');
    const sent = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content!);
    assert.match(sent[0]!, /Invalid arguments for scripted__match[\s\S]*word: must match pattern "\^\(a\+\)\+\$"/);
    assert.match(sent[1]!, /Invalid arguments for scripted__match[\s\S]*tags: must NOT have additional properties/);
    assert.equal(sent[2], 'matched aaaa');
    assert.ok(stallMs < 200, `the host's event loop was blocked for ${Math.round(stallMs)} ms`);
  });

  it('does not compile a schema nested deeper than the bound: the tool is not offered, with the reason', async () => {
    const r = mcpRunner({ baseURL: 'http://127.0.0.1:1', servers: defs({ scripted: scriptedStdio() }) });
    runners.push(r);
    await r.tools.refresh();
    assert.ok(r.tools.get('scripted__match'), 'the other tools are offered');
    assert.equal(r.tools.get('scripted__deep'), undefined);
    assert.deepEqual(r.mcp.status()[0]!.skipped, ['deep: its input schema is nested deeper than 64 levels']);
  });

  it("patterns RE2 cannot run are left to the server; ECMAScript's \\u escapes are understood", () => {
    const args = jsonSchemaArgs({
      type: 'object',
      properties: {
        look: { type: 'string', pattern: '^(?!forbidden)' },
        accent: { type: 'string', pattern: '^\\u00e9+$' },
      },
    });
    assert.ok(args.safeParse({ look: 'forbidden' }).success, 'lookahead: not checked here (the server checks)');
    assert.ok(args.safeParse({ accent: 'éé' }).success);
    assert.ok(!args.safeParse({ accent: 'e' }).success);
  });

  it('a pattern whose check would cost too much on a long argument is left to the server, not run', () => {
    // Linear, but RE2's constant is its program: 500 Unicode classes over 1 MB took about 30 s.
    const args = jsonSchemaArgs({ type: 'object', properties: { s: { type: 'string', pattern: '\\p{L}{500}Q' } } });
    const started = performance.now();
    assert.ok(args.safeParse({ s: 'é'.repeat(1_000_000) }).success);
    const ms = performance.now() - started;
    assert.ok(ms < 200, `the check took ${Math.round(ms)} ms`);
    assert.ok(!args.safeParse({ s: 'é'.repeat(10) }).success, 'a short argument is still checked');
  });
});
