// run_command: a command line in the workspace. The command runs in its own process group so a
// timeout or a cancel kills everything it started (npm → node → …), not just its first process.
// Which process leads the group (the shell, or the argv runner for a line the policy let through
// as plain words) is shell/launch.ts's choice; everything else is the same for both. With
// `ctx.sandbox` the same launch runs inside the OS sandbox (runner/sandbox), and what the sandbox
// refused comes back with the output, for the model and as data for the caller's card.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { foreignRepository } from './commandCwd';
import { EFFECT_ENV } from './leftovers';
import { sandboxSummary, type SandboxReport } from '../sandbox';
import { capOutput, sliceBytes } from './output';
import { confinePath } from './paths';
import { chooseLaunch, startLaunch, startSandboxedLaunch, type Launch } from './shell/launch';
import { defineTool, ToolFailure, type ToolContext } from './types';

export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MAX_COMMAND_TIMEOUT_MS = 30 * 60_000;
/** Kept in memory per stream; beyond this only the tail is kept (the blob then holds head + tail). */
const MAX_CAPTURE_BYTES = 8 * 1024 * 1024;
/** After SIGTERM, how long the group gets before SIGKILL. */
const KILL_GRACE_MS = 2000;

export const runCommand = defineTool({
  name: 'run_command',
  category: 'command',
  sideEffecting: true,
  description:
    'Run a shell command in the workspace (non-interactive: stdin is closed). Returns the exit code, stdout and stderr. ' +
    'Killed after timeout_ms. Long output is truncated in the middle.',
  args: z.object({
    command: z.string().min(1).describe('Shell command line, e.g. "npm test"'),
    cwd: z.string().default('.').describe('Working directory relative to the workspace root'),
    timeout_ms: z.number().int().min(1).max(MAX_COMMAND_TIMEOUT_MS).default(DEFAULT_COMMAND_TIMEOUT_MS),
  }),
  files: { kind: 'scan' },
  cwd: (args) => args.cwd,
  async run(args, ctx) {
    const { abs, rel } = await confinePath(ctx.workspaceRoot, args.cwd, ctx);
    const st = await fs.stat(abs).catch(() => null);
    if (!st?.isDirectory()) throw new ToolFailure(`cwd "${rel}" is not a directory in the workspace.`);
    // The folder as it is now, resolved as it will be used: the policy judged it before (commandCwd.ts).
    const foreign = ctx.approvedBy === 'user' ? null : foreignRepository(await fs.realpath(ctx.workspaceRoot), abs);
    if (foreign)
      throw new ToolFailure(
        `Not run: ${foreign}, so git there would use another repository's configuration than the workspace's. A command there runs only with the user's approval.`,
      );
    if (ctx.signal.aborted) throw new ToolFailure('Cancelled before the command started.');
    const launch = await chooseLaunch(args.command, ctx.approvedBy);
    const r = await execute(launch, abs, args.timeout_ms, ctx);
    return format(r, args.timeout_ms, ctx);
  },
});

interface Execution {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Capture;
  stderr: Capture;
  stoppedBy: 'timeout' | 'cancel' | null;
  spawnError: Error | null;
  sandbox: SandboxReport | null;
}

class Capture {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  add(b: Buffer): void {
    this.total += b.length;
    this.chunks.push(b);
    this.kept += b.length;
    while (this.kept > MAX_CAPTURE_BYTES && this.chunks.length > 1) this.kept -= (this.chunks.shift() as Buffer).length;
  }
  text(): string {
    const s = Buffer.concat(this.chunks).toString('utf8');
    return this.total > this.kept ? `[first ${this.total - this.kept} bytes dropped]\n${s}` : s;
  }
}

async function execute(launch: Launch, cwd: string, timeoutMs: number, ctx: ToolContext): Promise<Execution> {
  const r: Execution = {
    code: null,
    signal: null,
    stdout: new Capture(),
    stderr: new Capture(),
    stoppedBy: null,
    spawnError: null,
    sandbox: null,
  };
  // The marker lets a resumed run find this command (and what it started) if the window dies first.
  const marker = { [EFFECT_ENV]: ctx.idempotencyKey };
  const opts = { cwd, workspaceRoot: ctx.workspaceRoot };
  try {
    if (!ctx.sandbox)
      return await watch(startLaunch(launch, { ...opts, env: { ...process.env, ...marker } }), r, timeoutMs, ctx);
    // The sandbox starts from its own minimal environment: only the marker is added to it.
    const profile = { ...ctx.sandbox, workspaceRoot: ctx.workspaceRoot };
    const s = await startSandboxedLaunch(launch, { ...opts, env: marker }, profile);
    await watch(s.child, r, timeoutMs, ctx);
    r.sandbox = await s.finish(r.stderr.text());
  } catch (err) {
    r.spawnError = err as Error;
  }
  return r;
}

/** Collects the command's output until it ends, is stopped by the timeout or the cancel. */
function watch(child: ChildProcess, r: Execution, timeoutMs: number, ctx: ToolContext): Promise<Execution> {
  return new Promise((resolve) => {
    if (child.pid !== undefined) ctx.onSpawn?.(child.pid);
    child.stdout?.on('data', (b: Buffer) => r.stdout.add(b));
    child.stderr?.on('data', (b: Buffer) => r.stderr.add(b));
    let finished = false;
    const done = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // A process that escaped the group (or a background job) can hold our pipes open forever:
    // after a grace period stop waiting for them.
    const stopWaitingLater = (ms: number): void => {
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        done();
      }, ms).unref();
    };
    const stop = (why: 'timeout' | 'cancel'): void => {
      r.stoppedBy ??= why;
      killTree(child);
      stopWaitingLater(KILL_GRACE_MS + 1000);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = (): void => stop('cancel');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) onAbort(); // while the sandbox was being set up
    child.on('error', (e) => {
      r.spawnError = e;
      done();
    });
    child.on('exit', (code, signal) => {
      r.code = code;
      r.signal = signal;
      stopWaitingLater(1000);
    });
    // 'close' waits for the pipes too, so output written just before exit is not lost.
    child.on('close', (code, signal) => {
      r.code = code;
      r.signal = signal;
      done();
    });
  });
}

/** SIGTERM to the whole process group, SIGKILL if it is still there after a grace period. */
function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  if (process.platform === 'win32') {
    spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true }).on('error', () => undefined);
    return;
  }
  const pid = child.pid;
  const kill = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  kill('SIGTERM');
  setTimeout(() => kill('SIGKILL'), KILL_GRACE_MS).unref();
}

async function format(r: Execution, timeoutMs: number, ctx: ToolContext) {
  if (r.spawnError && ctx.sandbox)
    throw new ToolFailure(`Not run: the sandbox could not start the command (${r.spawnError.message}).`);
  if (r.spawnError) throw new ToolFailure(`Could not start the command: ${r.spawnError.message}`);
  // Stopped while the sandbox was still setting up: the command never started (no `started` on the
  // status pipe), which is what the model and a resume must be told — not that the sandbox failed.
  const beforeStart = r.sandbox?.setupError != null && r.stoppedBy !== null;
  if (r.sandbox?.setupError && !beforeStart)
    throw new ToolFailure(`Not run: the sandbox could not start the command (${r.sandbox.setupError}).`);
  const status =
    r.stoppedBy === 'timeout'
      ? beforeStart
        ? `timed out after ${timeoutMs} ms while the sandbox was setting up; the command did not start`
        : `timed out after ${timeoutMs} ms; the process group was killed`
      : r.stoppedBy === 'cancel'
        ? beforeStart
          ? 'cancelled while the sandbox was setting up; the command did not start'
          : 'cancelled; the process group was killed'
        : r.code !== null
          ? `exit code: ${r.code}`
          : `killed by signal ${r.signal}`;
  const blocked = r.sandbox && !beforeStart ? sandboxSummary(r.sandbox) : null;
  // The sandbox's refusals stay on the status line's side of any cut: they are what the model acts on.
  const head = blocked ? `${status}\nsandbox ${blocked}` : status;
  const stdout = r.stdout.text();
  const stderr = r.stderr.text();
  const full = `${head}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
  const capped = await capOutput(full, ctx, 'head_tail');
  // Keep the status line visible whatever the cap cut.
  const output =
    capped.truncated && !capped.text.startsWith(head)
      ? `${head}\n${sliceBytes(capped.text, ctx.outputCap)}`
      : capped.text;
  const out = { output, is_error: r.stoppedBy !== null || r.code !== 0, blob: capped.blob };
  return r.sandbox ? { ...out, sandbox: r.sandbox } : out;
}
