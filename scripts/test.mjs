#!/usr/bin/env node
// `npm test`: tools (installed when missing) → lint → check-types → build → package →
// unit (plain Node, the fast tier) → int (plain Node: crash, torture, PostgreSQL, real shells and
// servers) → in-host (real VS Code) → e2e (Chromium against the installed VSIX) → benchmark smoke
// run. Prints each stage's wall time and ends with one line `N passed, N failed` summed over all
// suites. Stops early only when a stage the later ones need fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { installTools, toolsReady } from './tools.mjs';

const root = path.resolve(import.meta.dirname, '..');
const results = path.join(root, 'test-results');
fs.mkdirSync(results, { recursive: true });

const timings = [];
let passed = 0;
let failed = 0;
/** The failed tests of the suites that ran, as printed at the end: CI keeps only the log's tail. */
const failedTests = [];

function npmRun(script, env = {}, args = []) {
  const r = spawnSync('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return r.status === 0;
}

async function stage(name, fn) {
  const t0 = Date.now();
  console.log(`\n━━ ${name}`);
  let ok = false;
  try {
    ok = await fn();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
  }
  const s = (Date.now() - t0) / 1000;
  timings.push([name, s, ok]);
  console.log(`━━ ${name}: ${ok ? 'ok' : 'FAILED'} (${s.toFixed(1)} s)`);
  return ok;
}

/** A program from node_modules/.bin, run in the repository (the stages below already built what it needs). */
function bin(name, args, env = {}) {
  const r = spawnSync(path.join(root, 'node_modules', '.bin', name), args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return r.status === 0;
}

/**
 * A mocha suite: its results file carries the counts; a crash without results counts as one failure.
 * Runs the suite's program directly: the `test:*` npm scripts also install the tools and build
 * first (so each works on its own on a fresh clone), which the gates above have done once already.
 */
function suite(name, program, args) {
  return stage(name, () => {
    const file = path.join(results, `${name}.json`);
    fs.rmSync(file, { force: true });
    const ok = bin(program, args, { AW_RESULTS_FILE: file });
    if (!fs.existsSync(file)) {
      failed += 1;
      console.error(`${name}: no results written (the suite crashed before reporting)`);
      return false;
    }
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    passed += r.passed;
    failed += r.failed;
    for (const t of r.tests ?? []) if (t.state === 'failed') failedTests.push(describeFailure(name, t));
    return ok && r.failed === 0;
  });
}

/** A stage every later one depends on: a failure counts once and ends the run. */
async function gate(name, fn) {
  if (await stage(name, fn)) return true;
  failed += 1;
  finish();
  return false;
}

/** A failed test: its title, the error's first lines (Playwright's colours stripped) and where in the test it failed. */
function describeFailure(suiteName, t) {
  const lines = [`  ✘ ${suiteName}: ${t.title} (${Math.round(t.durationMs ?? 0)} ms)`];
  const stack = String(t.error?.stack || t.error?.message || '')
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
    .split('\n');
  const where = stack.find((l) => /^\s*at .*test[/\\]/.test(l));
  for (const l of [...stack.slice(0, 10), ...(where && !stack.slice(0, 10).includes(where) ? ['  …', where] : [])])
    lines.push(`      ${l}`);
  return lines.join('\n');
}

function finish() {
  if (failedTests.length) console.log(`\n━━ failed tests\n${failedTests.join('\n')}`);
  console.log('\n━━ stages');
  for (const [name, s, ok] of timings)
    console.log(`  ${ok ? '✔' : '✘'} ${name.padEnd(12)} ${s.toFixed(1).padStart(7)} s`);
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}

const gates = [
  ['tools', async () => (toolsReady() ? true : (await installTools(), toolsReady()))],
  ['lint', () => npmRun('lint')],
  ['check-types', () => npmRun('check-types')],
  ['build', () => npmRun('build')],
  ['package', () => npmRun('package')],
];
for (const [name, fn] of gates) if (!(await gate(name, fn))) break;
await suite('unit', 'mocha', ['--config', '.mocharc.unit.json']);
await suite('int', 'mocha', ['--config', '.mocharc.int.json']);
await suite('host', 'tsx', ['test/runInCodeServer.ts']);
await suite('e2e', 'mocha', ['--config', '.mocharc.e2e.json']);
// The benchmark is measured, not asserted; CI runs its quick mode so it never rots.
if (!(await stage('bench', () => npmRun('bench', {}, ['--quick'])))) failed += 1;
finish();
