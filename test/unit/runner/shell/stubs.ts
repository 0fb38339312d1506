// Logging stub programs for running command lines for real: a temp folder of executables (npm,
// git, touch, rm, curl, calc, …), each writing its own name and argv to a log file of its own, used
// as the whole PATH. runEverywhere runs an approved line by dash (`sh -c`), by bash, and by
// run_command's argv runner, and checks the logs: which programs ran, with which words (the argv
// runner also has each git read its configuration first: gitHardening.cjs).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createCodingRegistry } from '../../../../src/runner/tools';
import { CONFIG_SCAN } from '../../../../src/runner/tools/shell/gitHardening.cjs';
import { chooseLaunch } from '../../../../src/runner/tools/shell/launch';
import { planCommands, type Plan } from '../../../../src/runner/tools/shell/plan';
import { readPlan } from '../../../../src/runner/tools/shell/reading';
import { tmpDir, toolCtx } from '../helpers';
import { CORPUS_ALLOW } from './corpus';

export const STUB_NAMES = (
  'npm git echo ls cat touch rm curl wget calc sh bash node python env sudo xargs tail head grep ' +
  'printf true false test pwd kill chmod mkdir id whoami tee find timeout'
).split(' ');

/** Builtins in dash and bash: a shell runs its own, so its stub never logs. */
export const SHELL_BUILTINS = new Set(['echo', 'printf', 'true', 'false', 'test', 'pwd', 'kill']);

export interface Stubs {
  bin: string;
  log: string;
  /** An empty folder the line runs in; nothing may appear in it. */
  cwd: string;
  dispose(): void;
}

export function makeStubs(): Stubs {
  const base = tmpDir('aw-stubs-');
  const bin = path.join(base, 'bin');
  const log = path.join(base, 'log');
  const cwd = path.join(base, 'cwd');
  for (const d of [bin, log, cwd]) fs.mkdirSync(d);
  // Each call gets its own log file (no interleaving in a pipeline): name and argv, NUL-separated.
  const script = `#!/bin/sh\nPATH=/usr/bin:/bin\nf=$(mktemp "$STUB_LOG/XXXXXXXX")\nprintf '%s\\0' "\${0##*/}" "$@" > "$f"\n`;
  for (const name of STUB_NAMES) fs.writeFileSync(path.join(bin, name), script, { mode: 0o755 });
  return { bin, log, cwd, dispose: () => fs.rmSync(base, { recursive: true, force: true }) };
}

/** The calls logged since the last take, each as its argv (program name first), sorted; clears the log. */
export function takeLog(stubs: Stubs): string[][] {
  const calls: string[][] = [];
  for (const f of fs.readdirSync(stubs.log)) {
    const file = path.join(stubs.log, f);
    calls.push(fs.readFileSync(file, 'utf8').split('\0').slice(0, -1));
    fs.rmSync(file);
  }
  return sortCalls(calls);
}

export function sortCalls(calls: string[][]): string[][] {
  return calls
    .map((c) => JSON.stringify(c))
    .sort()
    .map((c) => JSON.parse(c) as string[]);
}

/**
 * What the stubs must log for `plan` when every program succeeds (`||` branches are skipped); with
 * `gitScans`, each git's read of its configuration before it runs (the argv runner's).
 */
export function expectedCalls(plan: Plan, except: ReadonlySet<string> = new Set(), gitScans = false): string[][] {
  const ran = plan.filter((s, i) => i === 0 || s.op !== '||');
  const argvs = planCommands(ran)
    .map((c) => c.argv)
    .filter((argv) => !except.has(argv[0] as string));
  const scans = gitScans ? argvs.filter((argv) => argv[0] === 'git').map(() => ['git', ...CONFIG_SCAN]) : [];
  return sortCalls([...argvs, ...scans]);
}

function stubEnv(stubs: Stubs): NodeJS.ProcessEnv {
  return { PATH: stubs.bin, STUB_LOG: stubs.log, HOME: stubs.cwd, LANG: 'C' };
}

/** Runs `line` with a real shell (`/bin/sh` is dash on Debian), PATH = the stubs only. */
export function runInShell(shell: '/bin/sh' | '/bin/bash', line: string, stubs: Stubs): Promise<void> {
  return new Promise((resolve) => {
    execFile(shell, ['-c', line], { cwd: stubs.cwd, env: stubEnv(stubs), timeout: 10_000 }, () => resolve());
  });
}

const registry = createCodingRegistry();

/** Runs `line` through the real run_command tool as the policy approved it (the argv runner). */
export async function runApproved(line: string, stubs: Stubs): Promise<string> {
  const saved = { ...process.env };
  Object.assign(process.env, stubEnv(stubs));
  try {
    const r = await registry.execute(
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'run_command', arguments: JSON.stringify({ command: line }) },
      },
      toolCtx(stubs.cwd, { approvedBy: 'policy' }),
    );
    return r.output;
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** Runs an approved line three ways and checks what ran against what the policy judged. */
export async function runEverywhere(line: string, stubs: Stubs): Promise<void> {
  const reading = readPlan(line);
  assert.ok(reading && 'plan' in reading, `the policy judged a plan for ${JSON.stringify(line)}`);
  const allowed = (argv: string[]) => CORPUS_ALLOW.some((e) => e.split(' ').every((w, i) => argv[i] === w));
  const launch = await chooseLaunch(line, 'policy', 'linux');
  assert.equal(launch.kind, 'argv', `${JSON.stringify(line)} runs without a shell`);

  for (const shell of ['/bin/sh', '/bin/bash'] as const) {
    await runInShell(shell, line, stubs);
    const calls = takeLog(stubs);
    assert.deepEqual(calls, expectedCalls(reading.plan, SHELL_BUILTINS), `${shell} -c ${JSON.stringify(line)}`);
    assert.ok(calls.every(allowed), `${shell}: only allowed programs`);
    assert.deepEqual(fs.readdirSync(stubs.cwd), [], `${shell} left nothing in the folder`);
  }
  const output = await runApproved(line, stubs);
  const calls = takeLog(stubs);
  assert.deepEqual(
    calls,
    expectedCalls(reading.plan, new Set(), true),
    `argv runner: ${JSON.stringify(line)}\n${output}`,
  );
  const isScan = (argv: string[]) => JSON.stringify(argv) === JSON.stringify(['git', ...CONFIG_SCAN]);
  assert.ok(
    calls.filter((c) => !isScan(c)).every(allowed),
    'argv runner: only allowed programs (and git reading its configuration)',
  );
  assert.deepEqual(fs.readdirSync(stubs.cwd), [], 'the argv runner left nothing in the folder');
}
