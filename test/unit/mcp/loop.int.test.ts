// MCP tools in the real run loop (the scripted model over real HTTP, the real registry and store):
// they ask by default, "always allow" is bound to the server's identity, the tools the model was
// offered are recorded with its response, and a resumed or imported call never reaches a server
// that changed or a different one.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMemoryStore } from '../../../src/store/memory/store';
import { ruleFor } from '../../../src/runner/mcp/approvals';
import { defs, everythingStdio, filesystemStdio, VERSIONED_JS } from '../../support/mcpServers';
import { owner, tmp } from '../loop/support';
import { closeServers, mcpRunner, type McpTestRunner } from './support';

const scenario = (calls: { name: string; arguments: Record<string, unknown> }[]): ScenarioInput => ({
  name: 'mcp',
  description: 'one MCP tool call, then an answer',
  turns: [{ reply: { content: 'Calling the tool.', tool_calls: calls } }, { reply: { content: 'Done.' } }],
});

describe('MCP tools in the run loop', function () {
  this.timeout(60_000);
  let model: ModelServer | undefined;
  const runners: McpTestRunner[] = [];
  const runner = (o: Omit<Parameters<typeof mcpRunner>[0], 'baseURL'>) => {
    const r = mcpRunner({ baseURL: model!.url, ...o });
    runners.push(r);
    return r;
  };
  afterEach(async () => {
    await closeServers(...runners.splice(0));
    await model?.close();
    model = undefined;
  });

  it('asks by default; approved, the call runs once and its result, exact result and offered tools are recorded', async () => {
    model = await startModelServer({
      scenario: scenario([{ name: 'everything__get-sum', arguments: { a: 20, b: 22 } }]),
    });
    const r = runner({ servers: defs({ everything: everythingStdio() }) });
    const h = await r.runner.start({ task: 'add 20 and 22' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [approval] = await r.store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(approval!.tool_name, 'everything__get-sum');
    assert.equal(approval!.category, 'external');
    assert.match(approval!.reason, /get-sum is a tool of MCP server "everything": external tools ask/);
    const offered = model.requests[0]!.tool_names;
    assert.ok(offered.includes('everything__get-sum') && offered.includes('read_file'), JSON.stringify(offered));

    const resumed = await r.runner.decideApprovals(h.runId, [
      { toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, kind: 'approve' },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    const [effect] = await r.store.listEffects(h.runId);
    assert.equal(effect!.result!.output, 'The sum of 20 and 22 is 42.');
    assert.equal(effect!.input_hash, approval!.input_hash, 'the approval is bound to the call that ran');
    const raw = JSON.parse(await r.store.getBlob(h.runId, effect!.result!.raw_blob!)) as CallToolResult;
    assert.deepEqual(raw.content, [{ type: 'text', text: 'The sum of 20 and 22 is 42.' }]);
    const toolMessage = model.requests[1]!.messages.find((m) => m.role === 'tool');
    assert.equal(toolMessage!.content, 'The sum of 20 and 22 is 42.');

    const postLlm = (await r.store.list(h.runId, { limit: 100 })).find((c) => c.phase === 'post_llm' && c.step === 1);
    const seen = postLlm!.snapshot!.pending_llm_response!.tools_seen!;
    assert.equal(seen.length, 13);
    assert.deepEqual(
      seen.find((s) => s.name === 'everything__get-sum'),
      {
        name: 'everything__get-sum',
        kind: 'mcp',
        source: 'everything',
        tool: 'get-sum',
        identity: r.tools.get('everything__get-sum')!.external!.identity.slice(0, 16),
        schema_hash: seen.find((s) => s.name === 'everything__get-sum')!.schema_hash,
      },
    );
  });

  it('"always allow" runs a tool without asking only on the server it was given for', async () => {
    model = await startModelServer({
      scenario: scenario([{ name: 'everything__echo', arguments: { message: 'hi' } }]),
    });
    const servers = defs({ everything: everythingStdio() });
    const probe = runner({ servers });
    await probe.tools.refresh();
    const rule = ruleFor(probe.tools.get('everything__echo')!)!;

    const allowed = runner({ servers, rules: [rule] });
    const h = await allowed.runner.start({ task: 'echo' });
    assert.equal((await h.done).state, 'completed');
    assert.equal((await allowed.store.listEffects(h.runId))[0]!.result!.output, 'Echo: hi');
    assert.equal((await allowed.store.listApprovals(h.runId)).length, 0);

    // The same name, another program: the rule does not apply.
    model.reset();
    const moved = runner({
      servers: defs({ everything: { ...everythingStdio(), args: [...(everythingStdio().args as string[]), '--x'] } }),
      rules: [rule],
    });
    const h2 = await moved.runner.start({ task: 'echo' });
    assert.equal((await h2.done).state, 'awaiting_approval');
    const [asked] = await moved.store.listApprovals(h2.runId);
    assert.match(asked!.reason, /was always allowed, but the server has changed since/);
  });

  it('readOnlyHint runs without asking only when the user opted in', async () => {
    model = await startModelServer({
      scenario: scenario([{ name: 'everything__echo', arguments: { message: 'ro' } }]),
    });
    const servers = defs({ everything: everythingStdio() });
    const optedIn = runner({ servers, autoReadOnly: true });
    const h = await optedIn.runner.start({ task: 'echo' });
    assert.equal((await h.done).state, 'completed');
    model.reset();
    const h2 = await runner({ servers }).runner.start({ task: 'echo' });
    assert.equal((await h2.done).state, 'awaiting_approval');
  });

  it('a resumed run whose server changed a tool schema tells the model and the user instead of calling it', async () => {
    model = await startModelServer({ scenario: scenario([{ name: 'versioned__echo', arguments: { message: 'v1' } }]) });
    const store = createMemoryStore();
    const v1 = runner({
      store,
      servers: defs({ versioned: { command: process.execPath, args: [VERSIONED_JS], env: { SCHEMA_VERSION: '1' } } }),
    });
    const v1Identity = v1.mcp.status()[0]!.identity;
    const h = await v1.runner.start({ task: 'echo' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [approval] = await store.listApprovals(h.runId, { pendingOnly: true });
    await closeServers(v1);

    // A reload later the server was upgraded in place: same command and arguments (same identity), another schema.
    const v2 = runner({
      store,
      servers: defs({ versioned: { command: process.execPath, args: [VERSIONED_JS], env: { SCHEMA_VERSION: '2' } } }),
    });
    assert.equal(v2.mcp.status()[0]!.identity, v1Identity, 'the same server, by identity');
    const resumed = await v2.runner.decideApprovals(h.runId, [
      { toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, kind: 'approve' },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')!.content!;
    assert.match(
      sent,
      /^Not run: the tool versioned__echo changed since it was offered: MCP server "versioned" now describes it differently/,
    );
    assert.match(sent, /Its arguments now: .*"times"/);
    assert.equal((await store.listEffects(h.runId)).length, 0, 'the server was never called');
  });

  it('a run resumed after its tool changed closes the approval it was waiting on, saying why', async () => {
    model = await startModelServer({ scenario: scenario([{ name: 'versioned__echo', arguments: { message: 'v1' } }]) });
    const store = createMemoryStore();
    const server = (version: string) =>
      defs({ versioned: { command: process.execPath, args: [VERSIONED_JS], env: { SCHEMA_VERSION: version } } });
    const v1 = runner({ store, servers: server('1') });
    const h = await v1.runner.start({ task: 'echo' });
    assert.equal((await h.done).state, 'awaiting_approval');
    await closeServers(v1);

    // Resumed (not decided) after the server's upgrade: the call cannot run as it was asked about.
    const v2 = runner({ store, servers: server('2') });
    const resumed = await v2.runner.resume(h.runId, { confirmed: true });
    assert.equal((await resumed.done).state, 'completed');
    assert.deepEqual(await store.listApprovals(h.runId, { pendingOnly: true }), [], 'no approval left waiting');
    const [closed] = await store.listApprovals(h.runId);
    assert.equal(closed!.decision!.kind, 'reject');
    assert.match(
      closed!.decision!.reason!,
      /^Closed: the call cannot run any more\. Not run: the tool versioned__echo changed/,
    );
    assert.equal((await store.listEffects(h.runId)).length, 0, 'the server was never called');
  });

  it('a tool that vanished from its server is not called, and the model is told', async () => {
    model = await startModelServer({ scenario: scenario([{ name: 'everything__echo', arguments: { message: 'x' } }]) });
    const store = createMemoryStore();
    const before = runner({ store, servers: defs({ everything: everythingStdio() }) });
    const h = await before.runner.start({ task: 'echo' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [approval] = await store.listApprovals(h.runId, { pendingOnly: true });
    await closeServers(before);
    const after = runner({ store, servers: defs({ everything: filesystemStdio(tmp('mcp-fs')) }) });
    const resumed = await after.runner.decideApprovals(h.runId, [
      { toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, kind: 'approve' },
    ]);
    assert.equal((await resumed!.done).state, 'completed');
    const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')!.content!;
    assert.match(sent, /^Not run: the tool everything__echo is no longer offered by MCP server "everything"/);
  });

  it("an imported run's approval does not carry over to a different server of the same name", async () => {
    model = await startModelServer({
      scenario: scenario([{ name: 'fs__write_file', arguments: { path: '/tmp/x', content: 'x' } }]),
    });
    const home = createMemoryStore();
    const dirA = tmp('mcp-a');
    const a = runner({ store: home, servers: defs({ fs: filesystemStdio(dirA) }) });
    const h = await a.runner.start({ task: 'write' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [approval] = await home.listApprovals(h.runId, { pendingOnly: true });
    // Decided at home (approve), exported before it ran.
    const lease = await home.acquire(h.runId, owner());
    await home.decideApproval(h.runId, approval!.tool_call_id, { kind: 'approve', reason: null, input_hash: null });
    await lease.release();
    const exported = await home.exportRun(h.runId);

    const away = createMemoryStore();
    const imported = await away.importRun(exported, owner());
    const dirB = tmp('mcp-b');
    const b = runner({ store: away, servers: defs({ fs: filesystemStdio(dirB) }) });
    const resumed = await b.runner.resume(imported.run_id, { confirmed: true });
    const out = await resumed.done;
    assert.equal(out.state, 'completed');
    assert.equal((await away.listEffects(imported.run_id)).length, 0, 'nothing ran on the other server');
    const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')!.content!;
    assert.match(
      sent,
      /^Not run: the tool fs__write_file belongs to a different server now: MCP server "fs" was changed/,
    );
  });
});
