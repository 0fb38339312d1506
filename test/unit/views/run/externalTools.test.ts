// The run view's external-tool requests: the exact result as the card shows it, progress text.
// ("Always allow" is a decision: test/unit/actions/decide.test.ts.)
import assert from 'node:assert/strict';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { createMemoryStore } from '../../../../src/store/memory/store';
import { CallProgress, toolResult } from '../../../../src/views/run/externalTools';
import { richResult } from '../../../../src/views/run/richResult';
import { owner } from '../../loop/support';

describe('run view: external tools', () => {
  it('shows the exact result: safe images as images, anything else named, nothing dropped', () => {
    const kept = {
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
    };
    const r = richResult(kept, JSON.stringify(kept));
    assert.deepEqual(
      r.parts.map((p) => p.type),
      ['text', 'image', 'media', 'resource', 'link', 'text'],
    );
    assert.equal(r.structured, '{\n  "t": 1\n}');
    assert.equal(r.isError, true);
    assert.match((r.parts[5] as { text: string }).text, /future-kind/);
  });

  it('a call without a kept result says so', async () => {
    const store = createMemoryStore();
    const { run, lease } = await store.createRun({ title: 't', task: 't', agent_name: 'a', model: 'm' }, owner());
    await lease.release();
    const runId = run.run_id;
    await assert.rejects(toolResult(store, runId, 'call_1'), /has no kept result/);
  });

  it('a kept result too large to parse shows its beginning as kept, without parsing it on the host', async () => {
    const big = JSON.stringify({ content: [{ type: 'text', text: 'x'.repeat(5_000_000) }] });
    const store = {
      listEffects: async () => [{ tool_call_id: 'c', result: { raw_blob: 'b' } }],
      getBlob: async () => big,
    } as unknown as CheckpointStore;
    const r = await toolResult(store, 'r', 'c');
    assert.equal(r.parts.length, 1);
    const text = (r.parts[0] as { text: string }).text;
    assert.match(text, /^\(The result is 5,000,\d{3} characters of JSON, too large to show by part/);
    assert.ok(text.length < 101_000, `${text.length} characters sent to the card`);
    assert.ok(text.includes('{"content":[{"type":"text","text":"xxx'), 'the raw beginning');
  });

  it('progress: the latest per running call, gone when it ends', () => {
    const p = new CallProgress();
    p.track({ type: 'tool-progress', runId: 'r', toolCallId: 'c', progress: 2, total: 5, message: 'copying' });
    assert.equal(p.of('r').get('c'), '2 of 5 — copying');
    p.track({ type: 'tool', runId: 'r', step: 1, toolCallId: 'c', toolName: 'x', status: 'end' });
    assert.equal(p.of('r').size, 0);
  });
});
