// A command the sandbox blocked, waiting on its card: what it wanted ("`curl …` wanted
// registry.npmjs.org") and its answers — Allow for this run, Always, Run outside the sandbox once,
// Deny — each sent as its decision; no plain Approve (a retry's access is chosen). A command that
// ran says where (in the sandbox, with its profile, or outside) and lists the files it changed.
// The header says how this workspace approves commands.
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { renderHeader } from '../../../../media/src/runView/header';
import { toolCard, type Actions } from '../../../../media/src/runView/toolCard';
import type { ToolItem } from '../../../../src/views/run/items';
import type { StateMessage } from '../../../../src/views/run/protocol';

const HASH = 'b'.repeat(64);
const blocked: ToolItem = {
  kind: 'tool',
  key: 'r1:t:call_1',
  runId: 'r1',
  step: 1,
  toolCallId: 'call_1',
  name: 'run_command',
  category: 'command',
  title: 'run_command npm install',
  args: [{ name: 'command', value: 'npm install' }],
  argumentsJson: '{"command":"npm install"}',
  argumentsEditable: true,
  status: 'awaiting',
  output: 'exit code: 1\nsandbox blocked: network: registry.npmjs.org (not allowed)',
  outputChars: 70,
  exitCode: 1,
  durationMs: 900,
  replayed: false,
  uncertain: false,
  approval: {
    pending: true,
    inputHash: HASH,
    reason: 'The sandbox blocked this command: it wanted network access to registry.npmjs.org.',
    decision: null,
    decisionReason: null,
    retry: { domains: ['registry.npmjs.org'], writes: [], unixSockets: false },
  },
  diff: null,
  external: false,
  rich: false,
  progress: null,
  sandbox: 'Ran in the sandbox: workspace writable · network: none · 512 processes, 8 GiB memory, 1 GiB tmp',
  changedFiles: ['package-lock.json'],
  changedFilesTotal: 3,
};

describe('run view: a command in the sandbox', () => {
  const dom = new JSDOM('<!doctype html><html><body></body></html>');
  let decided: { method: string; params: unknown }[] = [];
  const actions = {
    decide: (_card: HTMLElement, method: string, params: unknown) => void decided.push({ method, params }),
    readOnly: () => false,
    showDiff: () => undefined,
    expanded: new Map(),
  } as unknown as Actions;
  before(() => Object.assign(globalThis, { document: dom.window.document, window: dom.window }));
  after(() => {
    delete (globalThis as { document?: unknown }).document;
    delete (globalThis as { window?: unknown }).window;
  });
  beforeEach(() => (decided = []));

  it('a blocked one: what it wanted, and Allow for this run / Always / Run outside once / Deny, each its decision', () => {
    const card = toolCard(blocked, actions);
    assert.equal(card.querySelector('.wanted')!.textContent, ' npm install wanted registry.npmjs.org');
    const buttons = [...card.querySelectorAll<HTMLElement>('vscode-button')].map((b) => b.textContent);
    assert.deepEqual(buttons, ['Allow for this run', 'Always', 'Run outside the sandbox once', 'Deny']);
    const click = (label: string) =>
      [...card.querySelectorAll<HTMLElement>('vscode-button')].find((b) => b.textContent === label)!.click();
    const base = { runId: 'r1', toolCallId: 'call_1', inputHash: HASH };
    click('Allow for this run');
    click('Always');
    click('Run outside the sandbox once');
    click('Deny');
    assert.deepEqual(decided, [
      { method: 'retry', params: { ...base, choice: 'allowForRun' } },
      { method: 'retry', params: { ...base, choice: 'allowAlways' } },
      { method: 'retry', params: { ...base, choice: 'runOutside' } },
      { method: 'reject', params: { ...base, reason: 'The user did not allow more access.' } },
    ]);
  });

  it('a blocked write offers no domain, only a run outside the sandbox, or Deny', () => {
    const write = {
      ...blocked,
      approval: { ...blocked.approval!, retry: { domains: [], writes: ['.git/config'], unixSockets: false } },
    };
    const card = toolCard(write, actions);
    assert.equal(card.querySelector('.wanted')!.textContent, ' npm install wanted to write .git/config');
    const buttons = [...card.querySelectorAll<HTMLElement>('vscode-button')].map((b) => b.textContent);
    assert.deepEqual(buttons, ['Run outside the sandbox once', 'Deny']);
  });

  it('a command that ran: where, and the files it changed', () => {
    const done = { ...blocked, status: 'done' as const, approval: null };
    const card = toolCard(done, actions);
    assert.equal(card.querySelector('.sandbox')!.textContent, ` ${blocked.sandbox}`);
    assert.deepEqual(
      [...card.querySelectorAll('.changed-files li')].map((l) => l.textContent),
      ['package-lock.json', 'and 2 more'],
    );
  });

  it('the header: how this workspace approves commands, with why in its tooltip', () => {
    const header = dom.window.document.createElement('header');
    const banner = dom.window.document.createElement('div');
    const run = {
      runId: 'r1',
      title: 't',
      state: 'completed',
      stateLabel: 'completed',
      detail: null,
      model: 'm',
      step: 1,
      tokens: 0,
      costUsd: 0,
      context: null,
      usage: { prompt: 0, cached: null, completion: 0, reasoning: null, estimated: false },
      budget: null,
      pendingApprovals: 0,
      pendingCalls: [],
      actions: [],
      whyNot: { restore: null, resume: null },
      notices: [],
    };
    const state = {
      runs: [run],
      readOnly: null,
      approvalMode: { label: 'commands: auto in sandbox · network: 2 domains', detail: 'Allowed domains: a, b.' },
    } as unknown as StateMessage;
    renderHeader(header, banner, state, {
      run: () => undefined,
      approveAll: async () => undefined,
      showError: () => undefined,
    });
    const mode = header.querySelector('.approval-mode')!;
    assert.equal(mode.textContent, ' commands: auto in sandbox · network: 2 domains');
    assert.equal(mode.getAttribute('title'), 'Allowed domains: a, b.');
  });
});
