// VS Code's own language models and Check model connection, in a real extension host. A second
// extension under development (test/fixtures/lmExtension) contributes a LanguageModelChatProvider
// backed by the scripted server; Agent Waypoints reaches it through vscode.lm like Copilot's models.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { CommandIds } from '../../src/contributes';
import type { CheckResult } from '../../src/runner/provider/check';
import { CHECK_TOOL_NAME } from '../../src/runner/provider/check';
import type { RunnerEvent } from '../../src/runner/events';
import { DEMO_MODEL_ID, type ScenarioInput } from '../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../fixtures/modelServer/server';
import { activated, configure, setApiKey, waitForState } from './helpers';

const LM_EXTENSION = 'agent-waypoints-tests.waypoints-test-lm';
const LM_MODEL = 'waypoints-test-model';
const CHECK_SUB = {
  id: 'check',
  user_contains: 'Agent Waypoints connection check',
  turns: [{ reply: { tool_calls: [{ name: CHECK_TOOL_NAME, arguments: { ok: true } }] } }],
};

const LM_SCENARIO: ScenarioInput = {
  name: 'in-host-vscode-lm',
  description: 'offline demo model behind a VS Code language model: list, write (approval), answer',
  model: LM_MODEL,
  turns: [
    {
      reply: {
        content: '(offline demo model) Looking around first.',
        tool_calls: [{ name: 'list_files', arguments: { path: '.' } }],
      },
    },
    {
      reply: {
        content: null,
        tool_calls: [
          { name: 'write_file', arguments: { path: 'notes/lm.md', content: 'written through vscode.lm\n' } },
        ],
      },
    },
    { reply: { content: '(offline demo model) Wrote notes/lm.md through a VS Code language model.' } },
  ],
  subconversations: [CHECK_SUB],
};

async function configureLm(opts: { baseUrl?: string; failWith?: string }): Promise<void> {
  const ext = vscode.extensions.getExtension(LM_EXTENSION);
  assert.ok(ext, `${LM_EXTENSION} is loaded as a second extension under development`);
  await ext.activate();
  await vscode.commands.executeCommand('waypointsTestLm.configure', opts);
}

describe('VS Code language models (vscode.lm) in a real extension host', () => {
  let server: ModelServer;
  before(async () => {
    server = await startModelServer({ scenario: LM_SCENARIO });
    await configureLm({ baseUrl: server.url });
    await configure({ 'agentWaypoints.approval.write': 'ask' });
  });
  after(async () => {
    await configureLm({});
    await server.close();
  });

  it('the test extension’s model is offered through vscode.lm', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: 'waypoints-test' });
    assert.deepEqual(
      models.map((m) => m.id),
      [LM_MODEL],
    );
  });

  it('a run with tool calls completes through vscode.lm; the approval resumes with the recorded adapter and no second model call', async () => {
    const api = await activated();
    server.reset();
    // The endpoint in settings is unreachable: only vscode.lm can answer this run, before and after the pause.
    await configure({ 'agentWaypoints.provider.baseUrl': 'http://127.0.0.1:9/v1' });
    const deltas: string[] = [];
    const sub = api.runner!.events.on(
      (e: RunnerEvent) => void (e.type === 'llm-delta' && e.kind === 'text' && deltas.push(e.delta)),
    );
    try {
      const runId = await vscode.commands.executeCommand<string>(
        CommandIds.startRun,
        'Write a note through a VS Code model',
        { adapter: 'vscode-lm', model: LM_MODEL },
      );
      assert.ok(runId);
      assert.equal(
        await waitForState(api, runId, ['awaiting_approval', 'completed', 'paused_error', 'failed']),
        'awaiting_approval',
        (await api.store!.getRun(runId))?.state_detail ?? '',
      );
      assert.equal((await api.store!.getRun(runId))?.model, `vscode-lm/${LM_MODEL}`);
      const snap = (await api.store!.loadSnapshot(runId)).snapshot;
      assert.equal(snap.provider_adapter, 'vscode-lm');
      assert.equal(snap.requested_model, LM_MODEL);
      assert.ok(snap.usage.input_tokens > 0 && snap.usage.output_tokens > 0, 'token counts from provideTokenCount');
      assert.equal(snap.total_cost_usd, null, 'VS Code does not say what a request costs: unknown, not zero');
      assert.deepEqual(
        deltas,
        ['(offline ', 'demo ', 'model) ', 'Looking ', 'around ', 'first.'],
        'text streamed part by part',
      );

      const [approval] = await api.store!.listApprovals(runId, { pendingOnly: true });
      assert.equal(approval?.tool_name, 'write_file');
      const handle = await api.runner!.decideApprovals(runId, [
        { toolCallId: approval.tool_call_id, inputHash: approval.input_hash, kind: 'approve' },
      ]);
      const out = await handle!.done;
      assert.equal(out.state, 'completed', out.detail ?? '');
      assert.equal(out.finalText, '(offline demo model) Wrote notes/lm.md through a VS Code language model.');
      const written = await vscode.workspace.fs.readFile(
        vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, 'notes/lm.md'),
      );
      assert.equal(Buffer.from(written).toString('utf8'), 'written through vscode.lm\n');
      assert.deepEqual(
        server.stats().per_turn,
        { 'main#0': 1, 'main#1': 1, 'main#2': 1 },
        'each response requested once',
      );
      // The tool results went back as LanguageModelToolResultParts, matched to their calls.
      const last = server.requests.at(-1)!.raw_messages as Array<{
        role: string;
        tool_call_id?: string;
        tool_calls?: Array<{ id: string }>;
      }>;
      const calls = last
        .filter((m) => m.role === 'assistant')
        .flatMap((m) => m.tool_calls ?? [])
        .map((c) => c.id);
      assert.deepEqual(
        last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id),
        calls,
      );
      assert.deepEqual(
        server.requests.map((r) => r.tool_names.includes('write_file')),
        [true, true, true],
        'our tools went as LanguageModelChatTools',
      );
    } finally {
      sub.dispose();
      await configure({ 'agentWaypoints.provider.baseUrl': undefined });
    }
  });

  it('a refused consent or an exhausted quota (LanguageModelError) pauses the run with a clear message; resume continues', async () => {
    const api = await activated();
    server.reset();
    await configureLm({ baseUrl: server.url, failWith: 'Blocked' });
    const runId = await vscode.commands.executeCommand<string>(CommandIds.startRun, 'Quota test', {
      adapter: 'vscode-lm',
      model: LM_MODEL,
    });
    assert.equal(await waitForState(api, runId, ['paused_error', 'completed', 'awaiting_approval']), 'paused_error');
    assert.match((await api.store!.getRun(runId))?.state_detail ?? '', /quota or rate limit reached/);
    await configureLm({ baseUrl: server.url, failWith: 'NoPermissions' });
    await (
      await api.runner!.resume(runId)
    ).done;
    assert.match((await api.store!.getRun(runId))?.state_detail ?? '', /no consent was given/);
    assert.equal(server.stats().total, 0, 'nothing reached the model');
    await configureLm({ baseUrl: server.url });
    const out = await (await api.runner!.resume(runId)).done;
    assert.equal(out.state, 'awaiting_approval', out.detail ?? '');
    // Leave nothing waiting for the suites after this one.
    const [a] = await api.store!.listApprovals(runId, { pendingOnly: true });
    const done = await (await api.runner!.decideApprovals(runId, [
      { toolCallId: a!.tool_call_id, inputHash: a!.input_hash, kind: 'reject', reason: 'test over' },
    ]))!.done;
    assert.equal(done.state, 'completed', done.detail ?? '');
  });

  it('Check model connection works for a VS Code language model', async () => {
    await configureLm({ baseUrl: server.url });
    const r = await vscode.commands.executeCommand<CheckResult>(CommandIds.checkConnection, {
      adapter: 'vscode-lm',
      model: LM_MODEL,
    });
    assert.equal(r.message, `Connected: \`${LM_MODEL}\` at VS Code answered and called a tool.`);
    const missing = await vscode.commands.executeCommand<CheckResult>(CommandIds.checkConnection, {
      adapter: 'vscode-lm',
      model: 'no-such-model',
    });
    assert.equal(missing.problem, 'model_not_found');
    assert.equal(missing.message, 'Model `no-such-model` not found; VS Code offers: waypoints-test-model.');
  });
});

describe('Check model connection in a real extension host', () => {
  const servers: ModelServer[] = [];
  const serve = async (opts: Omit<Parameters<typeof startModelServer>[0], 'scenario'>) => {
    const s = await startModelServer({
      scenario: {
        name: 'check',
        description: 'offline demo model: check',
        turns: [{ reply: { content: 'x' } }],
        subconversations: [CHECK_SUB],
      },
      ...opts,
    });
    servers.push(s);
    return s;
  };
  const point = (baseUrl: string, model = DEMO_MODEL_ID) =>
    configure({
      'agentWaypoints.provider.baseUrl': baseUrl,
      'agentWaypoints.provider.model': model,
      'agentWaypoints.provider.maxRetries': 0,
    });
  const check = async (baseUrl: string, model = DEMO_MODEL_ID) => {
    await point(baseUrl, model);
    return vscode.commands.executeCommand<CheckResult>(CommandIds.checkConnection);
  };
  after(async () => {
    await configure({
      'agentWaypoints.provider.baseUrl': undefined,
      'agentWaypoints.provider.model': undefined,
      'agentWaypoints.provider.maxRetries': undefined,
    });
    await vscode.commands.executeCommand(CommandIds.clearApiKey);
    for (const s of servers) await s.close();
  });

  it('reports each failure with its message: key refused, model not found, no tool calling, unreachable; then success', async () => {
    await activated();
    const keyed = await serve({ apiKey: 'sk-right-key' });
    await point(keyed.url);
    await setApiKey('sk-wrong-key'); // entered for the keyed server's origin
    assert.equal(
      (await check(keyed.url)).message,
      `401: the API key was refused by ${keyed.url}. Set the right one with “Agent Waypoints: Set API key”.`,
    );
    await setApiKey('sk-right-key');
    const ok = await check(keyed.url);
    assert.equal(ok.message, `Connected: \`${DEMO_MODEL_ID}\` at ${keyed.url} answered and called a tool.`);
    // The servers below are other origins: without a key there is nothing to ask about.
    await vscode.commands.executeCommand(CommandIds.clearApiKey);

    const listed = await serve({ models: ['llama3.1:8b', 'qwen2.5-coder:7b'] });
    assert.equal(
      (await check(listed.url, 'gpt-4.1-mini')).message,
      'Model `gpt-4.1-mini` not found; the server offers: llama3.1:8b, qwen2.5-coder:7b.',
    );

    const toolless = await serve({ rejectTools: true });
    assert.match((await check(toolless.url)).message, /^This model does not call tools: /);

    const gone = await serve({});
    await gone.close();
    const unreachable = await check(gone.url);
    assert.equal(unreachable.problem, 'unreachable');
    assert.match(unreachable.message, new RegExp(`^Cannot reach ${gone.url.replace(/[./]/g, '\\$&')}: `));
  });
});
