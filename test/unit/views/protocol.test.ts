import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HostMessage, parseWebviewMessage } from '../../../src/views/approval/protocol';

const hash = 'a'.repeat(64);

describe('approval webview protocol', () => {
  it('accepts the messages the webview sends', () => {
    const ok = [
      { type: 'ready' },
      { type: 'approve', requestId: 1, runId: 'r1', toolCallId: 'c1', inputHash: hash },
      { type: 'reject', requestId: 2, runId: 'r1', toolCallId: 'c1', inputHash: hash, reason: 'no' },
      { type: 'approveEdited', requestId: 3, runId: 'r1', toolCallId: 'c1', inputHash: hash, argumentsJson: '{}' },
      { type: 'approveAll', requestId: 4, runId: 'r1', items: [{ toolCallId: 'c1', inputHash: hash }] },
      { type: 'showDiff', runId: 'r1', toolCallId: 'c1' },
    ];
    for (const m of ok) assert.equal(parseWebviewMessage(m).ok, true, JSON.stringify(m));
  });

  it('rejects malformed, unknown and over-long messages with a reason for the log', () => {
    const bad: unknown[] = [
      null,
      undefined,
      'approve',
      42,
      [],
      {},
      { type: 'launch' },
      { type: 'approve' },
      { type: 'approve', requestId: 1, runId: 'r', toolCallId: 'c', inputHash: 'short' },
      { type: 'approve', requestId: -1, runId: 'r', toolCallId: 'c', inputHash: hash },
      { type: 'approve', requestId: 1, runId: '', toolCallId: 'c', inputHash: hash },
      { type: 'approve', requestId: 1, runId: 'r', toolCallId: 'c', inputHash: hash, extra: 'smuggled' },
      { type: 'reject', requestId: 1, runId: 'r', toolCallId: 'c', inputHash: hash, reason: 'x'.repeat(5000) },
      { type: 'approveAll', requestId: 1, runId: 'r', items: [] },
      { type: 'ready', also: 1 },
    ];
    for (const m of bad) {
      const r = parseWebviewMessage(m);
      assert.equal(r.ok, false, JSON.stringify(m) ?? String(m));
      if (!r.ok) assert.match(r.error, /^rejected webview message/);
    }
  });

  it('never accepts random input as a decision unless every field is well-formed (property)', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const r = parseWebviewMessage(raw);
        if (!r.ok) return true;
        const m = r.message;
        if (m.type === 'ready' || m.type === 'showDiff') return true;
        return typeof m.runId === 'string' && m.runId.length > 0 && Number.isInteger(m.requestId);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.record({ type: fc.constantFrom('approve', 'reject', 'approveEdited', 'approveAll'), requestId: fc.integer(), runId: fc.string(), toolCallId: fc.string(), inputHash: fc.string() }), (raw) => {
        const r = parseWebviewMessage(raw);
        return !r.ok || (/^[0-9a-f]{64}$/.test(raw.inputHash) && raw.runId.length > 0);
      }),
      { numRuns: 2000 },
    );
  });

  it('host messages parse in the webview the same way', () => {
    const state = { type: 'state', run: null, approvals: [], readOnly: null };
    assert.equal(HostMessage.safeParse(state).success, true);
    assert.equal(HostMessage.safeParse({ type: 'state' }).success, false);
    assert.equal(HostMessage.safeParse({ type: 'result', requestId: 1, ok: false, error: 'x' }).success, true);
  });
});
