// An item the view fails to draw (media/src/runView/failed.ts) is drawn from its strings alone: its
// text, as text, with the reason — and a waiting call stays a card the view's code finds, with
// its decision buttons, which send the decision as the card's own do.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { failedItem } from '../../../../media/src/runView/failed';
import type { Actions } from '../../../../media/src/runView/toolCard';
import type { ToolItem } from '../../../../src/views/run/items';

const HASH = 'a'.repeat(64);
const waiting: ToolItem = {
  kind: 'tool',
  key: 'r1:t:call_1',
  runId: 'r1',
  step: 1,
  toolCallId: 'call_1',
  name: 'run_command',
  category: 'command',
  title: 'run_command npm test',
  args: [{ name: 'command', value: 'npm test' }],
  argumentsJson: '{\n  "command": "npm test"\n}',
  argumentsEditable: true,
  status: 'awaiting',
  output: null,
  outputChars: 0,
  exitCode: null,
  durationMs: null,
  replayed: false,
  uncertain: false,
  approval: {
    pending: true,
    inputHash: HASH,
    reason: 'Commands ask',
    decision: null,
    decisionReason: null,
    retry: null,
  },
  diff: null,
  external: false,
  rich: false,
  progress: null,
  sandbox: null,
  changedFiles: [],
  changedFilesTotal: 0,
};

describe('run view: an item that fails to draw', () => {
  const dom = new JSDOM('<!doctype html><html><body></body></html>');
  const decided: { method: string; params: unknown }[] = [];
  const actions = {
    decide: (_card: HTMLElement, method: string, params: unknown) => void decided.push({ method, params }),
    readOnly: () => false,
    showDiff: () => undefined,
  } as unknown as Actions;
  before(() => Object.assign(globalThis, { document: dom.window.document, window: dom.window }));
  after(() => {
    delete (globalThis as { document?: unknown }).document;
    delete (globalThis as { window?: unknown }).window;
  });

  it('a waiting call: its card, its text and why, and Approve, Reject and Edit that send the decision', () => {
    const card = failedItem(waiting, new RangeError('Maximum call stack size exceeded'), actions);
    assert.ok(card.matches('section.tool.approval[data-tool-call-id="call_1"]'), card.outerHTML.slice(0, 200));
    assert.equal(card.getAttribute('data-input-hash'), HASH);
    assert.match(card.querySelector('.render-note')!.textContent!, /could not be rendered: Maximum call stack size/);
    assert.match(card.querySelector('pre.raw')!.textContent!, /run_command npm test[\s\S]*"command": "npm test"/);
    const buttons = [...card.querySelectorAll<HTMLElement>('vscode-button')];
    for (const label of ['Approve', 'Reject…', 'Edit arguments…'])
      assert.ok(
        buttons.some((b) => b.textContent === label),
        label,
      );
    buttons.find((b) => b.textContent === 'Approve')!.click();
    assert.deepEqual(decided, [{ method: 'approve', params: { runId: 'r1', toolCallId: 'call_1', inputHash: HASH } }]);
  });

  it('an answer: its text as text, with why', () => {
    const text = '<img src=x onerror=alert(1)> **not bold**';
    const item = {
      kind: 'assistant',
      key: 'r1:a:2',
      runId: 'r1',
      step: 1,
      text,
      reasoning: null,
      final: true,
    } as const;
    const drawn = failedItem(item, new Error('boom\nPlease report this'), actions);
    assert.equal(drawn.querySelector('.render-note')!.textContent, ' This assistant item could not be rendered: boom');
    assert.equal(drawn.querySelector('pre.raw')!.textContent, text);
    assert.equal(drawn.querySelector('img, strong'), null);
  });
});
