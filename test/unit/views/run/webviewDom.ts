// The run view's real webview code (media/src/runView/app.ts: reducer, screen, RPC) started in a
// DOM of its own (jsdom), talking to a host as VS Code's webview does: what it posts goes to
// `toHost`, what the host sends arrives as a `message` event on a later task, cloned. jsdom has no
// layout: the list sees a zero-height viewport (it draws its overscan) and no ResizeObserver events.
// The view takes its host's messages as typed (rpc.ts); here each one is checked against the
// protocol's schemas on its way in (a response against its request's result schema), and `close`
// fails the test when one did not conform.
import { JSDOM } from 'jsdom';
import { startRunView, type RunViewApp } from '../../../../media/src/runView/app';
import { createHighlighter } from '../../../../media/src/runView/highlighter';
import { HostMessage, type Method, Requests } from '../../../../src/views/run/protocol';

export interface WebviewInDom {
  app: RunViewApp;
  document: Document;
  /** What the view posted: ready, requests (by method). */
  posted: { type: string; id?: number; method?: string; params?: unknown }[];
  /** What it saved with vscode.setState, last. */
  saved(): unknown;
  /** A host message, as VS Code delivers it. */
  deliver(m: HostMessage): void;
  /** Resolves after `n` animation frames of the page. */
  frames(n?: number): Promise<void>;
  /** Host messages that did not conform to the protocol's schemas (`close` throws when there are any). */
  malformed: string[];
  close(): void;
}

/** Globals the view's DOM helpers use (document, window), set while a view is open and put back after. */
const GLOBALS = ['document', 'window'] as const;

export function openWebview(o: { toHost(m: unknown): void; savedState?: unknown }): WebviewInDom {
  const dom = new JSDOM('<!doctype html><html><body><div id="app"></div></body></html>', {
    pretendToBeVisual: true, // requestAnimationFrame at 60 Hz
  });
  const win = dom.window as unknown as Window & typeof globalThis;
  // The real view measures rows with it; jsdom has no layout to observe.
  (win as unknown as { ResizeObserver: unknown }).ResizeObserver = class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  };
  const before = GLOBALS.map((k) => [k, (globalThis as Record<string, unknown>)[k]] as const);
  Object.assign(globalThis, { document: win.document, window: win });
  let state = o.savedState;
  const posted: WebviewInDom['posted'] = [];
  let closed = false;
  const app = startRunView({
    loadHighlighter: async () => createHighlighter(),
    window: win,
    root: win.document.getElementById('app')!,
    api: {
      postMessage: (m) => {
        posted.push(m as WebviewInDom['posted'][number]);
        setTimeout(() => !closed && o.toHost(structuredClone(m)), 0);
      },
      setState: (s) => void (state = s),
      getState: () => state,
    },
  });
  const malformed: string[] = [];
  const check = (m: HostMessage) => {
    const parsed = HostMessage.safeParse(m);
    if (!parsed.success) return void malformed.push(`${m.type}: ${parsed.error.message}`);
    if (m.type !== 'response' || !m.ok) return;
    const method = posted.find((p) => p.type === 'request' && p.id === m.id)?.method;
    if (!method) return void malformed.push(`response ${m.id} to no request`);
    const result = Requests[method as Method].result.safeParse(m.result);
    if (!result.success) malformed.push(`${method} result: ${result.error.message}`);
  };
  return {
    app,
    document: win.document,
    posted,
    malformed,
    saved: () => state,
    deliver: (m) => {
      check(m);
      const data = structuredClone(m);
      setTimeout(() => !closed && win.dispatchEvent(new win.MessageEvent('message', { data })), 0);
    },
    frames: async (n = 1) => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => win.requestAnimationFrame(resolve));
    },
    close: () => {
      closed = true;
      dom.window.close();
      for (const [k, v] of before)
        if (v === undefined) delete (globalThis as Record<string, unknown>)[k];
        else (globalThis as Record<string, unknown>)[k] = v;
      if (malformed.length > 0)
        throw new Error(`the host sent messages its protocol refuses:\n${malformed.join('\n')}`);
    },
  };
}

/** Polls each frame until `check` holds (the view draws on frames). */
export async function untilDrawn(view: WebviewInDom, what: string, check: () => boolean, frames = 600): Promise<void> {
  for (let i = 0; i < frames; i++) {
    if (check()) return;
    await view.frames(1);
  }
  throw new Error(`not drawn within ${frames} frames: ${what}`);
}
