// The approval panel's script (browser). Renders what the host sends — the host reads it from the
// store, never from this webview's state — and posts decisions back. Every message the host sends
// is parsed with the shared protocol; text is set with textContent only (no HTML from data).
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import { type ApprovalView, HostMessage, type StateMessage, type WebviewMessage } from '../../src/views/approval/protocol';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; setState(state: unknown): void };
const vscode = acquireVsCodeApi();

let nextRequestId = 1;
const pending = new Map<number, HTMLElement>();
let current: StateMessage | undefined;

function post(message: WebviewMessage): void {
  vscode.postMessage(message);
}

function el(tag: string, attrs: Record<string, string> = {}, text?: string): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(label: string, icon: string, onClick: () => void, secondary = false): HTMLElement {
  const b = el('vscode-button', { icon, ...(secondary ? { secondary: '' } : {}) }, label);
  b.addEventListener('click', onClick);
  return b;
}

/** Sends a decision and disables the card until the host answers. */
function decide(card: HTMLElement, make: (requestId: number) => WebviewMessage): void {
  const requestId = nextRequestId++;
  pending.set(requestId, card);
  card.classList.add('busy');
  card.querySelectorAll('vscode-button').forEach((b) => b.setAttribute('disabled', ''));
  post(make(requestId));
}

function card(runId: string, a: ApprovalView, readOnly: boolean): HTMLElement {
  const root = el('section', { class: 'approval', 'data-run-id': runId, 'data-tool-call-id': a.toolCallId, 'data-input-hash': a.inputHash });
  const head = el('header');
  head.append(el('vscode-icon', { name: iconFor(a.category) }), el('span', { class: 'tool' }, a.toolName));
  head.append(el('vscode-badge', { variant: 'counter' }, a.category));
  head.append(el('span', { class: 'step' }, `step ${a.step}`));
  root.append(head);
  if (a.uncertain) {
    const warn = el('p', { class: 'warning', role: 'alert' });
    warn.append(el('vscode-icon', { name: 'warning' }), document.createTextNode(' May already have run: the window closed while this call was executing. Approve only if running it again is safe.'));
    root.append(warn);
  }
  root.append(el('p', { class: 'reason' }, a.reason));
  if (a.command !== null) {
    root.append(el('div', { class: 'label' }, 'Command'), el('pre', { class: 'command' }, a.command));
  }
  root.append(...argumentBlocks(a));
  if (readOnly) return root;

  const actions = el('div', { class: 'actions' });
  const base = { runId, toolCallId: a.toolCallId, inputHash: a.inputHash };
  actions.append(button('Approve', 'check', () => decide(root, (requestId) => ({ type: 'approve', requestId, ...base }))));
  const rejectBox = el('div', { class: 'reject hidden' });
  const reason = el('vscode-textarea', { placeholder: 'Why? The model sees this reason.', rows: '2' }) as HTMLElement & { value: string };
  rejectBox.append(
    reason,
    button('Reject with reason', 'close', () =>
      decide(root, (requestId) => ({ type: 'reject', requestId, ...base, reason: reason.value || 'Rejected by the user.' })),
    ),
  );
  actions.append(button('Reject…', 'close', () => rejectBox.classList.toggle('hidden'), true));
  const editBox = el('div', { class: 'edit hidden' });
  const editor = el('vscode-textarea', { rows: '8', monospace: '', 'aria-label': 'Edited arguments (JSON)' }) as HTMLElement & { value: string };
  editor.value = a.argumentsJson;
  editBox.append(
    editor,
    button('Approve edited', 'check', () =>
      decide(root, (requestId) => ({ type: 'approveEdited', requestId, ...base, argumentsJson: editor.value })),
    ),
  );
  actions.append(button('Edit arguments…', 'edit', () => editBox.classList.toggle('hidden'), true));
  if (a.path !== null && a.category === 'write') {
    actions.append(button('Show diff', 'diff', () => post({ type: 'showDiff', runId, toolCallId: a.toolCallId }), true));
  }
  root.append(actions, rejectBox, editBox, el('p', { class: 'error hidden', role: 'alert' }));
  return root;
}

/** Each argument under its name; multi-line text (file contents, edits) shown as text, not escaped JSON. */
function argumentBlocks(a: ApprovalView): HTMLElement[] {
  let args: unknown;
  try {
    args = JSON.parse(a.argumentsJson);
  } catch {
    args = undefined;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return [el('div', { class: 'label' }, 'Arguments'), el('pre', { class: 'args' }, a.argumentsJson)];
  }
  const out: HTMLElement[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (key === 'command' && a.command !== null) continue; // shown above as the exact command
    out.push(el('div', { class: 'label' }, key.replace(/_/g, ' ')));
    out.push(el('pre', { class: typeof value === 'string' ? 'args text' : 'args' }, typeof value === 'string' ? value : JSON.stringify(value, null, 2)));
  }
  return out;
}

function iconFor(category: ApprovalView['category']): string {
  return category === 'command' ? 'terminal' : category === 'write' ? 'edit' : category === 'subagent' ? 'organization' : 'file';
}

function render(state: StateMessage): void {
  current = state;
  // Only the run id is kept in webview state: after a reload the host restores the panel from it
  // and reads everything else from the store.
  if (state.run) vscode.setState({ runId: state.run.runId });
  const app = document.getElementById('app')!;
  app.replaceChildren();
  if (!state.run) {
    app.append(el('p', { class: 'empty' }, 'This run no longer exists.'));
    return;
  }
  const header = el('header', { class: 'run' });
  header.append(el('h1', {}, state.run.title), el('span', { class: 'state' }, `${state.run.state.replace(/_/g, ' ')} · step ${state.run.step}`));
  app.append(header);
  if (state.run.stateDetail) app.append(el('p', { class: 'detail' }, state.run.stateDetail));
  if (state.readOnly) app.append(el('p', { class: 'readonly', role: 'status' }, state.readOnly));
  if (state.approvals.length === 0) {
    app.append(el('p', { class: 'empty' }, 'No tool calls are waiting for approval in this run.'));
    return;
  }
  if (state.approvals.length > 1 && !state.readOnly) {
    const runId = state.run.runId;
    const all = button(`Approve all ${state.approvals.length}`, 'check-all', () => {
      const items = state.approvals.map((a) => ({ toolCallId: a.toolCallId, inputHash: a.inputHash }));
      decide(app, (requestId) => ({ type: 'approveAll', requestId, runId, items }));
    });
    all.classList.add('approve-all');
    app.append(all);
  }
  for (const a of state.approvals) app.append(card(state.run.runId, a, state.readOnly !== null));
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = HostMessage.safeParse(event.data);
  if (!parsed.success) return; // not ours (or malformed): ignore
  const msg = parsed.data;
  if (msg.type === 'state') {
    pending.clear();
    render(msg);
    return;
  }
  const target = pending.get(msg.requestId);
  pending.delete(msg.requestId);
  if (!target || msg.ok) return; // success: the host sends a fresh state
  target.classList.remove('busy');
  target.querySelectorAll('vscode-button').forEach((b) => b.removeAttribute('disabled'));
  const err = target.querySelector('.error');
  if (err) {
    err.textContent = msg.error ?? 'The decision was not accepted.';
    err.classList.remove('hidden');
  } else if (current) {
    render(current);
  }
});

post({ type: 'ready' });
