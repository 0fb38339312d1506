// SIGKILL of the host between an MCP call's intent and its result: on resume the call is surfaced
// as "may already have run" and never re-issued without the user; approving it runs it once. A call
// of the same batch that had answered before the crash is replayed, never asked about.
import assert from 'node:assert/strict';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import { defs, everythingStdio } from '../../support/mcpServers';
import { tmp } from '../loop/support';
import { closeServers, mcpRunner, type McpTestRunner } from './support';
import { runJsonChild } from '../../support/jsonChild';

const CHILD = path.join(__dirname, 'crashChild.ts');

const runChild = (env: Record<string, string>) => runJsonChild(['--import', 'tsx', CHILD], env);

describe('MCP: SIGKILL between intent and result', function () {
  this.timeout(90_000);
  let model: ModelServer;
  let resumed: McpTestRunner | undefined;
  afterEach(async () => {
    await closeServers(resumed);
    await model?.close();
  });

  it('surfaces the call as may already have run; approving it runs it once', async () => {
    model = await startModelServer({
      scenario: {
        name: 'mcp-crash',
        description: 'a long MCP operation, then an answer',
        turns: [
          {
            reply: {
              content: 'Starting it.',
              tool_calls: [
                { name: 'everything__trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
              ],
            },
          },
          { reply: { content: 'It finished.' } },
        ],
      },
    });
    const storeDir = tmp('mcp-crash');
    const child = await runChild({ BASE_URL: model.url, STORE_DIR: storeDir });
    assert.equal(child.signal, 'SIGKILL');
    assert.ok(
      child.events.some((e) => e.event === 'progress'),
      'killed while the call ran',
    );
    const runId = child.events.find((e) => e.event === 'started')!.runId as string;

    const store = openDiskStore(storeDir);
    const [intent] = await store.listEffects(runId);
    assert.equal(intent!.tool_name, 'everything__trigger-long-running-operation');
    assert.equal(intent!.result, null, 'the intent is durable, the result never came');

    const servers = defs({ everything: everythingStdio() });
    const rule = { server: 'everything', tool: 'trigger-long-running-operation', identity: servers[0]!.identity };
    resumed = mcpRunner({ baseURL: model.url, store, servers, rules: [rule] });
    const starts: string[] = [];
    resumed.runner.events.on((e) => e.type === 'tool' && e.status === 'start' && starts.push(e.toolCallId));
    await resumed.runner.markInterrupted();
    const first = await (await resumed.runner.resume(runId, { confirmed: true })).done;
    assert.equal(first.state, 'awaiting_approval', 'always allowed or not, it is not re-issued without the user');
    assert.deepEqual(starts, []);
    const [asked] = await store.listApprovals(runId, { pendingOnly: true });
    assert.equal(asked!.uncertain, true);
    assert.match(asked!.reason, /may already have run/);

    const done = await resumed.runner.decideApprovals(runId, [
      { toolCallId: asked!.tool_call_id, inputHash: asked!.input_hash, kind: 'approve' },
    ]);
    assert.equal((await done!.done).state, 'completed');
    assert.deepEqual(starts, [asked!.tool_call_id], 'run once');
    const [effect] = await store.listEffects(runId);
    assert.equal(effect!.result!.output, 'Long running operation completed. Duration: 2 seconds, Steps: 4.');
    await store.close();
  });

  it('a call of the batch that answered before the crash is replayed; only the one running is asked about', async () => {
    model = await startModelServer({
      scenario: {
        name: 'mcp-crash-batch',
        description: 'an answered call, then a long one killed mid-way',
        turns: [
          {
            reply: {
              content: 'Two calls.',
              tool_calls: [
                { name: 'everything__echo', arguments: { message: 'answered' } },
                { name: 'everything__trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
              ],
            },
          },
          { reply: { content: 'Both done.' } },
        ],
      },
    });
    const storeDir = tmp('mcp-crash-batch');
    const child = await runChild({ BASE_URL: model.url, STORE_DIR: storeDir });
    assert.equal(child.signal, 'SIGKILL');
    const runId = child.events.find((e) => e.event === 'started')!.runId as string;
    const store = openDiskStore(storeDir);
    const [echo, long] = await store.listEffects(runId);
    assert.equal(echo!.result?.output, 'Echo: answered', 'the answered call kept its result through the crash');
    assert.equal(long!.result, null);

    const servers = defs({ everything: everythingStdio() });
    resumed = mcpRunner({ baseURL: model.url, store, servers });
    await resumed.runner.markInterrupted();
    const out = await (await resumed.runner.resume(runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval');
    const asked = await store.listApprovals(runId, { pendingOnly: true });
    assert.deepEqual(
      asked.map((a) => [a.tool_name, a.uncertain]),
      [['everything__trigger-long-running-operation', true]],
      'only the call that was running is asked about',
    );
    await store.close();
  });
});
