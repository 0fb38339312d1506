// A run keeps its provider: the adapter it started with is recorded in its checkpoints (and in its
// summary's model label), and every resume asks for that adapter again.
import assert from 'node:assert/strict';
import { modelLabel, parseModelLabel } from '../../../src/runner/modelRef';
import { createProvider, type ChatProvider } from '../../../src/runner/provider';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from './support';

describe('agent loop: the provider adapter a run started with', function () {
  this.timeout(30_000);
  let server: ModelServer | undefined;
  afterEach(async () => server?.close());

  it('labels: the endpoint keeps plain model names, other adapters are prefixed, and both parse back', () => {
    assert.equal(modelLabel({ adapter: 'openai-compatible', model: 'llama3.1:8b' }), 'llama3.1:8b');
    assert.equal(modelLabel({ adapter: 'vscode-lm', model: 'copilot/gpt-4o' }), 'vscode-lm/copilot/gpt-4o');
    assert.deepEqual(parseModelLabel('vscode-lm/copilot/gpt-4o'), { adapter: 'vscode-lm', model: 'copilot/gpt-4o' });
    assert.deepEqual(parseModelLabel('openai/gpt-4o'), { adapter: 'openai-compatible', model: 'openai/gpt-4o' });
  });

  it('start and every resume ask for the recorded adapter; checkpoints and the summary name it', async () => {
    server = await startModelServer({
      scenario: {
        name: 'adapter',
        description: 'offline demo model: a write to approve, then an answer',
        turns: [
          {
            reply: { content: null, tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
          },
          { reply: { content: '(offline demo model) done' } },
        ],
      },
    });
    const asked: string[] = [];
    const url = server.url;
    const provider = (model: string, adapter: string): ChatProvider => {
      asked.push(`${adapter} ${model}`);
      const inner = createProvider({ baseURL: url, model, maxRetries: 0, timeoutMs: 5000 });
      // Stands in for the vscode.lm adapter (src/models): same server, its own adapter name.
      return {
        ...inner,
        provider_adapter: adapter,
        complete: async (req) => ({ ...(await inner.complete(req)), provider_adapter: adapter }),
      };
    };
    const { runner, store } = makeRunner({ baseURL: url, deps: { provider } });
    const h = await runner.start({ task: 'write a', model: 'copilot-gpt-4o', adapter: 'vscode-lm' });
    assert.equal((await h.done).state, 'awaiting_approval');
    assert.equal((await store.getRun(h.runId))?.model, 'vscode-lm/copilot-gpt-4o');
    const snap = (await store.loadSnapshot(h.runId)).snapshot;
    assert.deepEqual([snap.provider_adapter, snap.requested_model], ['vscode-lm', 'copilot-gpt-4o']);
    const [a] = await store.listApprovals(h.runId, { pendingOnly: true });
    const out = await (await runner.decideApprovals(h.runId, [
      { toolCallId: a!.tool_call_id, inputHash: a!.input_hash, kind: 'approve' },
    ]))!.done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.deepEqual(asked, ['vscode-lm copilot-gpt-4o', 'vscode-lm copilot-gpt-4o']);
    const terminal = (await store.latest(h.runId))!;
    assert.equal(terminal.payload.provider_adapter, 'vscode-lm');
  });
});
