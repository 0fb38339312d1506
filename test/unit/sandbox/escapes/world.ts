// The host an escape attempt aims at, made fresh for one run of the corpus: a home with
// credentials and dotfiles, the extension's storage folder, a workspace that is a git repository
// with protected paths, a folder beside it, a target in the host's /tmp, an HTTP server and a unix
// socket on this machine, a host process to kill or trace, and an API key in the environment.
// Everything lives outside /tmp (the sandbox's /tmp is its own) except the /tmp target itself.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

export const API_KEY = 'sk-corpus-HOST-API-KEY';
export const SECRET = 'CORPUS-SECRET';

export interface World {
  base: string;
  home: string;
  storage: string;
  /** The workspace's parent: a folder outside it. */
  parent: string;
  ws: string;
  /** A folder in the host's /tmp. */
  hostTmp: string;
  socketPath: string;
  port: number;
  /** What reached the server and the socket. */
  hits: { http: number; socket: number };
  victim: ChildProcess;
  /** Files (absolute) and their content before the corpus ran. */
  before: Map<string, string>;
  close(): Promise<void>;
}

const HOME_FILES: Record<string, string> = {
  '.bashrc': '# bashrc\n',
  '.profile': '# profile\n',
  '.ssh/id_rsa': `${SECRET}-ssh\n`,
  '.aws/credentials': `[default]\naws_secret_access_key=${SECRET}-aws\n`,
  '.npmrc': `//registry.npmjs.org/:_authToken=${SECRET}-npm\n`,
  '.git-credentials': `https://u:${SECRET}-gitcred@github.com\n`,
  '.netrc': `machine github.com login u password ${SECRET}-netrc\n`,
  '.config/gh/hosts.yml': `github.com:\n  oauth_token: ${SECRET}-gh\n`,
};

const WS_FILES: Record<string, string> = {
  'README.md': '# project\n',
  'package.json': '{ "name": "p", "scripts": { "test": "node test.js" } }\n',
  '.env': `API_TOKEN=${SECRET}-dotenv\n`,
  '.vscode/settings.json': '{}\n',
  '.github/workflows/ci.yml': 'on: push\n',
  '.devcontainer/devcontainer.json': '{}\n',
  'app.code-workspace': '{ "folders": [] }\n',
  'sub/lib.js': 'module.exports = 1;\n',
};

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

/** Every regular file under `dir` with its content (the .git folders included). */
function snapshot(dir: string, into: Map<string, string>): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) snapshot(p, into);
    else if (e.isFile()) into.set(p, fs.readFileSync(p, 'latin1'));
  }
}

export async function makeWorld(): Promise<World> {
  const base = fs.realpathSync(fs.mkdtempSync('/var/tmp/aw-sbx-corpus-'));
  const home = path.join(base, 'home');
  const storage = path.join(base, 'storage');
  const parent = path.join(base, 'parent');
  const ws = path.join(parent, 'ws');
  write(home, HOME_FILES);
  write(storage, { 'runs/checkpoint.json': `{"secret":"${SECRET}-storage"}\n` });
  write(parent, { 'keep.txt': 'keep\n' });
  write(ws, WS_FILES);
  git(ws, 'init', '-q');
  git(ws, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'init');
  write(ws, {
    '.git/modules/lib/config': '[core]\n\tbare = false\n',
    '.git/modules/lib/HEAD': 'ref: refs/heads/main\n',
  });
  git(path.join(ws, 'sub'), 'init', '-q');
  const hostTmp = fs.mkdtempSync('/tmp/aw-sbx-outside-');
  const before = new Map<string, string>();
  for (const d of [home, storage, parent]) snapshot(d, before);
  const hits = { http: 0, socket: 0 };
  const server = http.createServer((_req, res) => {
    hits.http++;
    res.end('reached\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const socketPath = path.join(base, 'agent.sock');
  const sock = net.createServer((s) => {
    hits.socket++;
    s.end('reached\n');
  });
  await new Promise<void>((r) => sock.listen(socketPath, r));
  fs.chmodSync(socketPath, 0o777);
  const victim = spawn('sleep', ['600'], { stdio: 'ignore' });
  return {
    base,
    home,
    storage,
    parent,
    ws,
    hostTmp,
    socketPath,
    port: (server.address() as net.AddressInfo).port,
    hits,
    victim,
    before,
    close: async () => {
      victim.kill('SIGKILL');
      await new Promise((r) => server.close(r));
      await new Promise((r) => sock.close(r));
      fs.rmSync(base, { recursive: true, force: true });
      fs.rmSync(hostTmp, { recursive: true, force: true });
    },
  };
}

/** Files of the home, the storage folder and the workspace's surroundings that differ from before (or are gone). */
export function changedFiles(w: World): string[] {
  const now = new Map<string, string>();
  for (const d of [w.home, w.storage, w.parent]) snapshot(d, now);
  const changed: string[] = [];
  for (const [p, text] of w.before) {
    if (now.get(p) !== text) changed.push(path.relative(w.base, p));
  }
  for (const p of now.keys()) {
    if (!w.before.has(p) && !isWorkspaceWork(w, p)) changed.push(`${path.relative(w.base, p)} (new)`);
  }
  return changed;
}

/** Files an attempt may create: the workspace's own (outside its protected paths, which the snapshot covers). */
function isWorkspaceWork(w: World, p: string): boolean {
  const rel = path.relative(w.ws, p);
  if (rel.startsWith('..')) return false;
  return !/^(\.git|\.vscode|\.claude|\.github|\.devcontainer|sub\/\.git)(\/|$)|\.code-workspace$/.test(rel);
}
