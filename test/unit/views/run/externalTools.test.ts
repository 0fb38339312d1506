// The run view's external-tool requests: "Always allow" only on a pending external approval with the
// hash the user saw (and it approves that call), the exact result as the card shows it, progress text.
import assert from 'node:assert/strict';
import { createMemoryStore } from '../../../../src/store/memory/store';
import { alwaysAllow, CallProgress, toolResult } from '../../../../src/views/run/externalTools';
import { richResult } from '../../../../src/views/run/richResult';
import type { DecisionInput } from '../../../../src/runner/runner';
import { owner } from '../../loop/support';

const HASH = 'b'.repeat(64);

async function pending(category: 'external' | 'command') {
  const store = createMemoryStore();
  const { run, lease } = await store.createRun({ title: 't', task: 't', agent_name: 'a', model: 'm' }, owner());
  await store.requestApproval(run.run_id, {
    tool_call_id: 'call_1',
    step: 1,
    tool_name: category === 'external' ? 'everything__echo' : 'run_command',
    category,
    arguments: { message: 'hi' },
    input_hash: HASH,
    uncertain: false,
    reason: 'ask',
  });
  return { store, runId: run.run_id, lease };
}

describe('run view: external tools', () => {
  it('"Always allow" allows the tool and approves exactly the call the user saw', async () => {
    const { store, runId, lease } = await pending('external');
    await lease.release();
    const allowed: string[] = [];
    const decided: DecisionInput[][] = [];
    const deps = {
      store,
      decide: async (_: string, d: DecisionInput[]) => void decided.push(d),
      allow: async (name: string) => (allowed.push(name), `echo of everything`),
    };
    await assert.rejects(alwaysAllow(deps, { runId, toolCallId: 'call_1', inputHash: 'c'.repeat(64) }), /changed/);
    await assert.rejects(alwaysAllow(deps, { runId, toolCallId: 'call_2', inputHash: HASH }), /not waiting/);
    assert.deepEqual(allowed, [], 'nothing allowed by a stale or forged request');
    assert.equal(await alwaysAllow(deps, { runId, toolCallId: 'call_1', inputHash: HASH }), 'echo of everything');
    assert.deepEqual(allowed, ['everything__echo']);
    assert.deepEqual(decided, [[{ kind: 'approve', toolCallId: 'call_1', inputHash: HASH }]]);
  });

  it('refuses "Always allow" for the extension\'s own tools', async () => {
    const { store, runId, lease } = await pending('command');
    await lease.release();
    const deps = { store, decide: async () => undefined, allow: async () => 'x' };
    await assert.rejects(alwaysAllow(deps, { runId, toolCallId: 'call_1', inputHash: HASH }), /not an external tool/);
  });

  it('shows the exact result: safe images as images, anything else named, nothing dropped', () => {
    const r = richResult({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'A' } },
        { type: 'resource_link', uri: 'test://1', name: 'one' },
        { type: 'future-kind', x: 1 },
      ],
      structuredContent: { t: 1 },
      isError: true,
    });
    assert.deepEqual(
      r.parts.map((p) => p.type),
      ['text', 'image', 'media', 'resource', 'link', 'text'],
    );
    assert.equal(r.structured, '{\n  "t": 1\n}');
    assert.equal(r.isError, true);
    assert.match((r.parts[5] as { text: string }).text, /future-kind/);
  });

  it('a call without a kept result says so', async () => {
    const { store, runId, lease } = await pending('external');
    await lease.release();
    await assert.rejects(toolResult(store, runId, 'call_1'), /has no kept result/);
  });

  it('progress: the latest per running call, gone when it ends', () => {
    const p = new CallProgress();
    p.track({ type: 'tool-progress', runId: 'r', toolCallId: 'c', progress: 2, total: 5, message: 'copying' });
    assert.equal(p.of('r').get('c'), '2 of 5 — copying');
    p.track({ type: 'tool', runId: 'r', step: 1, toolCallId: 'c', toolName: 'x', status: 'end' });
    assert.equal(p.of('r').size, 0);
  });
});
