// Playwright harness over a real VS Code (code-server) with the *packaged VSIX installed*,
// not the source tree: what users install is what the e2e tests click through. Every deadline here,
// and every one the tests pass, is `scaled`: as long as the machine's load makes it.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { scaled } from '../support/timeScale';
import {
  type CodeServer,
  descendants,
  installVsix,
  makeTempDir,
  SKIPPED_BUILTINS,
  startCodeServer,
  UNCOMPRESSED,
  writeUserSettings,
} from '../support/codeServer';

export { scaled } from '../support/timeScale';
export const repoRoot = path.resolve(__dirname, '../..');
export const resultsDir = path.join(repoRoot, 'test-results');
/** The run view's webview type (package.json: `onWebviewPanel:agentWaypoints.runView`). */
export const RUN_VIEW_TYPE = 'agentWaypoints.runView';

/**
 * One Chromium per test process, started when the first window opens: each window gets a context of
 * its own (its own storage and caches, as a fresh browser's), so starting the browser again for every
 * workbench buys nothing. Gone (crashed), it is started again. A mocha worker's Chromium goes with
 * the worker; a test process of its own closes it after its files (closeChromium, the root hooks).
 */
let chromium: Promise<Browser> | undefined;

function sharedChromium(): Promise<Browser> {
  chromium ??= launchChromium().then(
    (b) => {
      b.on('disconnected', () => (chromium = undefined));
      return b;
    },
    (err: unknown) => {
      chromium = undefined;
      throw err;
    },
  );
  return chromium;
}

/** Closes the test process's Chromium (every workbench is closed by then). */
export async function closeChromium(): Promise<void> {
  const b = await chromium?.catch(() => undefined);
  chromium = undefined;
  await b?.close().catch(() => undefined);
}

/**
 * A page for a workbench window, in a context of its own: the size the tests' screenshots are taken
 * at, the workbench script uncompressed.
 */
async function newWorkbenchPage(): Promise<Page> {
  const context = await (
    await sharedChromium()
  ).newContext({ viewport: { width: 1400, height: 900 }, extraHTTPHeaders: UNCOMPRESSED });
  return context.newPage();
}

let installedExtensionsDir: string | undefined;

/** The VSIX `npm run package` produced; installed once per test process into a shared extensions dir. */
async function installedExtensions(): Promise<string> {
  if (installedExtensionsDir) return installedExtensionsDir;
  const { name, version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const vsix = path.join(repoRoot, 'dist', `${name}-${version}.vsix`);
  if (!fs.existsSync(vsix)) throw new Error(`${path.relative(repoRoot, vsix)} is missing: run npm run package first`);
  const dir = makeTempDir('e2e-extensions');
  await installVsix(vsix, dir);
  installedExtensionsDir = dir;
  return dir;
}

export interface WorkbenchOptions {
  /** Folder copied into a fresh temporary workspace (default: test/fixtures/workspace). */
  workspaceTemplate?: string;
  /** User settings merged over the quiet defaults. */
  settings?: Record<string, unknown>;
  /** Extra environment for code-server and so for the extension host. */
  env?: Record<string, string>;
  /** More VSIX files installed beside the extension (in an extensions folder of this workbench's own). */
  extraVsix?: string[];
}

export class Workbench {
  private constructor(
    readonly server: CodeServer,
    readonly page: Page,
    readonly workspace: string,
    readonly userDataDir: string,
    private readonly tmp: string,
    /** The browser contexts of this workbench's windows (the first, and any opened beside it). */
    private readonly windows: Set<BrowserContext>,
    /** A second window on the same server: closing it closes only its own context. */
    private readonly secondary = false,
  ) {
    windows.add(page.context());
  }

  static async start(opts: WorkbenchOptions = {}): Promise<Workbench> {
    const tmp = makeTempDir('e2e');
    let extensionsDir = await installedExtensions();
    if (opts.extraVsix?.length) {
      const own = path.join(tmp, 'extensions');
      fs.cpSync(extensionsDir, own, { recursive: true });
      for (const vsix of opts.extraVsix) await installVsix(vsix, own);
      extensionsDir = own;
    }
    const workspace = path.join(tmp, 'workspace');
    fs.cpSync(opts.workspaceTemplate ?? path.join(repoRoot, 'test/fixtures/workspace'), workspace, { recursive: true });
    const userDataDir = path.join(tmp, 'user-data');
    writeUserSettings(userDataDir, opts.settings);
    return Workbench.open(tmp, workspace, userDataDir, extensionsDir, opts.env);
  }

  private static async open(
    tmp: string,
    workspace: string,
    userDataDir: string,
    extensionsDir: string,
    env: Record<string, string> | undefined,
    port?: number,
  ): Promise<Workbench> {
    const server = await startCodeServer({
      workspace,
      userDataDir,
      extensionsDir,
      logFile: path.join(resultsDir, 'e2e-code-server.log'),
      skipBuiltinExtensions: SKIPPED_BUILTINS,
      ...(env ? { env } : {}),
      ...(port ? { port } : {}),
    });
    const page = await newWorkbenchPage();
    const wb = new Workbench(server, page, workspace, userDataDir, tmp, new Set());
    await page.goto(server.url(), { timeout: scaled(90_000) });
    await wb.waitForWorkbench();
    return wb;
  }

  /**
   * The window and its server gone at once (a laptop closed, VS Code quit hard), the workspace and
   * the user data left on disk; `reopen` starts VS Code on them again.
   */
  async shutDown(): Promise<void> {
    await this.closeWindows();
    await this.server.stop();
  }

  private async closeWindows(): Promise<void> {
    for (const c of [...this.windows]) {
      this.windows.delete(c);
      await c.close().catch(() => undefined);
    }
  }

  /**
   * VS Code started again on the workspace and user data of a workbench that was shut down — on the
   * same port: code-server names a workspace's storage after its remote URI, port included, so on
   * another port the window would get a new, empty storage folder (as a user's would).
   */
  async reopen(env?: Record<string, string>): Promise<Workbench> {
    const extensions = await installedExtensions();
    return Workbench.open(this.tmp, this.workspace, this.userDataDir, extensions, env, this.server.port);
  }

  /** The installed extension's own folder (what a user's extensions folder holds: its dist/cli.js is the package's bin). */
  static async installedExtensionDir(): Promise<string> {
    const dir = await installedExtensions();
    const own = fs.readdirSync(dir).find((d) => d.includes('agent-waypoints'));
    if (!own) throw new Error(`the extension is not installed in ${dir}`);
    return path.join(dir, own);
  }

  /**
   * Another browser window on the same workspace: code-server gives it an extension host of its
   * own (as desktop VS Code gives each window), sharing the workspace's checkpoint storage.
   */
  async openAnotherWindow(): Promise<Workbench> {
    const page = await newWorkbenchPage();
    const wb = new Workbench(this.server, page, this.workspace, this.userDataDir, this.tmp, this.windows, true);
    await page.goto(this.server.url(), { timeout: scaled(90_000) }); // a loaded machine serves the workbench slowly
    await wb.waitForWorkbench();
    return wb;
  }

  async waitForWorkbench(): Promise<void> {
    await this.page.locator('.monaco-workbench').waitFor({ timeout: scaled(60_000) });
    // The extension host is up once our activity-bar entry is rendered.
    await this.page
      .locator('.activitybar [aria-label^="Agent Waypoints"]')
      .first()
      .waitFor({ timeout: scaled(60_000) });
  }

  /**
   * F1, type the command's title, click its row. Retries while the command is not offered yet
   * (commands gated by a context key appear once the extension has activated), and when the palette
   * closed under us: a quick input hides when it loses focus, and right after a reload a view that
   * finishes opening (the Runs view, once the extension is up) can take the focus from it.
   */
  async runCommand(title: string, timeoutMs = 60_000): Promise<void> {
    await this.runCommandUntil(title, Date.now() + scaled(timeoutMs));
  }

  private async runCommandUntil(title: string, deadline: number): Promise<void> {
    const input = this.page.locator('.quick-input-widget input');
    const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    const ok = (p: Promise<unknown>) =>
      p.then(
        () => true,
        () => false,
      );
    for (;;) {
      // The keys go to the workbench, not to an input or a webview that has the focus. Not a click:
      // a click into a webview (the run view fills the editor area) moves the focus there a moment
      // later, and the palette, opened by then, closes as it loses it.
      await this.page.evaluate('document.activeElement?.blur(); window.focus()');
      await this.page.keyboard.press('F1');
      if (
        (await ok(input.fill(`>${title}`, { timeout: scaled(10_000) }))) &&
        (await ok(row.waitFor({ state: 'visible', timeout: scaled(3000) }))) &&
        // The row that names the command, not whatever the palette ranked first ("Preferences: Color
        // Theme" ranks "Browse Color Themes in Marketplace" above itself once that was used).
        (await ok(row.click({ timeout: scaled(5000) })))
      )
        return;
      if (Date.now() > deadline) throw new Error(`the command palette never offered "${title}"`);
      await this.page.keyboard.press('Escape');
    }
  }

  /** Start agent run from the palette, the task typed into its input box and sent. */
  async startRun(task: string): Promise<void> {
    await this.runCommand('Agent Waypoints: Start agent run');
    // The task input box (not the palette it replaces): recognisable by its prompt.
    await this.page
      .locator('.quick-input-widget', { hasText: 'What should the agent do?' })
      .waitFor({ state: 'visible' });
    const input = this.page.locator('.quick-input-widget input');
    await input.fill(task);
    await input.press('Enter');
  }

  /**
   * Runs a command that opens a quick pick and picks the row naming `rowText`. A pick closes when the
   * focus moves (a webview opened a moment before takes it late on a loaded machine): then it is
   * opened again, until the row is clicked or the time is up.
   */
  async pickAfterCommand(title: string, rowText: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + scaled(timeoutMs);
    const row = this.page
      .locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: rowText })
      .first();
    for (;;) {
      await this.runCommandUntil(title, Math.max(Date.now() + scaled(10_000), deadline));
      const shown = await row.waitFor({ state: 'visible', timeout: scaled(15_000) }).then(
        () => true,
        () => false,
      );
      if (
        shown &&
        (await row.click({ timeout: scaled(5000) }).then(
          () => true,
          () => false,
        ))
      )
        return;
      if (Date.now() > deadline) throw new Error(`"${title}" never offered a row "${rowText}" to click`);
      await this.page.keyboard.press('Escape');
    }
  }

  /**
   * Expands a tree row until `child` shows beneath it. A click that lands while the tree refreshes
   * can leave the row expanded with its children not yet drawn: collapse and expand again.
   */
  async expandTreeRow(row: Locator, child: Locator, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + scaled(timeoutMs);
    for (;;) {
      if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
      if (
        await child.waitFor({ state: 'visible', timeout: scaled(5000) }).then(
          () => true,
          () => false,
        )
      )
        return;
      if (Date.now() > deadline) throw new Error(`the tree row never showed ${child.toString()} when expanded`);
      if ((await row.getAttribute('aria-expanded')) === 'true') await row.click(); // collapse; expanded again above
    }
  }

  /** The webview frame that contains `selector` (webviews are nested iframes). */
  async webviewFrame(selector: string, timeoutMs = 30_000): Promise<Frame> {
    const deadline = Date.now() + scaled(timeoutMs);
    while (Date.now() < deadline) {
      for (const frame of this.page.frames()) {
        if (
          await frame
            .locator(selector)
            .count()
            .catch(() => 0)
        )
          return frame;
      }
      await pollInterval();
    }
    throw new Error(`no webview frame contains ${selector} by its deadline (${timeoutMs} ms, scaled to the load)`);
  }

  /**
   * Posts a raw message into the extension host exactly as a webview script's
   * `vscode.postMessage` would (through the webview host frame's bridge), to test what the
   * host does with malformed or forged input.
   */
  async postFromWebview(contentFrame: Frame, message: unknown): Promise<void> {
    const host = contentFrame.parentFrame();
    if (!host) throw new Error('webview content frame has no host frame');
    await host.evaluate((m) => {
      (globalThis as unknown as Record<string, (c: string, d: unknown) => void>)['__vscode_post_message__']!(
        'onmessage',
        { message: m },
      );
    }, message);
  }

  /** Clicks a vscode-elements button by its text inside a webview frame. */
  async clickInWebview(frame: Frame, text: string, within?: string): Promise<void> {
    const scope = within ? frame.locator(within) : frame.locator('body');
    await scope.locator('vscode-button', { hasText: text }).first().click();
  }

  /** Opens the Agent Waypoints view in the side bar. */
  async openRunsView(): Promise<void> {
    const entry = this.page.locator('.activitybar [aria-label^="Agent Waypoints"]').first();
    const sidebar = this.page.locator('#workbench\\.parts\\.sidebar');
    if (
      !(await sidebar
        .getByText('Agent Waypoints', { exact: false })
        .first()
        .isVisible()
        .catch(() => false))
    )
      await entry.click();
  }

  /** A notification toast containing `text`. */
  notification(text: string) {
    return this.page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  }

  /**
   * A notification toast containing `text`, once shown, with the pointer resting on it. VS Code takes an
   * info or warning toast away 10–12 s after it shows unless the pointer is on it (its buttons go with it,
   * to the notification center), and a loaded machine can take longer than that between the toast and a
   * test's click on its button: so the pointer goes there at once, as a person reading it would.
   */
  async heldNotification(text: string, timeoutMs = 30_000): Promise<Locator> {
    const toast = this.notification(text);
    await toast.waitFor({ timeout: scaled(timeoutMs) });
    await toast.hover({ timeout: scaled(5000) }).catch(() => undefined); // gone already: clickNotificationButton finds it
    return toast;
  }

  /** Clicks a button of the notification containing `text`: on its toast, or in the notification center once the toast is gone. */
  async clickNotificationButton(text: string, button: string): Promise<void> {
    const onToast = this.notification(text).getByRole('button', { name: button });
    if (
      await onToast.click({ timeout: scaled(5000) }).then(
        () => true,
        () => false,
      )
    )
      return;
    await this.runCommand('Notifications: Show Notifications');
    await this.page
      .locator('.notifications-center .notification-list-item', { hasText: text })
      .first()
      .getByRole('button', { name: button })
      .click({ timeout: scaled(15_000) });
  }

  /** A notification toast containing `text`, once its fade-in has ended (for a screenshot). */
  async settledNotification(text: string, timeoutMs = 30_000) {
    // The workbench marks a toast `notification-fade-in-done` on its transition's end.
    await this.page
      .locator('.notifications-toasts .notification-fade-in-done', { hasText: text })
      .first()
      .waitFor({ timeout: scaled(timeoutMs) });
    return this.notification(text);
  }

  /**
   * Waits until the browser has saved the open editors with a run view that kept its run id (VS Code
   * in the browser writes workbench state to IndexedDB when idle, at most every 5 s, and the webview's
   * own state rides in it; a reload before both are saved loses the view). The condition a reload
   * test needs, instead of a guess at how long saving takes.
   */
  async waitForRunViewSaved(timeoutMs = 60_000): Promise<void> {
    await waitUntil(
      'the workbench to save the open run view with its run id',
      () => this.page.evaluate(editorsSavedScript([RUN_VIEW_TYPE, 'runId'])),
      timeoutMs,
    );
  }

  /** Everything the extension has logged so far, in every window of this workbench. */
  extensionLog(): string {
    return (fs.readdirSync(this.userDataDir, { recursive: true, encoding: 'utf8' }) as string[])
      .filter((f) => f.endsWith('Agent Waypoints.log'))
      .map((f) => fs.readFileSync(path.join(this.userDataDir, f), 'utf8'))
      .join('\n');
  }

  /** Waits until the extension's log holds at least `count` lines matching `re`. */
  async waitForLog(re: RegExp, count = 1, timeoutMs = 30_000): Promise<void> {
    const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    await waitUntil(
      `${count} log line(s) matching ${re}`,
      () => (this.extensionLog().match(g)?.length ?? 0) >= count,
      timeoutMs,
    );
  }

  /** Lines of the extension's log matching `re` (for counting before an action). */
  countLog(re: RegExp): number {
    const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    return this.extensionLog().match(g)?.length ?? 0;
  }

  /**
   * Waits until a process started by this workbench's extension host (a `run_command` child) has a
   * command line matching `re`: for a crash test, the moment a command is running is the moment its
   * durable intent exists and its result does not.
   */
  async waitForCommandRunning(re: RegExp, timeoutMs = 60_000): Promise<number> {
    let found = 0;
    await waitUntil(
      `a command matching ${re} to run`,
      () => {
        for (const pid of descendants(this.server.pid)) if (re.test(cmdline(pid))) return (found = pid) > 0;
        return false;
      },
      timeoutMs,
    );
    return found;
  }

  /**
   * Between the tests of a shared workbench: a question left open is closed, the notifications are
   * cleared and the editors closed, so the next test finds only what it makes.
   */
  async tidy(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.runCommand('Notifications: Clear All Notifications');
    await this.runCommand('View: Close All Editors');
    const tabs = this.page.locator('.editor-group-container .tab');
    await waitUntil('the editors closed', async () => (await tabs.count()) === 0);
  }

  /** Reload the window: the old extension host deactivates, a new one activates. */
  async reload(): Promise<void> {
    await this.page.reload();
    await this.waitForWorkbench();
  }

  /** SIGKILL the extension host (a crash: deactivate() does not run). Returns the killed pids. */
  async killExtensionHost(): Promise<number[]> {
    const pids = this.server.extensionHostPids();
    if (pids.length === 0) throw new Error('no extension host process found');
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + scaled(10_000);
    while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return pids;
  }

  /** Crash and reopen: kill the extension host, then reload so a new one activates. */
  async crashAndReopen(): Promise<void> {
    await this.killExtensionHost();
    await this.reload();
  }

  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${name.replace(/[^a-z0-9-]+/gi, '-').toLowerCase()}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** Copies every window's "Agent Waypoints" log into test-results (what the extension saw, for a failed test). */
  keepExtensionLogs(name: string): string[] {
    const logs = (fs.readdirSync(this.userDataDir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      f.endsWith('Agent Waypoints.log'),
    );
    const safe = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 120);
    return logs.map((f, i) => {
      const to = path.join(resultsDir, `${safe}-${i + 1}.log`);
      fs.copyFileSync(path.join(this.userDataDir, f), to);
      return to;
    });
  }

  async close(): Promise<void> {
    if (this.secondary) {
      this.windows.delete(this.page.context());
      await this.page
        .context()
        .close()
        .catch(() => undefined);
      return;
    }
    await this.closeWindows();
    await this.server.stop();
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}

// Code run in the page (the test project is type-checked without the DOM library, so as source text).
/** The body's classes in a run view's content frame (where VS Code puts the theme kind), else null. */
const WEBVIEW_BODY_CLASS = `document.body && document.body.querySelector('main') ? document.body.className : null`;
/** True once the workspace's saved editor state (IndexedDB, as VS Code in the browser keeps it) contains every needle. */
function editorsSavedScript(needles: string[]): string {
  return `(async (n) => {
    for (const d of await indexedDB.databases()) {
      if (!d.name || !d.name.startsWith('vscode-web-state-db-') || d.name.includes('global')) continue;
      const db = await new Promise((res, rej) => {
        const q = indexedDB.open(d.name);
        q.onsuccess = () => res(q.result);
        q.onerror = () => rej(q.error);
      });
      try {
        const v = await new Promise((res) => {
          const q = db.transaction('ItemTable').objectStore('ItemTable').get('memento/workbench.parts.editor');
          q.onsuccess = () => res(q.result);
          q.onerror = () => res(undefined);
        });
        if (typeof v === 'string' && n.every((x) => v.includes(x))) return true;
      } finally {
        db.close();
      }
    }
    return false;
  })(${JSON.stringify(needles)})`;
}

/** The poll interval of the condition waits above (a wait on a condition, not a guess at a duration). */
function pollInterval(): Promise<void> {
  return new Promise((r) => setTimeout(r, 100));
}

/** Polls `cond` until it holds; fails naming `what` after `timeoutMs` (scaled to the load). */
export async function waitUntil(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const limit = scaled(timeoutMs);
  const deadline = Date.now() + limit;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${limit} ms waiting for ${what}`);
    await pollInterval();
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Lines of each kept extension log printed with a failure (CI keeps only its output's tail, not test-results). */
const LOG_TAIL = 25;

/**
 * What a failed test leaves for a person to look at: a screenshot and the extension's logs kept in
 * test-results, and printed with the failure the notifications on screen and each log's last lines.
 */
export async function keepFailure(wb: Workbench, title: string): Promise<void> {
  const file = await wb.screenshot(`failed-${title}`).catch(() => undefined);
  if (file) console.log(`    screenshot: ${path.relative(repoRoot, file)}`);
  const toasts = await wb.page
    .locator('.notifications-toasts .notification-toast')
    .allInnerTexts()
    .catch(() => [] as string[]);
  for (const t of toasts) console.log(`    notification on screen: ${t.replace(/\s+/g, ' ').trim()}`);
  for (const log of wb.keepExtensionLogs(`failed-${title}`)) {
    console.log(`    extension log: ${path.relative(repoRoot, log)}, its last lines:`);
    for (const line of fs.readFileSync(log, 'utf8').trimEnd().split('\n').slice(-LOG_TAIL))
      console.log(`      ${line}`);
  }
}

/**
 * Mocha hooks: a fresh workbench for a describe block, a screenshot for every failed test. For the
 * blocks whose tests need a pristine window (a trust question, a store no other run has touched, a
 * reload that must find only its own run); the others of a file share one (shared.ts).
 */
export function useWorkbench(opts: WorkbenchOptions | (() => WorkbenchOptions) = {}): () => Workbench {
  let wb: Workbench | undefined;
  before(async function () {
    this.timeout(scaled(180_000));
    wb = await Workbench.start(typeof opts === 'function' ? opts() : opts);
  });
  afterEach(async function () {
    if (wb && this.currentTest?.state === 'failed') await keepFailure(wb, this.currentTest.fullTitle());
  });
  after(async () => {
    await wb?.close();
    wb = undefined;
  });
  return () => {
    if (!wb) throw new Error('workbench not started');
    return wb;
  };
}

/**
 * Switches the colour theme as a user picks one (Preferences: Color Theme); waits for the workbench to
 * show it. Not through the settings file: code-server's watcher of it can miss a write for a minute.
 */
export async function setColorTheme(
  wb: Workbench,
  theme: string,
  workbenchClass: 'vs' | 'vs-dark' | 'hc-black',
): Promise<void> {
  const applied = wb.page.locator(`.monaco-workbench.${workbenchClass}`);
  // The picker shows labels, not the setting's ids.
  const label =
    (
      {
        'Default Light Modern': 'Light Modern',
        'Default Dark Modern': 'Dark Modern',
        'Default High Contrast': 'Dark High Contrast',
      } as Record<string, string>
    )[theme] ?? theme;
  const input = wb.page.locator('.quick-input-widget input');
  const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  const ok = (p: Promise<unknown>) =>
    p.then(
      () => true,
      () => false,
    );
  const deadline = Date.now() + scaled(60_000);
  // The picker closes when a webview takes the focus late: open it again until the theme is applied.
  while (!(await applied.isVisible())) {
    if (Date.now() > deadline) throw new Error(`the ${theme} theme was never applied`);
    await wb.runCommand('Preferences: Color Theme');
    if (
      (await ok(input.fill(label, { timeout: scaled(5000) }))) &&
      (await ok(row.waitFor({ state: 'visible', timeout: scaled(5000) })))
    )
      await ok(row.click({ timeout: scaled(5000) })); // not Enter: the focused row may be 'Browse Additional Color Themes'
    await ok(applied.waitFor({ timeout: scaled(5000) }));
  }
  // Webviews take the theme on their next frame: wait until each open one says it has.
  const kind = { vs: 'vscode-light', 'vs-dark': 'vscode-dark', 'hc-black': 'vscode-high-contrast' }[workbenchClass];
  await waitUntil(`the open webviews to take the ${theme} theme`, async () => {
    for (const frame of wb.page.frames()) {
      const cls = await frame.evaluate<string | null>(WEBVIEW_BODY_CLASS).catch(() => null);
      if (cls !== null && !cls.split(/\s+/).includes(kind)) return false;
    }
    return true;
  });
}
