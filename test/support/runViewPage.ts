// The run view's real webview script in Chromium, wired to a RunViewController in this process
// (no VS Code): what the benchmark measures and what a quick check of the view can drive.
// postMessage from the page reaches controller.receive(); the controller's messages are
// dispatched in the page as the webview's `message` events, as VS Code's webview host does.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { RunViewController, type RunViewDeps } from '../../src/views/run/controller';
import type { HostMessage } from '../../src/views/run/protocol';
import { launchChromium } from './browser';

const ROOT = path.resolve(__dirname, '../..');

export interface RunViewPage {
  page: Page;
  browser: Browser;
  controller: RunViewController;
  /** Host messages sent so far, by type (for measurements). */
  sent: Record<string, number>;
  /** When the first message of each type was handed to the page (epoch ms, as `epochNow`). */
  firstSentAt: Record<string, number>;
  close(): Promise<void>;
}

export async function openRunViewPage(o: {
  threadId: string;
  runId: string;
  deps: RunViewDeps;
  theme?: 'dark' | 'light';
  browser?: Browser;
}): Promise<RunViewPage> {
  const browser = o.browser ?? (await launchChromium());
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  const sent: Record<string, number> = {};
  const firstSentAt: Record<string, number> = {};
  const ref: { controller?: RunViewController } = {};
  const queue: HostMessage[] = [];
  let flushing = false;
  const flush = async () => {
    if (flushing) return;
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0);
      // Handed over as data (as postMessage clones it), not as source the page would have to parse.
      await page.evaluate(DISPATCH, batch).catch(() => undefined);
    }
    flushing = false;
  };
  await page.exposeBinding('__toHost', (_src, m: unknown) => void ref.controller?.receive(m));
  const controller = new RunViewController(o.threadId, o.runId, o.deps, (m) => {
    sent[m.type] = (sent[m.type] ?? 0) + 1;
    firstSentAt[m.type] ??= epochNow();
    queue.push(m);
    void flush();
  });
  ref.controller = controller;
  const css = [
    fs
      .readFileSync(path.join(ROOT, 'media/dist/codicon.css'), 'utf8')
      .replace(/url\("\.\/codicon\.ttf[^"]*"\)/, 'local("none")'),
    fs.readFileSync(path.join(ROOT, 'media/runView.css'), 'utf8'),
  ];
  // The page gets its whole HTML at once, script included, and loads it on its own (as a webview
  // does, in a process of its own): what this process does meanwhile cannot hold it up.
  const script = fs.readFileSync(path.join(ROOT, 'media/dist/runView.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
  await page.setContent(
    `<!DOCTYPE html><html><head><style>${themeVars(o.theme ?? 'dark')}</style><style id="vscode-codicon-stylesheet">${css.join('\n')}</style></head><body><div id="app"></div><script>${VSCODE_API}</script><script>${script}</script></body></html>`,
    { waitUntil: 'commit' },
  );
  // As the panel does when it opens: the host starts reading while the page loads its script.
  void controller.pushState(true).catch(() => undefined);
  return {
    page,
    browser,
    controller,
    sent,
    firstSentAt,
    close: async () => {
      controller.dispose();
      if (!o.browser) await browser.close();
      else await page.close();
    },
  };
}

/** Made from source text: the test runner's transpiler would add helpers the page does not have. */
const DISPATCH = new Function(
  'batch',
  `batch.forEach((m) => window.dispatchEvent(new MessageEvent('message', { data: m })))`,
) as (batch: HostMessage[]) => void;

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
