// Starting and stopping a real VS Code (code-server) on loopback, shared by the in-host
// runner, the e2e harness and `npm run demo`. How and why: the README, "How tests run on a machine without internet".
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
// @ts-expect-error plain ESM script without types
import * as tools from '../../scripts/tools.mjs';

const execFileAsync = promisify(execFile);

export const codeServerEntry: string = tools.codeServerEntry;
export const node24: string = tools.node24;
export const chromiumPath: string = tools.chromium;
export const codeServerEnv: (extra?: Record<string, string>) => NodeJS.ProcessEnv = tools.codeServerEnv;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `aw-${prefix}-`));
}

/** User settings that keep an offline workbench quiet and deterministic. */
export function writeUserSettings(userDataDir: string, extra: Record<string, unknown> = {}): void {
  const dir = path.join(userDataDir, 'User');
  fs.mkdirSync(dir, { recursive: true });
  const settings = {
    'telemetry.telemetryLevel': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'security.workspace.trust.enabled': false,
    ...extra,
  };
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

export async function installVsix(vsix: string, extensionsDir: string): Promise<void> {
  await execFileAsync(
    node24,
    [codeServerEntry, '--extensions-dir', extensionsDir, '--install-extension', vsix, '--force'],
    {
      env: codeServerEnv(),
      timeout: 120_000,
    },
  );
}

/**
 * Built-in extensions no test of ours uses that would activate at startup (git, GitHub, Copilot Chat, the
 * debugger's auto-attach) or when a test opens a file (the TypeScript and JSON language servers, each a
 * process of its own): the server leaves them out, so every start and reload on a loaded machine is
 * spent on the extension under test. Grammars and themes stay; the extension depends on none of these.
 */
export const SKIPPED_BUILTINS = [
  'GitHub.copilot-chat',
  'vscode.git',
  'vscode.git-base',
  'vscode.github',
  'vscode.github-authentication',
  'vscode.microsoft-authentication',
  'vscode.debug-auto-launch',
  'vscode.merge-conflict',
  'vscode.emmet',
  'vscode.npm',
  'vscode.typescript-language-features',
  'ms-vscode.js-debug',
  'ms-vscode.js-debug-companion',
  'ms-vscode.vscode-js-profile-table',
  'vscode.terminal-suggest',
  'vscode.tunnel-forwarding',
  'vscode.extension-editing',
  'vscode.configuration-editing',
  'vscode.json-language-features',
  'vscode.markdown-language-features',
  'vscode.references-view',
  'vscode.simple-browser',
  'vscode.ipynb',
];

/**
 * code-server compresses its 19 MB workbench script again for every page that asks (brotli, seconds of
 * CPU on a loaded machine, per start and per reload): over loopback the page asks for it as it is.
 */
export const UNCOMPRESSED = { 'Accept-Encoding': 'identity' };

export interface CodeServerOptions {
  workspace: string;
  userDataDir: string;
  extensionsDir: string;
  logFile: string;
  /** Keep workspace trust on (tests of restricted mode). */
  workspaceTrust?: boolean;
  /**
   * Honour development options (extensionDevelopmentPath / extensionTestsPath): a built VS Code
   * ignores them unless its smoke-test driver is on. Off for the e2e tests and the demo, because the
   * driver also suppresses notification toasts.
   */
  developmentOptions?: boolean;
  env?: Record<string, string>;
  port?: number;
  /**
   * Built-in extensions the server leaves out (ids such as `vscode.git`): whatever of them activates at
   * startup, or when a test opens a file, costs every window its time on a loaded machine.
   */
  skipBuiltinExtensions?: string[];
}

export interface CodeServer {
  readonly port: number;
  readonly pid: number;
  /** Workbench URL for a folder, with an optional development payload. */
  url(payload?: [string, string][]): string;
  /** Absolute path → vscode-remote URI string that this server's extension host understands. */
  remoteUri(absPath: string): string;
  /** Pids of live extension host processes started by this server. */
  extensionHostPids(): number[];
  stop(): Promise<void>;
}

export async function startCodeServer(opts: CodeServerOptions): Promise<CodeServer> {
  if (!fs.existsSync(codeServerEntry)) {
    throw new Error(`code-server is not installed at ${codeServerEntry}. Run: npm run tools`);
  }
  const port = opts.port ?? (await freePort());
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const log = fs.openSync(opts.logFile, 'a');
  const args = [
    codeServerEntry,
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--user-data-dir',
    opts.userDataDir,
    '--extensions-dir',
    opts.extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    ...(opts.workspaceTrust ? [] : ['--disable-workspace-trust']),
    ...(opts.developmentOptions ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    opts.workspace,
  ];
  // Own process group, so stop() takes the extension hosts and helpers down with it.
  const proc: ChildProcess = spawn(node24, args, {
    env: codeServerEnv({
      ...(opts.skipBuiltinExtensions?.length
        ? { VSCODE_SKIP_BUILTIN_EXTENSIONS: opts.skipBuiltinExtensions.join(',') }
        : {}),
      ...opts.env,
    }),
    stdio: ['ignore', log, log],
    detached: true,
  });
  fs.closeSync(log);
  const pid = proc.pid!;
  let exited = false;
  proc.on('exit', () => (exited = true));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`code-server exited during startup; see ${opts.logFile}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      killGroup(pid);
      throw new Error(`code-server did not answer on port ${port} within 60 s; see ${opts.logFile}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  const remoteUri = (p: string) => `vscode-remote://127.0.0.1:${port}${path.resolve(p)}`;
  return {
    port,
    pid,
    remoteUri,
    url(payload) {
      const q = new URLSearchParams({ folder: path.resolve(opts.workspace) });
      if (payload) q.set('payload', JSON.stringify(payload));
      return `http://127.0.0.1:${port}/?${q.toString()}`;
    },
    extensionHostPids: () => descendants(pid).filter((p) => cmdline(p).includes('extensionHost')),
    async stop() {
      killGroup(pid);
      const t = Date.now();
      while (!exited && Date.now() - t < 5000) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

function killGroup(pid: number): void {
  for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(-pid, sig);
    } catch {
      /* already gone */
    }
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** All live descendants of pid, from /proc (Linux). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* exited meanwhile */
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
