// The run view's script (one bundle): the VS Code elements it uses, and the view started on this
// page. A header (state, model, step, tokens, cost, actions), the thread's transcript as a
// virtualized list paged from the host, streamed text drawn once per frame, and a composer.
// Everything shown comes from the host (read from the store); the webview keeps only ids and its
// scroll position (vscode.setState), so a reload restores the same view. The parts are in
// runView/: the state and its reducer (viewState.ts), the screen (render.ts), the protocol (rpc.ts).
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import { startRunView } from './runView/app';
import type { Highlighter } from './runView/highlighter';
import type { VsCodeApi } from './runView/rpc';

declare function acquireVsCodeApi(): VsCodeApi;

/** This script's element: the highlighter's script sits beside it and is allowed by the same nonce. */
const self = document.currentScript as HTMLScriptElement | null;

function loadHighlighter(): Promise<Highlighter> {
  return new Promise((resolve, reject) => {
    if (!self?.src) return reject(new Error('no script URL to load the highlighter beside'));
    (globalThis as unknown as { __awHighlighterReady: (h: Highlighter) => void }).__awHighlighterReady = resolve;
    const s = document.createElement('script');
    s.src = self.src.replace(/runView\.js(?=$|[?#])/, 'runViewHighlight.js');
    s.nonce = self.nonce;
    s.onerror = () => reject(new Error('the highlighter did not load'));
    document.head.append(s);
  });
}

const app = startRunView({ window, root: document.getElementById('app')!, api: acquireVsCodeApi(), loadHighlighter });
(globalThis as unknown as { __runViewStats: typeof app.stats }).__runViewStats = app.stats;
