// The real MCP servers the tests run, installed from npm as dev dependencies (no one here wrote
// them): @modelcontextprotocol/server-everything (stdio and streamable HTTP) and
// @modelcontextprotocol/server-filesystem. Started with this Node, as the extension host would.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { readConfig, type ServerDef } from '../../src/runner/mcp/config';

const REPO = path.resolve(__dirname, '../..');
export const EVERYTHING_JS = path.join(REPO, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM_JS = path.join(REPO, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
/** A server of ours whose `echo` schema follows SCHEMA_VERSION (an upgrade that changes a tool). */
export const VERSIONED_JS = path.join(REPO, 'test/fixtures/mcp/versioned.mjs');
/** A scripted server of ours: never answers, fails with JSON-RPC errors, big results, its env (scripted.mjs). */
export const SCRIPTED_JS = path.join(REPO, 'test/fixtures/mcp/scripted.mjs');

/** The server definitions of a `servers` object, as read from a user setting. */
export function defs(servers: Record<string, unknown>, workspaceFolder: string | null = null): ServerDef[] {
  const parsed = readConfig({ servers }, { source: 'user', label: 'test', workspaceFolder, userHome: '/home/test' });
  if (parsed.errors.length) throw new Error(parsed.errors.join('\n'));
  return parsed.servers;
}

export function everythingStdio(extraEnv: Record<string, string> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [EVERYTHING_JS, 'stdio'], env: extraEnv };
}

export function scriptedStdio(env: Record<string, string> = {}): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [SCRIPTED_JS], env };
}

export function filesystemStdio(dir: string): Record<string, unknown> {
  return { type: 'stdio', command: process.execPath, args: [FILESYSTEM_JS, dir] };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface HttpServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over streamable HTTP (`streamableHttp` argument), once it says it listens. */
export async function startEverythingHttp(): Promise<HttpServer> {
  const port = await freePort();
  return startHttp([EVERYTHING_JS, 'streamableHttp'], { PORT: String(port) }, 'server-everything', port);
}

/** The scripted server over streamable HTTP, on the port it picks. */
export async function startScriptedHttp(): Promise<HttpServer> {
  return startHttp([SCRIPTED_JS, '--http'], {}, 'the scripted server');
}

async function startHttp(
  args: string[],
  env: Record<string, string>,
  what: string,
  port?: number,
): Promise<HttpServer> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const listening = await new Promise<number>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${what} (HTTP) did not start: ${err}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on port (\d+)/i.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} (HTTP) exited with ${code}: ${err}`));
    });
  });
  child.stdout!.resume();
  return {
    url: `http://127.0.0.1:${port ?? listening}/mcp`,
    process: child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
