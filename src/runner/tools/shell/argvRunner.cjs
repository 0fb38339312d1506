// @ts-check
// Runs a command plan (plan.ts) without a shell: each program is spawned directly with the argv
// the approval policy judged, and `&&`, `||`, `;`, pipes and the few accepted redirections are
// wired here. run_command starts this script as the leader of the command's process group (so a
// timeout or cancel kills everything it started, as with a shell) and sends the plan as JSON on
// file descriptor 3. Plain CommonJS, with only the modules beside it: it runs under the extension
// host's own runtime (Electron as Node, or Node).
// What each program is and gets is decided here, right before it starts: a bare name comes from
// PATH's absolute folders outside the workspace only (programs.cjs) and so does what the programs
// start by name; git runs hardened (gitHardening.cjs), its configuration read just before it.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { findProgram, skippedProgram, trustedPath } = require('./programs.cjs');
const { gitSettings } = require('./gitHardening.cjs');

/** @typedef {{ fd: 1 | 2, to: 'null' | 1 | 2 }} Redirect */
/** @typedef {{ argv: string[], redirects: Redirect[] }} SimpleCommand */
/** @typedef {{ op: ';' | '&&' | '||', pipeline: SimpleCommand[] }} Step */
/** @typedef {{ file: string, env: NodeJS.ProcessEnv } | { error: string, status: number }} Prepared */

/** @param {string} text */
function say(text) {
  try {
    fs.writeSync(2, text);
  } catch {
    // stderr is gone: nothing to tell
  }
}

/** @param {number | null} code @param {NodeJS.Signals | null} signal */
function statusOf(code, signal) {
  if (code !== null) return code;
  return 128 + ((signal && os.constants.signals[signal]) || 0);
}

/**
 * The file a command runs and its environment, or why it does not run. A word with a `/` is a path
 * the allow list names: it resolves against the folder the command runs in (the judged cwd). A bare
 * name is looked up in the trusted PATH entries; where only a skipped one has it, the message says so.
 * @param {SimpleCommand} stage
 * @param {string} workspaceRoot
 * @returns {Promise<Prepared>}
 */
async function prepare(stage, workspaceRoot) {
  const word = /** @type {string} */ (stage.argv[0]);
  const lookup = { env: process.env, workspaceRoot };
  const env = { ...process.env, PATH: trustedPath(lookup) };
  const file = word.includes('/') ? path.resolve(process.cwd(), word) : findProgram(word, lookup);
  if (file === null) {
    const skipped = skippedProgram(word, lookup);
    const error = skipped
      ? `${word}: not run from ${skipped}: a command that runs without asking never takes a program by its bare name from the workspace or a relative PATH entry (write its path, and allow that, instead)`
      : `${word}: command not found`;
    return { error, status: 127 };
  }
  if (path.basename(file) !== 'git') return { file, env };
  try {
    return { file, env: await gitSettings(file, process.cwd(), env, workspaceRoot) };
  } catch (err) {
    return { error: `${word}: not run: ${err instanceof Error ? err.message : String(err)}`, status: 126 };
  }
}

/**
 * One pipeline, spawned from its last stage to its first so each stage can write into the next
 * one's stdin (with `2>&1`, stdout and stderr both). Resolves with the last stage's status.
 * @param {SimpleCommand[]} stages
 * @param {Prepared[]} prepared
 * @returns {Promise<number>}
 */
function runPipeline(stages, prepared) {
  return new Promise((resolve) => {
    const last = stages.length - 1;
    /** @type {number[]} */
    const statuses = [];
    let pending = stages.length;
    const finished = (/** @type {number} */ i, /** @type {number} */ status) => {
      if (statuses[i] !== undefined) return;
      statuses[i] = status;
      if (--pending === 0) resolve(/** @type {number} */ (statuses[last]));
    };
    /** @type {import('node:stream').Writable | null} */
    let nextStdin = null;
    for (let i = last; i >= 0; i--) {
      const stage = /** @type {SimpleCommand} */ (stages[i]);
      /** @type {Record<1 | 2, 'null' | 'pipe' | 1 | 2>} */
      const fds = { 1: i === last ? 1 : 'pipe', 2: 2 };
      for (const r of stage.redirects) fds[r.fd] = r.to === 'null' ? 'null' : fds[r.to];
      const target = (/** @type {'null' | 'pipe' | 1 | 2} */ t) =>
        t === 'null' ? 'ignore' : t === 'pipe' ? (nextStdin ?? 'ignore') : t;
      const word = /** @type {string} */ (stage.argv[0]);
      const showable = fds[2] !== 'null' && fds[2] !== 'pipe';
      const failed = (/** @type {Error} */ err) => {
        const code = /** @type {NodeJS.ErrnoException} */ (err).code;
        if (showable) say(`${word}: ${code === 'ENOENT' ? 'command not found' : err.message}\n`);
        finished(i, code === 'ENOENT' ? 127 : 126);
      };
      const prep = /** @type {Prepared} */ (prepared[i]);
      /** @type {import('node:child_process').ChildProcess | null} */
      let child = null;
      if ('error' in prep) {
        if (showable) say(`${prep.error}\n`);
        finished(i, prep.status);
      } else {
        try {
          child = spawn(prep.file, stage.argv.slice(1), {
            argv0: word,
            env: prep.env,
            stdio: [i === 0 ? 'ignore' : 'pipe', target(fds[1]), target(fds[2])],
            windowsHide: true,
          });
        } catch (err) {
          failed(/** @type {Error} */ (err));
        }
      }
      nextStdin?.destroy();
      nextStdin = null;
      if (!child) continue;
      if (child.pid === undefined) child.stdin?.destroy();
      else nextStdin = child.stdin;
      child.stdin?.on('error', () => undefined);
      child.on('error', failed);
      child.on('exit', (code, signal) => finished(i, statusOf(code, signal)));
    }
    nextStdin?.destroy();
  });
}

async function main() {
  const input = JSON.parse(fs.readFileSync(3, 'utf8'));
  fs.closeSync(3);
  // The runtime needed ELECTRON_RUN_AS_NODE to start this script; the programs get the original.
  if (input.electronRunAsNode === null) delete process.env.ELECTRON_RUN_AS_NODE;
  else process.env.ELECTRON_RUN_AS_NODE = input.electronRunAsNode;
  /** @type {Step[]} */
  const steps = input.steps;
  /** @type {string} */
  const workspaceRoot = input.workspaceRoot;
  let status = 0;
  for (const [i, step] of steps.entries()) {
    if (i > 0 && step.op === '&&' && status !== 0) continue;
    if (i > 0 && step.op === '||' && status === 0) continue;
    // Each step's programs are prepared when it starts: a git reads its configuration as the steps before left it.
    const prepared = await Promise.all(step.pipeline.map((stage) => prepare(stage, workspaceRoot)));
    status = await runPipeline(step.pipeline, prepared);
  }
  process.exit(status);
}

main().catch((err) => {
  say(`agent-waypoints argv runner: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(126);
});
