// The run view's real webview code (media/src/runView/app.ts: reducer, screen, RPC) started in a
// DOM of its own (jsdom), talking to a host as VS Code's webview does: what it posts goes to
// `toHost`, what the host sends arrives as a `message` event on a later task, cloned. jsdom has no
// layout: the list sees a zero-height viewport (it draws its overscan) and no ResizeObserver events.
import { JSDOM } from 'jsdom';
import { startRunView, type RunViewApp } from '../../../../media/src/runView/app';
import type { HostMessage } from '../../../../src/views/run/protocol';

export interface WebviewInDom {
  app: RunViewApp;
  document: Document;
  /** What the view posted: ready, requests (by method). */
  posted: { type: string; method?: string; params?: unknown }[];
  /** What it saved with vscode.setState, last. */
  saved(): unknown;
  /** A host message, as VS Code delivers it. */
  deliver(m: HostMessage): void;
  /** Resolves after `n` animation frames of the page. */
  frames(n?: number): Promise<void>;
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
  return {
    app,
    document: win.document,
    posted,
    saved: () => state,
    deliver: (m) => {
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
