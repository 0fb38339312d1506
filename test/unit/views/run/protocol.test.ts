import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HostMessage, parseWebviewMessage, Requests } from '../../../../src/views/run/protocol';

const hash = 'a'.repeat(64);
const req = (method: string, params: unknown, id = 1) => ({ type: 'request', id, method, params });

/** One well-formed request per method: what the webview really sends. */
const VALID: Record<keyof typeof Requests, unknown> = {
  page: { from: 0, to: 40 },
  approve: { runId: 'r1', toolCallId: 'c1', inputHash: hash },
  reject: { runId: 'r1', toolCallId: 'c1', inputHash: hash, reason: 'no' },
  approveEdited: { runId: 'r1', toolCallId: 'c1', inputHash: hash, argumentsJson: '{}' },
  retry: { runId: 'r1', toolCallId: 'c1', inputHash: hash, choice: 'allowForRun' },
  approveAll: { runId: 'r1', items: [{ toolCallId: 'c1', inputHash: hash }] },
  showDiff: { runId: 'r1', toolCallId: 'c1' },
  toolOutput: { runId: 'r1', toolCallId: 'c1' },
  alwaysAllow: { runId: 'r1', toolCallId: 'c1', inputHash: hash },
  toolResult: { runId: 'r1', toolCallId: 'c1' },
  runAction: { runId: 'r1', action: 'resume' },
  waypointAction: { runId: 'r1', seq: 3, action: 'restoreFiles' },
  restoreAction: { runId: 'r1', restoreId: 'restore-1', action: 'undo' },
  condenseAction: { runId: 'r1', condenseId: 'condense-12', action: 'undo' },
  send: { runId: 'r1', text: 'also add a test', clientId: 'c-1' },
};

describe('run view protocol', () => {
  it('accepts every request the webview sends, and ready', () => {
    assert.equal(parseWebviewMessage({ type: 'ready' }).ok, true);
    for (const [method, params] of Object.entries(VALID))
      assert.equal(parseWebviewMessage(req(method, params)).ok, true, method);
  });

  it('rejects malformed, unknown, smuggled and over-long messages with a reason for the log', () => {
    const bad: unknown[] = [
      null,
      undefined,
      'approve',
      42,
      [],
      {},
      { type: 'approve', runId: 'r', toolCallId: 'c', inputHash: hash }, // the old panel's shape
      req('launchMissiles', {}),
      req('approve', { runId: 'r', toolCallId: 'c', inputHash: 'short' }),
      req('approve', { runId: '', toolCallId: 'c', inputHash: hash }),
      req('approve', { runId: 'r', toolCallId: 'c', inputHash: hash, extra: 'smuggled' }),
      { ...req('approve', VALID.approve), extra: 1 },
      req('approve', VALID.approve, -1),
      req('reject', { ...(VALID.reject as object), reason: 'x'.repeat(5000) }),
      req('approveAll', { runId: 'r', items: [] }),
      req('send', { runId: 'r', text: '   ', clientId: 'c' }),
      req('runAction', { runId: 'r', action: 'deleteEverything' }),
      req('waypointAction', { runId: 'r', seq: 0, action: 'restoreFiles' }),
      req('waypointAction', { runId: 'r', seq: 2.5, action: 'restoreFiles' }),
      req('waypointAction', { runId: 'r', seq: 2, action: 'restoreEverything' }),
      req('waypointAction', { runId: 'r', seq: 2, action: 'restoreFiles', withFiles: true }),
      req('restoreAction', { runId: 'r', restoreId: '', action: 'undo' }),
      req('restoreAction', { runId: 'r', restoreId: 'restore-1', action: 'redo' }),
      req('restoreAction', { runId: 'r', restoreId: 'restore-1', action: 'openFork', forkedRunId: 'elsewhere' }), // the fork is read from the record, never from the view
      req('restoreAction', { runId: 'r', action: 'undo' }),
      { type: 'ready', also: 1 },
    ];
    for (const m of bad) {
      const r = parseWebviewMessage(m);
      assert.equal(r.ok, false, JSON.stringify(m) ?? String(m));
      if (!r.ok) assert.match(r.error, /^rejected webview message/);
    }
  });

  it('a well-formed request with any one field replaced by a value of another type is rejected (property)', () => {
    const methods = Object.keys(VALID) as (keyof typeof VALID)[];
    const other = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.object(),
      fc.array(fc.anything(), { maxLength: 2 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...methods), fc.nat(), other, (method, pick, value) => {
        const params = { ...(VALID[method] as Record<string, unknown>) };
        const keys = Object.keys(params);
        const key = keys[pick % keys.length]!;
        if (typeof value === typeof params[key] && Array.isArray(value) === Array.isArray(params[key])) return true; // same type: not a corruption
        params[key] = value;
        return parseWebviewMessage(req(method, params)).ok === false;
      }),
      { numRuns: 2000 },
    );
  });

  it('every decision that parses carries a 64-hex input hash and a run id (property over generated decisions)', () => {
    const decision = fc.record({
      method: fc.constantFrom('approve', 'reject', 'approveEdited'),
      runId: fc.string({ maxLength: 5 }),
      toolCallId: fc.string({ maxLength: 5 }),
      inputHash: fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ maxLength: 70 })),
    });
    let accepted = 0;
    fc.assert(
      fc.property(decision, ({ method, ...p }) => {
        const params = {
          ...p,
          ...(method === 'reject' ? { reason: '' } : method === 'approveEdited' ? { argumentsJson: '{}' } : {}),
        };
        const r = parseWebviewMessage(req(method, params));
        if (!r.ok) return true;
        accepted++;
        return /^[0-9a-f]{64}$/.test(p.inputHash) && p.runId.length > 0 && p.toolCallId.length > 0;
      }),
      { numRuns: 2000 },
    );
    assert.ok(accepted > 100, `the generator produced well-formed decisions too (${accepted})`);
  });

  it('host messages parse in the webview the same way; responses are checked against their request’s result', () => {
    const state = {
      type: 'state',
      version: 1,
      threadId: 't',
      focusRunId: 'r',
      runs: [],
      outline: [['k', 40]],
      partial: false,
      page: null,
      readOnly: null,
      composerHint: '',
      approvalMode: { label: 'commands: auto in sandbox · network: 2 domains', detail: 'x' },
      streaming: null,
    };
    assert.equal(HostMessage.safeParse(state).success, true);
    assert.equal(HostMessage.safeParse({ type: 'state' }).success, false);
    assert.equal(HostMessage.safeParse({ type: 'response', id: 1, ok: false, error: 'x' }).success, true);
    assert.equal(HostMessage.safeParse({ type: 'delta', runId: 'r', step: 1, kind: 'text', text: 'hi' }).success, true);
    assert.equal(Requests.send.result.safeParse({ kind: 'follow-up', runId: 'r2', when: null }).success, true);
    assert.equal(
      Requests.page.result.safeParse({ version: 1, from: 0, items: [{ kind: 'turn' }] }).success,
      false,
      'a malformed item is refused',
    );
  });
});
