// The headless runner as a user runs it: src/cli bundled by esbuild as scripts/build.mjs bundles
// dist/cli.js (with the shell grammar and runner files beside it), spawned as its own process.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';

const root = path.resolve(__dirname, '../..');
let bundled: Promise<string> | undefined;

/** dist/cli.js's twin in a temp folder, built once per test process. */
export function cliBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-cli-'));
    const out = path.join(dir, 'cli.js');
    await esbuild.build({
      entryPoints: [path.join(root, 'src/cli/bin.ts')],
      outfile: out,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      banner: { js: '#!/usr/bin/env node' },
      logLevel: 'error',
    });
    const wasm = path.join(root, 'node_modules/@vscode/tree-sitter-wasm/wasm');
    for (const f of ['tree-sitter.wasm', 'tree-sitter-bash.wasm'])
      fs.copyFileSync(path.join(wasm, f), path.join(dir, f));
    for (const f of ['argvRunner.cjs', 'programs.cjs', 'gitHardening.cjs'])
      fs.copyFileSync(path.join(root, 'src/runner/tools/shell', f), path.join(dir, f));
    fs.copyFileSync(path.join(root, 'src/runner/sandbox/netHelper.pl'), path.join(dir, 'netHelper.pl'));
    return out;
  })();
  return bundled;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** stderr so far (progress lines). */
  stderr(): string;
  done: Promise<CliResult>;
}

/** Starts `agent-waypoints <args>` with exactly `env` (plus PATH and HOME): nothing of the test's own environment leaks in. */
export async function startCli(args: string[], env: Record<string, string>, cwd?: string): Promise<CliProcess> {
  const child = spawn(process.execPath, [await cliBundle(), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir(), ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, stderr: () => stderr, done };
}

export async function cli(args: string[], env: Record<string, string>, cwd?: string): Promise<CliResult> {
  return (await startCli(args, env, cwd)).done;
}
