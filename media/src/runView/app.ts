// The run view wired together: host messages go through the reducer (viewState.ts), its effects to
// the screen (render.ts) and to the host (rpc.ts: page requests, the user's actions). Everything
// the page provides — window, #app, the VS Code API — is passed in, so the unit tests start the
// same code in a DOM of their own.
import { afterNextPaint } from './dom';
import type { Highlighter } from './highlighter';
import { highlightIn, setHighlighter, whenHighlighterWanted } from './markdown';
import { createRpc, type Notification, type VsCodeApi } from './rpc';
import { RunViewScreen, type ScreenActions } from './render';
import { initialState, reduce, savedState, type SavedState, type ViewEvent, type ViewState } from './viewState';

export interface RunViewEnv {
  window: Window;
  root: HTMLElement;
  api: VsCodeApi;
  /** Loads the code highlighter (its own script); asked for at the first code block drawn. Absent: code stays plain. */
  loadHighlighter?(): Promise<Highlighter>;
}

/** What arrived and what was drawn, and when (performance.now() of the page): for the benchmark. */
export interface RunViewStats {
  deltas: number;
  charsReceived: number;
  charsRendered: number;
  /** Most streamed characters waiting for a frame at once. */
  maxBacklog: number;
  frames: number;
  scriptStartMs: number;
  /** The first state message. */
  stateMs: number;
  /** The first items to draw (inline in a state, or a page). */
  firstPageMs: number;
  /** The frame that first shows items. */
  firstPaintMs: number;
  /** The first state with the whole thread (a long thread's first state holds only its end). */
  wholeMs: number;
}

export interface RunViewApp {
  readonly stats: RunViewStats;
  state(): ViewState;
  readonly screen: RunViewScreen;
}

export function startRunView(env: RunViewEnv): RunViewApp {
  const { window: win, api } = env;
  const now = () => win.performance.now();
  const stats: RunViewStats = {
    deltas: 0,
    charsReceived: 0,
    charsRendered: 0,
    maxBacklog: 0,
    frames: 0,
    scriptStartMs: now(),
    stateMs: -1,
    firstPageMs: -1,
    firstPaintMs: -1,
    wholeMs: -1,
  };
  const rpc = createRpc(api, win);
  const { loadHighlighter } = env;
  if (loadHighlighter)
    // Loaded after the frame that shows the first code block (plain), not on that frame's path.
    whenHighlighterWanted(() =>
      afterNextPaint(win, () =>
        loadHighlighter().then(
          (h) => {
            setHighlighter(h);
            highlightIn(env.root);
          },
          () => undefined, // code stays plain text
        ),
      ),
    );
  let state = initialState(api.getState() as SavedState | undefined);
  let frame = 0;
  const fail = (err: Error) => screen.showError(err);
  const toolResults = new Map<string, ReturnType<ScreenActions['toolResult']>>();
  const actions: ScreenActions = {
    decide(card, method, params) {
      card.classList.add('busy');
      card.querySelectorAll('vscode-button').forEach((b) => b.setAttribute('disabled', ''));
      rpc.request(method, params as never).catch((err: Error) => {
        card.classList.remove('busy');
        card.querySelectorAll('vscode-button').forEach((b) => b.removeAttribute('disabled'));
        const e = card.querySelector('.error');
        if (e) {
          e.textContent = err.message;
          e.classList.remove('hidden');
        }
      });
    },
    showDiff: (runId, toolCallId) => void rpc.request('showDiff', { runId, toolCallId }).catch(fail),
    toolOutput: (runId, toolCallId) => rpc.request('toolOutput', { runId, toolCallId }).then((r) => r.text),
    toolResult: (runId, toolCallId) => {
      // A recorded result never changes: asked once per card, however often the card is drawn again.
      const key = `${runId}/${toolCallId}`;
      let r = toolResults.get(key);
      if (!r) toolResults.set(key, (r = rpc.request('toolResult', { runId, toolCallId })));
      r.catch(() => toolResults.delete(key));
      return r;
    },
    run: (runId, action) => void rpc.request('runAction', { runId, action }).catch(fail),
    waypoint: (runId, seq, action) => void rpc.request('waypointAction', { runId, seq, action }).catch(fail),
    restore: (runId, restoreId, action) => void rpc.request('restoreAction', { runId, restoreId, action }).catch(fail),
    condense: (runId, condenseId) =>
      void rpc.request('condenseAction', { runId, condenseId, action: 'undo' }).catch(fail),
    readOnly: () => state.host?.readOnly != null,
    whyNot: (runId) => state.host?.runs.find((r) => r.runId === runId)?.whyNot ?? { restore: null, resume: null },
    approveAll: (runId, items) => rpc.request('approveAll', { runId, items }),
    send: (runId, text) =>
      rpc.request('send', {
        runId,
        text,
        clientId: `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
      }),
  };
  const screen = new RunViewScreen({
    root: env.root,
    actions,
    item: (key) => state.items.get(key),
    live: () => state.live,
    visible: (from, to) => dispatch({ type: 'visible', from, to, now: now() }),
  });

  const save = () => api.setState(savedState(state, screen.list.anchor()));

  function dispatch(e: ViewEvent): void {
    const before = state;
    const { state: next, effects } = reduce(state, e);
    state = next;
    measure(e, before);
    screen.apply(next, effects);
    for (const r of effects.requests)
      rpc.request('page', { from: r.from, to: r.to }).then(
        (result) => dispatch({ type: 'page', result }),
        () => dispatch({ type: 'pageFailed', from: r.from }),
      );
    if (effects.frame) frame ||= win.requestAnimationFrame(() => ((frame = 0), dispatch({ type: 'frame' })));
    if (effects.save) save();
    if (stats.firstPaintMs < 0 && screen.shownItems() > 0) {
      if (stats.firstPageMs < 0) stats.firstPageMs = now();
      win.requestAnimationFrame(() => {
        if (stats.firstPaintMs < 0) stats.firstPaintMs = now();
      });
    }
  }

  function measure(e: ViewEvent, before: ViewState): void {
    if (e.type === 'state' && stats.stateMs < 0) {
      stats.stateMs = now();
      // The host reads the rest of a long thread after that.
      afterNextPaint(win, () => rpc.painted());
    }
    if (e.type === 'state' && !e.message.partial && stats.wholeMs < 0) stats.wholeMs = now();
    if (e.type === 'delta') {
      stats.deltas += 1;
      stats.charsReceived += e.text.length;
      const l = state.live;
      if (l) stats.maxBacklog = Math.max(stats.maxBacklog, l.buffered.length + l.bufferedReasoning.length);
    }
    if (e.type === 'frame' && before.live && before.live !== state.live) {
      stats.frames += 1;
      stats.charsRendered += before.live.buffered.length + before.live.bufferedReasoning.length;
    }
  }

  screen.scroller.addEventListener('scroll', () => win.requestAnimationFrame(save), { passive: true });
  rpc.listen((m: Notification) => dispatch(m.type === 'state' ? { type: 'state', message: m } : m));
  return { stats, state: () => state, screen };
}
