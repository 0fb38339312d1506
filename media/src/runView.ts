// The run view's script: a header (state, model, step, tokens, cost, actions), the thread's
// transcript as a virtualized list paged from the host, streamed text appended once per frame,
// and a composer. Everything shown comes from the host (read from the store); the webview keeps
// only ids and its scroll position (vscode.setState), so a reload restores the same view.
import type { TranscriptItem } from '../../src/views/run/items';
import type { RunHeader, StateMessage } from '../../src/views/run/protocol';
import { badge, button, el, icon } from './runView/dom';
import { assistant, renderItem, type Actions } from './runView/items';
import { listen, request, vscode } from './runView/rpc';
import { VirtualList } from './runView/virtualList';

const PAGE = 40;
const LIVE_KEY = '__live__';

let state: StateMessage | undefined;
const items = new Map<number, TranscriptItem>();
/** Pages asked for (first index → when): a page whose answer got lost or went stale is asked again. */
const requested = new Map<number, number>();
let live: {
  runId: string;
  step: number;
  text: string;
  reasoning: string;
  buffered: string;
  bufferedReasoning: string;
} | null = null;
let liveFrame = 0;
/** For the benchmark: what arrived and what was drawn. */
const stats = {
  deltas: 0,
  charsReceived: 0,
  charsRendered: 0,
  maxBacklog: 0,
  frames: 0,
  scriptStartMs: performance.now(),
  stateMs: -1,
  firstPageMs: -1,
  firstPaintMs: -1,
};
(globalThis as unknown as { __runViewStats: typeof stats }).__runViewStats = stats;

const app = document.getElementById('app')!;
const header = el('header', { class: 'run-header' });
const banner = el('div', { class: 'banners' });
const scroller = el('main', { class: 'transcript', 'aria-live': 'polite' });
const composer = el('footer', { class: 'composer' });
app.replaceChildren(header, banner, scroller, composer);

const toolResults = new Map<string, ReturnType<Actions['toolResult']>>();
const actions: Actions = {
  decide(card, method, params) {
    card.classList.add('busy');
    card.querySelectorAll('vscode-button').forEach((b) => b.setAttribute('disabled', ''));
    request(method, params as never).catch((err: Error) => {
      card.classList.remove('busy');
      card.querySelectorAll('vscode-button').forEach((b) => b.removeAttribute('disabled'));
      const e = card.querySelector('.error');
      if (e) {
        e.textContent = err.message;
        e.classList.remove('hidden');
      }
    });
  },
  showDiff: (runId, toolCallId) => void request('showDiff', { runId, toolCallId }).catch(showError),
  toolOutput: (runId, toolCallId) => request('toolOutput', { runId, toolCallId }).then((r) => r.text),
  toolResult: (runId, toolCallId) => {
    // A recorded result never changes: asked once per card, however often the card is drawn again.
    const key = `${runId}/${toolCallId}`;
    let r = toolResults.get(key);
    if (!r) toolResults.set(key, (r = request('toolResult', { runId, toolCallId })));
    r.catch(() => toolResults.delete(key));
    return r;
  },
  run: (runId, action) => void request('runAction', { runId, action }).catch(showError),
  waypoint: (runId, seq, action) => void request('waypointAction', { runId, seq, action }).catch(showError),
  restore: (runId, restoreId, action) => void request('restoreAction', { runId, restoreId, action }).catch(showError),
  condense: (runId, condenseId) =>
    void request('condenseAction', { runId, condenseId, action: 'undo' }).catch(showError),
  readOnly: () => state?.readOnly != null,
  whyNot: (runId) => state?.runs.find((r) => r.runId === runId)?.whyNot ?? { restore: null, resume: null },
  expanded: new Map(),
};

const list = new VirtualList({
  scroller,
  render: (index, key) => {
    if (key === LIVE_KEY)
      return live ? assistant(live.text, live.reasoning || null, { final: false, streaming: true }) : el('div');
    const item = items.get(index);
    if (!item || item.key !== key) return el('div', { class: 'placeholder' });
    return renderItem(item, actions);
  },
  visible: (from, to) => load(from, to),
});

function load(from: number, to: number): void {
  if (!state) return;
  const count = state.outline.length;
  for (let p = Math.floor(from / PAGE) * PAGE; p < Math.min(to, count); p += PAGE) {
    if ((requested.get(p) ?? -Infinity) > performance.now() - 3000) continue;
    requested.set(p, performance.now());
    const version = state.version;
    request('page', { from: p, to: p + PAGE }).then(
      (r) => {
        if (!state || r.version !== state.version || version !== state.version) {
          requested.delete(p);
          list.refresh(); // asks again for what is still missing
          return;
        }
        r.items.forEach((item, i) => {
          const before = items.get(r.from + i);
          items.set(r.from + i, item);
          if (!before || JSON.stringify(before) !== JSON.stringify(item)) list.invalidate(item.key);
        });
        if (stats.firstPageMs < 0) stats.firstPageMs = performance.now();
        if (stats.firstPaintMs < 0) requestAnimationFrame(() => (stats.firstPaintMs = performance.now()));
      },
      () => void requested.delete(p),
    );
  }
}

function onState(next: StateMessage): void {
  if (stats.stateMs < 0) stats.stateMs = performance.now();
  const versionChanged = next.version !== state?.version;
  state = next;
  if (versionChanged) requested.clear();
  if (live && (!next.streaming || next.streaming.runId !== live.runId || next.streaming.step !== live.step))
    live = null;
  if (next.streaming && !live)
    live = {
      runId: next.streaming.runId,
      step: next.streaming.step,
      text: '',
      reasoning: '',
      buffered: '',
      bufferedReasoning: '',
    };
  if (live && next.streaming?.text !== undefined) {
    // The host's text so far replaces what arrived before it (the deltas it had not sent yet are in it).
    Object.assign(live, {
      text: next.streaming.text,
      reasoning: next.streaming.reasoning ?? '',
      buffered: '',
      bufferedReasoning: '',
    });
    list.invalidate(LIVE_KEY);
  }
  renderHeader(next);
  renderComposer(next);
  const outline = live ? [...next.outline, [LIVE_KEY, 80] as [string, number]] : next.outline;
  list.setOutline(outline);
  if (versionChanged) list.invalidate(LIVE_KEY);
  saveState();
}

function renderHeader(s: StateMessage): void {
  const run = s.runs[s.runs.length - 1]!;
  const first = s.runs[0]!;
  const title = el('h1', {}, first.title);
  const meta = el('div', { class: 'meta' });
  meta.append(
    badge(run.stateLabel, `state state-${run.state}`),
    el('span', {}, run.model),
    el('span', {}, `step ${run.step}`),
  );
  if (run.context) meta.append(contextMeter(run.context));
  meta.append(ledger(run, s.runs));
  if (run.budget) meta.append(el('span', { title: 'Budget of this run' }, `budget ${run.budget}`));
  if (s.runs.length > 1) meta.append(el('span', {}, `${s.runs.length} turns`));
  const bar = el('div', { class: 'run-actions' });
  for (const a of run.actions) bar.append(actionButton(run, a));
  header.replaceChildren(el('div', { class: 'titles' }), bar);
  header.firstElementChild!.append(title, meta);
  banner.replaceChildren();
  for (const n of run.notices) banner.append(el('p', { class: 'notice', role: 'note' }, n));
  if (run.detail) banner.append(el('p', { class: 'detail' }, run.detail));
  if (s.readOnly) banner.append(el('p', { class: 'readonly', role: 'status' }, s.readOnly));
  const pending = run.pendingCalls;
  if (pending.length > 1 && !s.readOnly) {
    const all = button(`Approve all ${pending.length}`, 'check-all', () => {
      all.setAttribute('disabled', '');
      request('approveAll', { runId: run.runId, items: pending }).catch(
        (e: Error) => (all.removeAttribute('disabled'), showError(e)),
      );
    });
    all.classList.add('approve-all');
    banner.append(all);
  }
}

/** "context: 41% of 128k" with a bar; the exact figures in its tooltip. */
function contextMeter(c: NonNullable<RunHeader['context']>): HTMLElement {
  const pct = Math.min(100, Math.round((100 * c.tokens) / c.window));
  const meter = el('span', {
    class: `context-meter${pct >= 80 ? ' high' : ''}`,
    title: `The last request: ${c.tokens.toLocaleString()} of ${c.window.toLocaleString()} tokens${c.estimated ? " (estimated: not the model's own tokenizer)" : ''}. Older turns are condensed past the threshold; the run keeps the whole history.`,
  });
  const bar = el('span', { class: 'bar' });
  const fill = el('span', { class: 'fill' });
  fill.style.width = `${pct}%`;
  bar.append(fill);
  meter.append(el('span', {}, c.label), bar);
  return meter;
}

/** Tokens and cost of this run, and of the whole thread when it has several turns; "estimated" where counted by us. */
function ledger(run: RunHeader, runs: readonly RunHeader[]): HTMLElement {
  const u = run.usage;
  const parts = [`${run.tokens.toLocaleString()} tokens`];
  const detail = [
    `prompt ${u.prompt.toLocaleString()}`,
    ...(u.cached !== null ? [`cached ${u.cached.toLocaleString()}`] : []),
    `completion ${u.completion.toLocaleString()}`,
    ...(u.reasoning !== null ? [`reasoning ${u.reasoning.toLocaleString()}`] : []),
  ];
  parts.push(run.costUsd === null ? 'cost unknown' : `$${run.costUsd.toFixed(4)}`);
  if (runs.length > 1) {
    const tokens = runs.reduce((n, r) => n + r.tokens, 0);
    const cost = runs.some((r) => r.costUsd === null) ? null : runs.reduce((n, r) => n + (r.costUsd ?? 0), 0);
    parts.push(`thread ${tokens.toLocaleString()} tokens, ${cost === null ? 'cost unknown' : `$${cost.toFixed(4)}`}`);
  }
  const estimated = runs.some((r) => r.usage.estimated);
  return el(
    'span',
    {
      class: 'ledger',
      title: `This run: ${detail.join(' · ')}${estimated ? ' (estimated: the provider reported no usage)' : ''}`,
    },
    `${parts.join(' · ')}${estimated ? ' (estimated)' : ''}`,
  );
}

const ACTION_LABELS = {
  cancel: ['Cancel', 'debug-stop'],
  resume: ['Resume', 'debug-continue'],
  fork: ['Fork', 'repo-forked'],
  export: ['Export', 'export'],
  openInTree: ['Open in tree', 'list-tree'],
} as const;
function actionButton(run: RunHeader, a: RunHeader['actions'][number]): HTMLElement {
  const [label, iconName] = ACTION_LABELS[a];
  return button(label, iconName, () => actions.run(run.runId, a), { secondary: a !== 'resume' && a !== 'cancel' });
}

let draft = '';
function renderComposer(s: StateMessage): void {
  const run = s.runs[s.runs.length - 1]!;
  const box = el('vscode-textarea', {
    rows: '2',
    placeholder: 'Message the agent… (Ctrl+Enter to send)',
    'aria-label': 'Message',
  }) as HTMLElement & { value: string };
  box.value = draft;
  box.addEventListener('input', () => (draft = box.value));
  const send = () => {
    const text = box.value.trim();
    if (!text) return;
    sendButton.setAttribute('disabled', '');
    request('send', {
      runId: run.runId,
      text,
      clientId: `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
    }).then(
      () => ((draft = ''), (box.value = ''), sendButton.removeAttribute('disabled'), list.scrollToEnd()),
      (e: Error) => (sendButton.removeAttribute('disabled'), showError(e)),
    );
  };
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send();
  });
  const sendButton = button('Send', 'send', send);
  if (s.readOnly) {
    box.setAttribute('disabled', '');
    sendButton.setAttribute('disabled', '');
  }
  const hint = el('p', { class: 'hint' });
  hint.append(icon('info'), document.createTextNode(` ${s.readOnly ? 'Read-only here.' : s.composerHint}`));
  const row = el('div', { class: 'row' });
  row.append(box, sendButton);
  composer.replaceChildren(row, hint);
}

function onDelta(d: { runId: string; step: number; kind: 'text' | 'reasoning'; text: string }): void {
  stats.deltas += 1;
  stats.charsReceived += d.text.length;
  if (!live || live.runId !== d.runId || live.step !== d.step) {
    live = { runId: d.runId, step: d.step, text: '', reasoning: '', buffered: '', bufferedReasoning: '' };
    if (state) list.setOutline([...state.outline, [LIVE_KEY, 80]]);
  }
  if (d.kind === 'text') live.buffered += d.text;
  else live.bufferedReasoning += d.text;
  stats.maxBacklog = Math.max(stats.maxBacklog, live.buffered.length + live.bufferedReasoning.length);
  // Tokens arrive many times a frame: draw once per frame, whatever arrived since.
  liveFrame ||= requestAnimationFrame(() => {
    liveFrame = 0;
    if (!live) return;
    stats.frames += 1;
    stats.charsRendered += live.buffered.length + live.bufferedReasoning.length;
    live.text += live.buffered;
    live.reasoning += live.bufferedReasoning;
    live.buffered = live.bufferedReasoning = '';
    list.invalidate(LIVE_KEY);
  });
}

function showError(err: Error): void {
  const p = el('p', { class: 'error', role: 'alert' }, err.message);
  banner.append(p);
  setTimeout(() => p.remove(), 8000);
}

function saveState(): void {
  if (!state) return;
  vscode.setState({ runId: state.focusRunId, threadId: state.threadId, anchor: list.anchor() });
}
scroller.addEventListener('scroll', () => requestAnimationFrame(saveState), { passive: true });

const saved = vscode.getState() as { anchor?: { key: string; offset: number } | null } | undefined;
let restored = false;
listen((m) => {
  if (m.type === 'state') {
    onState(m);
    if (!restored) {
      restored = true;
      list.restore(saved?.anchor ?? null);
    }
  } else if (m.type === 'delta') onDelta(m);
  else if (m.type === 'reveal') {
    if (!list.scrollToKey(m.key)) setTimeout(() => list.scrollToKey(m.key), 100);
  }
});
