// The run view's state, and the one pure function that changes it: a message or event in, the next
// state and what the screen must do out (draw the header, lay out the list, redraw items, ask for
// pages, restore the scroll position). No DOM, no timers, no globals: the unit tests run it as the
// webview does. The host sends everything shown; the view keeps items by key, the text streamed
// since the host's last state, and which pages it asked for.
import type { OutlineEntry, TranscriptItem } from '../../../src/views/run/items';
import type { Result, StateMessage } from '../../../src/views/run/protocol';

/** Items per page request. */
export const PAGE = 40;
/** A page asked for and not answered within this is asked again (its answer got lost or went stale). */
export const PAGE_RETRY_MS = 3000;
/** The streamed answer's row at the end of the list. */
export const LIVE_KEY = '__live__';
const LIVE_HEIGHT = 80;

export interface Anchor {
  key: string;
  offset: number;
}

/** What the view keeps across reloads (vscode.setState): ids and the scroll position, nothing shown. */
export interface SavedState {
  runId?: string;
  threadId?: string;
  anchor?: Anchor | null;
}

/** The model's answer as it streams: what is drawn, and what arrived since the last frame. */
export interface Live {
  runId: string;
  step: number;
  text: string;
  reasoning: string;
  buffered: string;
  bufferedReasoning: string;
}

export interface ViewState {
  /** The host's last state (header, outline, version); null until the first arrives. */
  host: StateMessage | null;
  items: ReadonlyMap<string, TranscriptItem>;
  /** Keys whose item came with the current version (others are shown until their page is read again). */
  fresh: ReadonlySet<string>;
  /** Pages asked for: first index → when. */
  requested: ReadonlyMap<number, number>;
  live: Live | null;
  /** The saved scroll position, until the outline holds its item (or is whole without it). */
  pendingAnchor: { anchor: Anchor | null } | null;
  /** An item the host asked to show, until the outline holds it. */
  pendingReveal: string | null;
}

export type ViewEvent =
  | { type: 'state'; message: StateMessage }
  | { type: 'delta'; runId: string; step: number; kind: 'text' | 'reasoning'; text: string }
  /** A frame: the text that arrived since the last one is drawn. */
  | { type: 'frame' }
  | { type: 'reveal'; key: string }
  /** The list shows items [from, to) now. */
  | { type: 'visible'; from: number; to: number; now: number }
  | { type: 'page'; result: Result<'page'> }
  | { type: 'pageFailed'; from: number };

export interface Effects {
  header: boolean;
  /** The list's new outline (the live row included), when it changed. */
  outline: OutlineEntry[] | null;
  /** Rows to draw again (their item arrived or changed). */
  redraw: string[];
  /** Pages to ask the host for, at the state's version. */
  requests: { from: number; to: number; version: number }[];
  /** Streamed text waits for a frame. */
  frame: boolean;
  /** Put the scroll position back (null: at the end). */
  restore?: Anchor | null;
  reveal?: string;
  /** The list should look again at what is missing (a stale page was dropped). */
  refresh: boolean;
  /** The scroll position and ids should be saved. */
  save: boolean;
}

export function initialState(saved: SavedState | undefined): ViewState {
  return {
    host: null,
    items: new Map(),
    fresh: new Set(),
    requested: new Map(),
    live: null,
    pendingAnchor: { anchor: saved?.anchor ?? null },
    pendingReveal: null,
  };
}

function none(): Effects {
  return { header: false, outline: null, redraw: [], requests: [], frame: false, refresh: false, save: false };
}

export function reduce(s: ViewState, e: ViewEvent): { state: ViewState; effects: Effects } {
  switch (e.type) {
    case 'state':
      return onState(s, e.message);
    case 'delta':
      return onDelta(s, e);
    case 'frame': {
      const l = s.live;
      if (!l || (!l.buffered && !l.bufferedReasoning)) return { state: s, effects: none() };
      const live = {
        ...l,
        text: l.text + l.buffered,
        reasoning: l.reasoning + l.bufferedReasoning,
        buffered: '',
        bufferedReasoning: '',
      };
      return { state: { ...s, live }, effects: { ...none(), redraw: [LIVE_KEY] } };
    }
    case 'reveal':
      return settle({ ...s, pendingReveal: e.key }, none());
    case 'visible':
      return onVisible(s, e);
    case 'page':
      return onPage(s, e);
    case 'pageFailed': {
      const requested = new Map(s.requested);
      requested.delete(e.from);
      return { state: { ...s, requested }, effects: none() };
    }
  }
}

function onState(s: ViewState, m: StateMessage): { state: ViewState; effects: Effects } {
  const fx = none();
  const versionChanged = m.version !== s.host?.version;
  let live = s.live;
  if (live && (!m.streaming || m.streaming.runId !== live.runId || m.streaming.step !== live.step)) live = null;
  if (m.streaming && !live)
    live = {
      runId: m.streaming.runId,
      step: m.streaming.step,
      text: '',
      reasoning: '',
      buffered: '',
      bufferedReasoning: '',
    };
  if (live && m.streaming?.text !== undefined) {
    // The host's text so far replaces what arrived before it (the deltas it had not sent yet are in it).
    live = {
      ...live,
      text: m.streaming.text,
      reasoning: m.streaming.reasoning ?? '',
      buffered: '',
      bufferedReasoning: '',
    };
    fx.redraw.push(LIVE_KEY);
  }
  if (versionChanged) fx.redraw.push(LIVE_KEY);
  let next: ViewState = {
    ...s,
    host: m,
    live,
    ...(versionChanged ? { requested: new Map(), fresh: new Set<string>() } : {}),
  };
  if (m.page) next = withItems(next, m.page.items, fx);
  fx.header = true;
  fx.outline = live ? [...m.outline, [LIVE_KEY, LIVE_HEIGHT]] : m.outline;
  fx.save = true;
  return settle(next, fx);
}

/** Restores the saved scroll position and shows a revealed item once the outline can. */
function settle(s: ViewState, fx: Effects): { state: ViewState; effects: Effects } {
  const m = s.host;
  if (!m) return { state: s, effects: fx };
  const has = (key: string) => m.outline.some((o) => o[0] === key);
  let next = s;
  const p = s.pendingAnchor;
  if (p && (!p.anchor || has(p.anchor.key) || !m.partial)) {
    fx.restore = p.anchor && has(p.anchor.key) ? p.anchor : null;
    next = { ...next, pendingAnchor: null };
  }
  if (s.pendingReveal && has(s.pendingReveal)) {
    fx.reveal = s.pendingReveal;
    next = { ...next, pendingReveal: null };
  } else if (s.pendingReveal && !m.partial) next = { ...next, pendingReveal: null }; // not in this thread
  return { state: next, effects: fx };
}

function onDelta(s: ViewState, d: Extract<ViewEvent, { type: 'delta' }>): { state: ViewState; effects: Effects } {
  const fx = none();
  let live = s.live;
  if (!live || live.runId !== d.runId || live.step !== d.step) {
    live = { runId: d.runId, step: d.step, text: '', reasoning: '', buffered: '', bufferedReasoning: '' };
    if (s.host) fx.outline = [...s.host.outline, [LIVE_KEY, LIVE_HEIGHT]];
  }
  live =
    d.kind === 'text'
      ? { ...live, buffered: live.buffered + d.text }
      : { ...live, bufferedReasoning: live.bufferedReasoning + d.text };
  // Tokens arrive many times a frame: drawn once per frame, whatever arrived since.
  fx.frame = true;
  return { state: { ...s, live }, effects: fx };
}

/** Asks for the pages of [from, to) that hold an item not read at the current version (not asked for lately). */
function onVisible(s: ViewState, e: Extract<ViewEvent, { type: 'visible' }>): { state: ViewState; effects: Effects } {
  const fx = none();
  const m = s.host;
  if (!m) return { state: s, effects: fx };
  const count = m.outline.length;
  let requested: Map<number, number> | undefined;
  for (let p = Math.floor(e.from / PAGE) * PAGE; p < Math.min(e.to, count); p += PAGE) {
    if ((s.requested.get(p) ?? -Infinity) > e.now - PAGE_RETRY_MS) continue;
    let missing = false;
    for (let i = Math.max(p, e.from); i < Math.min(p + PAGE, e.to, count) && !missing; i++)
      missing = !s.fresh.has(m.outline[i]![0]);
    if (!missing) continue;
    (requested ??= new Map(s.requested)).set(p, e.now);
    fx.requests.push({ from: p, to: p + PAGE, version: m.version });
  }
  return { state: requested ? { ...s, requested } : s, effects: fx };
}

function onPage(s: ViewState, e: Extract<ViewEvent, { type: 'page' }>): { state: ViewState; effects: Effects } {
  const fx = none();
  const requested = new Map(s.requested);
  requested.delete(e.result.from);
  if (!s.host || e.result.version !== s.host.version) {
    fx.refresh = true; // asks again for what is still missing
    return { state: { ...s, requested }, effects: fx };
  }
  return { state: withItems({ ...s, requested }, e.result.items, fx), effects: fx };
}

/** Items read at the current version: kept by key; a row whose item changed is drawn again. */
function withItems(s: ViewState, items: readonly TranscriptItem[], fx: Effects): ViewState {
  const next = new Map(s.items);
  const fresh = new Set(s.fresh);
  for (const item of items) {
    const before = next.get(item.key);
    next.set(item.key, item);
    fresh.add(item.key);
    if (!before || JSON.stringify(before) !== JSON.stringify(item)) fx.redraw.push(item.key);
  }
  return { ...s, items: next, fresh };
}

/** What the view saves across reloads. */
export function savedState(s: ViewState, anchor: Anchor | null): SavedState | undefined {
  if (!s.host) return undefined;
  return { runId: s.host.focusRunId, threadId: s.host.threadId, anchor };
}
