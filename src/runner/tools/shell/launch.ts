// How run_command starts a command line. A line the user approved runs through the shell exactly
// as it was shown to them. A line the policy let through runs from the words the grammar read —
// the same reading the policy judged — without a shell (argvRunner.cjs), so no shell can read it
// differently (dash and bash disagree on `$'…'`, a comment can hide a line, …). A line the grammar
// does not show completely only gets here when commands are on `auto`; it runs through the shell.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { spawnSandboxed, type SandboxedProcess, type SandboxProfile } from '../../sandbox';
import { loadShellGrammar } from './grammar';
import type { Plan } from './plan';
import { readPlan } from './reading';

export type Launch = { kind: 'shell'; command: string } | { kind: 'argv'; plan: Plan };

/** Beside the bundle (dist/, where the build copies it) or, running from source, beside this file. */
const ARGV_RUNNER = path.join(__dirname, 'argvRunner.cjs');

export async function chooseLaunch(
  command: string,
  approvedBy: 'policy' | 'user' | undefined,
  platform: NodeJS.Platform = process.platform,
): Promise<Launch> {
  if (approvedBy === 'user' || platform === 'win32') return { kind: 'shell', command };
  await loadShellGrammar();
  const reading = readPlan(command);
  return reading && 'plan' in reading ? { kind: 'argv', plan: reading.plan } : { kind: 'shell', command };
}

export interface LaunchOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The argv runner looks programs up outside it (programs.cjs). */
  workspaceRoot: string;
}

/** Starts the launch as the leader of a new process group (POSIX), stdin closed, stdout/stderr piped. */
export function startLaunch(launch: Launch, opts: LaunchOptions): ChildProcess {
  const isWin = process.platform === 'win32';
  if (launch.kind === 'shell') {
    return spawn(launch.command, {
      cwd: opts.cwd,
      env: opts.env,
      shell: true,
      detached: !isWin,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  }
  assertArgvRunner();
  // process.execPath is Electron in the desktop extension host: ELECTRON_RUN_AS_NODE makes it Node.
  const child = spawn(process.execPath, [ARGV_RUNNER], {
    cwd: opts.cwd,
    env: { ...opts.env, ELECTRON_RUN_AS_NODE: '1' },
    detached: !isWin,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  sendPlan(child, launch.plan, opts);
  return child;
}

/**
 * The same launch inside the sandbox (runner/sandbox): the shell or the argv runner is what
 * bubblewrap starts, with the sandbox's own minimal environment plus `opts.env`'s variables (the
 * caller passes only what it adds, never the host's whole environment).
 */
export async function startSandboxedLaunch(
  launch: Launch,
  opts: LaunchOptions,
  profile: SandboxProfile,
): Promise<SandboxedProcess> {
  const env = Object.fromEntries(Object.entries(opts.env).filter((e): e is [string, string] => e[1] !== undefined));
  if (launch.kind === 'shell')
    return spawnSandboxed(profile, { argv: ['/bin/sh', '-c', launch.command], cwd: opts.cwd, env, stdin: 'ignore' });
  assertArgvRunner();
  const s = await spawnSandboxed(profile, {
    argv: [process.execPath, ARGV_RUNNER],
    cwd: opts.cwd,
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    stdin: 'ignore',
    extraPipes: 1,
    ownFolders: [path.dirname(ARGV_RUNNER)],
  });
  sendPlan(s.child, launch.plan, opts);
  return s;
}

function assertArgvRunner(): void {
  if (!fs.existsSync(ARGV_RUNNER)) throw new Error(`the argv runner is missing (${ARGV_RUNNER})`);
}

/** The plan goes to the argv runner on file descriptor 3. */
function sendPlan(child: ChildProcess, plan: Plan, opts: LaunchOptions): void {
  const input = child.stdio[3] as Writable | null;
  input?.on('error', () => undefined);
  input?.end(
    JSON.stringify({
      steps: plan,
      electronRunAsNode: opts.env.ELECTRON_RUN_AS_NODE ?? null,
      workspaceRoot: opts.workspaceRoot,
    }),
  );
}
