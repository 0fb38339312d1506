#!/usr/bin/env node
// `npm test`: tools (installed when missing), then lint ∥ check-types ∥ build → package, then
// unit → int (plain Node: the fast tier, then crash, torture, PostgreSQL, real shells and servers,
// two files at a time) → in-host → e2e (real VS Code, then Chromium against the installed VSIX, two
// files at a time), and beside them the benchmark's smoke run. The stages of one line wait on each
// other; lines run at once. A stage's output is printed whole when it ends, with its time (and written to
// test-results/<stage>.log as it comes). Ends with each stage's time and one line
// `N passed, N failed` summed over all suites.
// Stops early only when a stage the later ones need fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { installTools, toolsReady } from './tools.mjs';

const root = path.resolve(import.meta.dirname, '..');
const results = path.join(root, 'test-results');
fs.mkdirSync(results, { recursive: true });

const t00 = Date.now();
const timings = [];
let passed = 0;
let failed = 0;
/** The failed tests of the suites that ran, as printed at the end: CI keeps only the log's tail. */
const failedTests = [];

/**
 * Runs a program in the repository. With `out`, its output is collected there (and in the stage's log
 * file) instead of going straight to the console, so stages that run at once do not interleave.
 */
function run(cmd, args, { env = {}, out } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: root,
      stdio: out ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: { ...process.env, ...env },
    });
    if (out) {
      child.stdout.on('data', (b) => out.write(b));
      child.stderr.on('data', (b) => out.write(b));
    }
    child.on('error', (err) => {
      (out ?? process.stderr).write(`${cmd}: ${err.message}\n`);
      resolve(false);
    });
    child.on('close', (code) => resolve(code === 0));
  });
}

const npmRun = (script, opts = {}, args = []) =>
  run('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], opts);

/** A program from node_modules/.bin (the stages before it have built what it needs). */
const bin = (name, args, opts) => run(path.join(root, 'node_modules', '.bin', name), args, opts);

/** A stage's output: kept in memory to print whole at its end, and in test-results/<stage>.log meanwhile. */
function buffer(name) {
  const chunks = [];
  const file = fs.openSync(path.join(results, `${name}.log`), 'w');
  return {
    write(b) {
      chunks.push(Buffer.from(b));
      fs.writeSync(file, b);
    },
    close() {
      fs.closeSync(file);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/**
 * One stage: `fn(out)` returns whether it passed. Alone (`live`) its output streams as it comes;
 * otherwise it is printed whole, framed by the stage's name, when the stage ends.
 */
async function stage(name, fn, { live = false } = {}) {
  const t0 = Date.now();
  const out = live ? undefined : buffer(name);
  if (live) console.log(`\n━━ ${name}`);
  let ok = false;
  try {
    ok = await fn(out);
  } catch (err) {
    (out ?? process.stderr).write(`${err instanceof Error ? err.message : String(err)}\n`);
  }
  const s = (Date.now() - t0) / 1000;
  timings.push([name, s, ok, (t0 - t00) / 1000]);
  if (out) process.stdout.write(`\n━━ ${name}\n${out.close()}`);
  console.log(`━━ ${name}: ${ok ? 'ok' : 'FAILED'} (${s.toFixed(1)} s)`);
  return ok;
}

/** Stages one after another, each only if the one before passed; true if all did. */
async function chain(...stages) {
  for (const s of stages) if (!(await s())) return false;
  return true;
}

/** Stages one after another, each whether or not the one before passed (they test different things). */
async function inTurn(...stages) {
  let ok = true;
  for (const s of stages) ok = (await s()) && ok;
  return ok;
}

/**
 * A mocha suite: its results file carries the counts; a crash without results counts as one failure.
 * Runs the suite's program directly: the `test:*` npm scripts also install the tools and build
 * first (so each works on its own on a fresh clone), which the gates above have done once already.
 */
function suite(name, program, args) {
  return () =>
    stage(name, async (out) => {
      const file = path.join(results, `${name}.json`);
      fs.rmSync(file, { force: true });
      const ok = await bin(program, args, { env: { AW_RESULTS_FILE: file }, out });
      if (!fs.existsSync(file)) {
        failed += 1;
        out.write(`${name}: no results written (the suite crashed before reporting)\n`);
        return false;
      }
      const r = JSON.parse(fs.readFileSync(file, 'utf8'));
      passed += r.passed;
      failed += r.failed;
      for (const t of r.tests ?? []) if (t.state === 'failed') failedTests.push(describeFailure(name, t));
      return ok && r.failed === 0;
    });
}

/** A stage with no test results of its own (a gate every later stage depends on, or the bench): a failure counts once. */
function gate(name, fn) {
  return async () => {
    if (await stage(name, fn)) return true;
    failed += 1;
    return false;
  };
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
  console.log('\n━━ stages (started at, took)');
  for (const [name, s, ok, at] of timings.sort((a, b) => a[3] - b[3]))
    console.log(`  ${ok ? '✔' : '✘'} ${name.padEnd(12)} +${at.toFixed(0).padStart(4)} s ${s.toFixed(1).padStart(7)} s`);
  console.log(`  total ${((Date.now() - t00) / 1000).toFixed(1)} s`);
  console.log(`\n${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}

/** Lines of stages that run at once; true if every one passed. */
async function together(title, ...lines) {
  console.log(`\n━━ ${title} (each stage printed when it ends; meanwhile in test-results/<stage>.log)`);
  return (await Promise.all(lines)).every(Boolean);
}

const toolsOk = await stage('tools', async () => (toolsReady() ? true : (await installTools(), toolsReady())), {
  live: true,
});
if (!toolsOk) {
  failed += 1;
  finish();
}
const gatesOk = await together(
  'lint ∥ check-types ∥ build → package',
  chain(gate('lint', (out) => npmRun('lint', { out }))),
  chain(gate('check-types', (out) => npmRun('check-types', { out }))),
  chain(
    gate('build', (out) => npmRun('build', { out })),
    gate('package', (out) => npmRun('package', { out })),
  ),
);
if (!gatesOk) finish();
// The tiers in turn: side by side on a 2-core machine each slowed the other more than it gained
// (bench/README.md, "Test suite"), and timing-bound tests had no margin left. The benchmark's smoke
// run (every row once at its smallest size: it only has to run, it measures nothing under this load)
// goes beside them, on the bundles the package stage built.
await together(
  'unit → int → host → e2e ∥ bench (smoke)',
  inTurn(
    suite('unit', 'mocha', ['--config', '.mocharc.unit.cjs']),
    suite('int', 'mocha', ['--config', '.mocharc.int.cjs']),
    suite('host', 'tsx', ['test/runInCodeServer.ts']),
    suite('e2e', 'mocha', ['--config', '.mocharc.e2e.cjs']),
  ),
  gate('bench', (out) => bin('tsx', ['bench/index.ts', '--smoke'], { out }))(),
);
finish();
