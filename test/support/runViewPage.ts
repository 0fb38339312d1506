// The run view's real webview script in Chromium, wired to the view's host end — a
// RunViewController, wherever it runs (the benchmark runs it on a thread of its own, as VS Code's
// extension host is a process apart from the window): what the benchmark measures. postMessage from
// the page reaches the host's receive(); the host's messages are dispatched in the page as the
// webview's `message` events, as VS Code's webview host does.
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { HostMessage } from '../../src/views/run/protocol';

const ROOT = path.resolve(__dirname, '../..');

/** The view's host end (a RunViewController behind whatever carries its messages). */
export interface RunViewHostLink {
  /**
   * Starts the host end of one view: it starts reading at once, as panel.ts does right after
   * setting the HTML. What it sends goes to `post` (with when it was sent, epoch ms), which settles
   * once the page has it, as the webview's postMessage does.
   */
  open(post: (m: HostMessage, sentAt: number) => Promise<void>): RunViewHostEnd;
}

export interface RunViewHostEnd {
  /** A message from the page (the webview's postMessage). */
  receive(m: unknown): void;
  close(): Promise<void>;
}

export interface RunViewPage {
  page: Page;
  /** Host messages sent so far, by type (for measurements). */
  sent: Record<string, number>;
  /** When the first message of each type was handed to the page (epoch ms, as `epochNow`). */
  firstSentAt: Record<string, number>;
  close(): Promise<void>;
}

/**
 * The window the run view opens in, as VS Code's is before any webview opens: a browser context
 * with the page-to-host bindings (Playwright's stand-in for the webview's built-in postMessage,
 * installed once) and the loopback server that serves the view's HTML, script and styles.
 */
export interface RunViewWindow {
  context: BrowserContext;
  url: string;
  /** Where each page's messages to the host go, and its "loaded" signal. */
  routes: Map<Page, { toHost(m: unknown): void; loaded(): void }>;
  close(): Promise<void>;
}

export async function prepareRunViewWindow(browser: Browser, theme: 'dark' | 'light' = 'dark'): Promise<RunViewWindow> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const routes: RunViewWindow['routes'] = new Map();
  await context.exposeBinding('__toHost', (src, m: unknown) => routes.get(src.page)?.toHost(m));
  await context.exposeBinding('__loaded', (src) => routes.get(src.page)?.loaded());
  const server = await serveMedia(theme);
  await (await context.newPage()).close(); // the window is up and has drawn a page before the view opens
  return {
    context,
    url: server.url,
    routes,
    close: async () => {
      await context.close();
      await server.close();
    },
  };
}

export async function openRunViewPage(o: { host: RunViewHostLink; window: RunViewWindow }): Promise<RunViewPage> {
  const win = o.window;
  const ref: { page?: Page } = {};
  const sent: Record<string, number> = {};
  const firstSentAt: Record<string, number> = {};
  const queue: { message: HostMessage; delivered: () => void }[] = [];
  let flushing = false;
  // As VS Code's webview does, messages posted before the page has loaded wait for it.
  let loaded = false;
  const flush = async () => {
    if (flushing || !loaded) return;
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0);
      // Handed over as JSON text and parsed in the page, as VS Code's IPC carries a webview message.
      await ref.page!.evaluate(DISPATCH, JSON.stringify(batch.map((b) => b.message))).catch(() => undefined);
      for (const b of batch) b.delivered();
    }
    flushing = false;
  };
  // As the panel does when it opens (panel.ts): createWebviewPanel and setting its HTML return at
  // once (the window makes the frame on its own), then pushState: the host reads while the page is
  // made and loads its script.
  const host = o.host.open((m, sentAt) => {
    sent[m.type] = (sent[m.type] ?? 0) + 1;
    firstSentAt[m.type] ??= sentAt;
    return new Promise<void>((delivered) => {
      queue.push({ message: m, delivered });
      void flush();
    });
  });
  const page = (ref.page = await win.context.newPage());
  win.routes.set(page, {
    toHost: (m) => host.receive(m),
    loaded: () => {
      loaded = true;
      void flush();
    },
  });
  await page.goto(win.url, { waitUntil: 'commit' });
  return {
    page,
    sent,
    firstSentAt,
    close: async () => {
      await host.close();
      win.routes.delete(page);
      await page.close();
    },
  };
}

/** Made from source text: the test runner's transpiler would add helpers the page does not have. */
const DISPATCH = new Function(
  'json',
  `JSON.parse(json).forEach((m) => window.dispatchEvent(new MessageEvent('message', { data: m })))`,
) as (json: string) => void;

/** What the page loads besides its HTML, by URL path. */
const MEDIA: Record<string, { file: string; type: string }> = {
  '/runView.js': { file: path.join(ROOT, 'media/dist/runView.js'), type: 'text/javascript' },
  '/runViewHighlight.js': { file: path.join(ROOT, 'media/dist/runViewHighlight.js'), type: 'text/javascript' },
  '/codicon.css': { file: path.join(ROOT, 'media/dist/codicon.css'), type: 'text/css' },
  '/codicon.ttf': { file: path.join(ROOT, 'media/dist/codicon.ttf'), type: 'font/ttf' },
  '/runView.css': { file: path.join(ROOT, 'media/runView.css'), type: 'text/css' },
};

/**
 * The view's page as the panel writes it (panel.ts), its script and styles, on a loopback port,
 * served from a thread of its own: as in VS Code, where the window loads a webview's resources,
 * the host's work cannot hold up the page's loading.
 */
async function serveMedia(theme: 'dark' | 'light'): Promise<{ url: string; close(): Promise<void> }> {
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><style>${themeVars(theme)}</style>
<link rel="stylesheet" href="/codicon.css" id="vscode-codicon-stylesheet"><link rel="stylesheet" href="/runView.css"></head>
<body><div id="app"><p class="empty">Loading the run…</p></div><script>${VSCODE_API}</script><script src="/runView.js"></script>
<script>addEventListener('DOMContentLoaded', () => window.__loaded())</script></body></html>`;
  const worker = new Worker(SERVER, { eval: true, workerData: { page, files: MEDIA } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { url: `http://127.0.0.1:${port}/`, close: () => worker.terminate().then(() => undefined) };
}

/** The worker's source: plain JavaScript, so it runs as it is. */
const SERVER = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const fs = require('node:fs');
const server = http.createServer((req, res) => {
  const url = (req.url || '/').split('?')[0];
  const f = workerData.files[url];
  if (url === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(workerData.page);
  else if (f) res.writeHead(200, { 'content-type': f.type, 'cache-control': 'no-store' }).end(fs.readFileSync(f.file));
  else res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** acquireVsCodeApi() as the webview has it: messages go to the host's binding; state stays in the page. */
const VSCODE_API = `(() => { let state; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.__toHost(m), setState: (s) => { state = s; }, getState: () => state }); })()`;

function themeVars(theme: 'dark' | 'light'): string {
  const v =
    theme === 'dark'
      ? { bg: '#1f1f1f', fg: '#cccccc', muted: '#9d9d9d', border: '#3c3c3c', code: '#2b2b2b' }
      : { bg: '#ffffff', fg: '#3b3b3b', muted: '#717171', border: '#e5e5e5', code: '#f3f3f3' };
  return `:root { --vscode-editor-background: ${v.bg}; --vscode-foreground: ${v.fg}; --vscode-descriptionForeground: ${v.muted}; --vscode-panel-border: ${v.border};
    --vscode-textCodeBlock-background: ${v.code}; --vscode-font-family: sans-serif; --vscode-font-size: 13px; --vscode-editor-font-family: monospace; --vscode-editor-font-size: 13px; }`;
}

/** Wall-clock milliseconds with sub-millisecond precision: comparable with a page's `performance.timeOrigin + performance.now()`. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}
