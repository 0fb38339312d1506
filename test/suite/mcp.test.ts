// MCP servers and VS Code's tools in a real extension host: `.vscode/mcp.json` written into the
// workspace is picked up (lazily: nothing starts until a run needs tools), server-everything (from
// npm) is listed and called through a run, its state and the always-allow list show in the Runs
// view's MCP section; a tool another extension registered (vscode.lm.tools) runs through invokeTool.
// The untrusted pass checks that Restricted Mode reads no workspace servers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../src/root';
import type { RunsTreeNode } from '../../src/views/runs/nodes';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type ScenarioInput } from '../fixtures/modelServer/scenario';
import { activated, configure, waitForState } from './helpers';

const REPO = path.resolve(__dirname, '../../..');
const EVERYTHING = path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

function mcpJsonPath(): string {
  return path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, '.vscode', 'mcp.json');
}

function writeMcpJson(servers: Record<string, unknown>): void {
  fs.mkdirSync(path.dirname(mcpJsonPath()), { recursive: true });
  fs.writeFileSync(mcpJsonPath(), `// written by the in-host test\n${JSON.stringify({ servers }, null, 2)}\n`);
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function mcpNodes(api: ExtensionApi): Promise<RunsTreeNode[]> {
  const roots = await api.tree!.getChildren();
  const section = roots.find((n) => n.kind === 'mcp');
  return section ? api.tree!.getChildren(section) : [];
}

const scenario = (calls: { name: string; arguments: Record<string, unknown> }[]): ScenarioInput => ({
  name: 'in-host-mcp',
  description: 'one external tool call, then an answer',
  model: DEMO_MODEL_ID,
  turns: [
    { reply: { content: '(offline demo model) Using a tool.', tool_calls: calls } },
    { reply: { content: 'Done.' } },
  ],
});

describe('MCP servers and VS Code tools in a real extension host', () => {
  let model: ModelServer | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
    fs.rmSync(mcpJsonPath(), { force: true });
    await configure({ 'agentWaypoints.mcp.alwaysAllow': undefined });
  });

  it('reads .vscode/mcp.json, starts the server when a run needs it, runs an approved call, shows the state', async () => {
    const api = await activated();
    writeMcpJson({
      everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      broken: { command: path.join(REPO, 'no-such-server') },
    });
    const listed = await until('the servers of mcp.json', () => {
      const s = api.mcp!.overview().servers;
      return s.length === 2 ? s : undefined;
    });
    assert.deepEqual(
      listed.map((s) => [s.name, s.state.kind]),
      [
        ['everything', 'stopped'],
        ['broken', 'stopped'],
      ],
      'nothing starts before a run needs tools',
    );

    model = await startModelServer({
      scenario: scenario([{ name: 'everything__get-sum', arguments: { a: 2, b: 40 } }]),
    });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
    const h = await api.runner!.start({ task: 'add' });
    assert.equal(await waitForState(api, h.runId, ['awaiting_approval']), 'awaiting_approval');
    assert.ok(model.requests[0]!.tool_names.includes('everything__get-sum'));
    const [approval] = await api.store!.listApprovals(h.runId, { pendingOnly: true });
    await api.runner!.decideApprovals(h.runId, [
      { toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, kind: 'approve' },
    ]);
    assert.equal(await waitForState(api, h.runId, ['completed']), 'completed');
    const [effect] = await api.store!.listEffects(h.runId);
    assert.equal(effect!.result!.output, 'The sum of 2 and 40 is 42.');
    assert.ok(effect!.result!.raw_blob, 'the exact result is kept');

    const nodes = await mcpNodes(api);
    const items = nodes.map((n) => api.tree!.getTreeItem(n));
    const byLabel = new Map(items.map((i) => [String(i.label), String(i.description)]));
    assert.equal(byLabel.get('everything'), 'ready · 13 tools');
    assert.match(byLabel.get('broken') ?? '', /^failed: /);
  });

  it('"always allow" from the Runs view runs the tool without asking, until it is revoked there', async () => {
    const api = await activated();
    writeMcpJson({ everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    await until('the server', () => api.mcp!.overview().servers.length === 1 || undefined);
    model = await startModelServer({
      scenario: scenario([{ name: 'everything__echo', arguments: { message: 'hi' } }]),
    });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
    await api.mcp!.servers.tools(); // started, so its tools are in the tree
    const server = (await mcpNodes(api)).find((n) => n.kind === 'mcpServer')!;
    const echo = (await api.tree!.getChildren(server)).find(
      (n) => n.kind === 'mcpTool' && n.tool.remoteName === 'echo',
    )!;
    await vscode.commands.executeCommand('agentWaypoints.alwaysAllowTool', echo);
    const rules = await until('the rule in settings', () => {
      const r = vscode.workspace.getConfiguration('agentWaypoints.mcp').get<unknown[]>('alwaysAllow') ?? [];
      return r.length === 1 ? r : undefined;
    });
    assert.equal((rules[0] as { tool: string }).tool, 'echo');
    assert.equal(api.mcp!.servers.status()[0]!.state.kind, 'ready', 'allowing a tool does not restart its server');

    const h = await api.runner!.start({ task: 'echo' });
    assert.equal(await waitForState(api, h.runId, ['completed', 'awaiting_approval']), 'completed');

    const allowed = (await mcpNodes(api)).find((n) => n.kind === 'mcpAllowed')!;
    const [rule] = await api.tree!.getChildren(allowed);
    assert.equal(api.tree!.getTreeItem(rule!).description, 'applies');
    await vscode.commands.executeCommand('agentWaypoints.revokeToolApproval', rule);
    await until('the rule gone', () => (api.mcp!.allowList.rules().length === 0 ? true : undefined));
    model.reset();
    const h2 = await api.runner!.start({ task: 'echo again' });
    assert.equal(await waitForState(api, h2.runId, ['completed', 'awaiting_approval']), 'awaiting_approval');
  });

  it("offers VS Code's tools (vscode.lm.tools) and invokes an approved one through vscode.lm.invokeTool", async () => {
    const api = await activated();
    const tools = await api.mcp!.vscodeTools.tools();
    const shout = tools.find((t) => t.name === 'vscode__waypoints_test_shout');
    assert.ok(shout, `offered: ${tools.map((t) => t.name).join(', ')}`);
    assert.deepEqual(shout.external!.parameters.required, ['text']);
    // VS Code's own agent tools (terminal, edits, confirmations; no extension behind them) are not offered.
    const builtins = vscode.lm.tools.filter((t) => (t as { source?: unknown }).source == null).map((t) => t.name);
    assert.ok(builtins.includes('run_in_terminal'), `this host has built-in tools: ${builtins.join(', ')}`);
    for (const b of builtins) assert.ok(!tools.some((t) => t.external!.remoteName === b), `${b} is not offered`);
    model = await startModelServer({
      scenario: scenario([{ name: 'vscode__waypoints_test_shout', arguments: { text: 'hello' } }]),
    });
    await configure({ 'agentWaypoints.provider.baseUrl': model.url, 'agentWaypoints.provider.model': DEMO_MODEL_ID });
    const h = await api.runner!.start({ task: 'shout' });
    assert.equal(await waitForState(api, h.runId, ['awaiting_approval']), 'awaiting_approval');
    const [approval] = await api.store!.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(approval!.category, 'external');
    await api.runner!.decideApprovals(h.runId, [
      { toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash, kind: 'approve' },
    ]);
    assert.equal(await waitForState(api, h.runId, ['completed']), 'completed');
    assert.equal((await api.store!.listEffects(h.runId))[0]!.result!.output, 'HELLO!');
    assert.deepEqual(await vscode.commands.executeCommand('waypointsTestLm.shouted'), ['hello'], 'invoked once');
  });
});

describe('MCP in restricted mode (untrusted workspace)', () => {
  it('reads no servers from .vscode/mcp.json', async () => {
    const api = await activated();
    writeMcpJson({ everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    try {
      await api.mcp!.reload();
      assert.equal(vscode.workspace.isTrusted, false);
      assert.deepEqual(api.mcp!.overview().servers, []);
    } finally {
      fs.rmSync(mcpJsonPath(), { force: true });
    }
  });
});
