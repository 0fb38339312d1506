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
import type { VsCodeApi } from './runView/rpc';

declare function acquireVsCodeApi(): VsCodeApi;

const app = startRunView({ window, root: document.getElementById('app')!, api: acquireVsCodeApi() });
(globalThis as unknown as { __runViewStats: typeof app.stats }).__runViewStats = app.stats;
