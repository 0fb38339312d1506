// Starts one command in the sandbox: maps the workspace (layout.ts), makes the root placeholders,
// builds bubblewrap's arguments (args.ts) and environment, hands it the seccomp program on a pipe,
// and — when the policy allows domains — the proxy (proxy.ts) the command's connections reach.
// bubblewrap leads a process group of its own, so the caller's timeout and cancel kill it as
// they kill an unsandboxed command; `--die-with-parent` and the pid namespace then end everything
// the command started. Nothing here falls back to running unsandboxed: a sandbox that cannot
// start is an error the caller reports.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import fs, { realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Server } from 'node:net';
import { bwrapArgs, sandboxEnv, type HostView } from './args';
import { encodeFilter, hostArch, unixSocketFilter, type Arch } from './bpf';
import { hostView, processGroupLimit, seccompFile, systemProgram } from './host';
import { workspaceLayout, type WorkspaceLayout } from './layout';
import type { SandboxProfile } from './profile';
import { SandboxProxy } from './proxy';
import { sandboxReport, type SandboxReport } from './report';

export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

export interface SandboxCommand {
  /** The program and its arguments inside the sandbox. */
  argv: readonly string[];
  cwd: string;
  /** Variables the caller adds to the sandbox's own minimal environment. */
  env?: Readonly<Record<string, string>>;
  stdin: 'ignore' | 'pipe';
  /** Pipes the caller writes to, passed to the command as fds 3, 4, … (the argv runner's plan). */
  extraPipes?: number;
  /** Folders of the caller's own programs the command starts (the argv runner): kept readable inside. */
  ownFolders?: readonly string[];
}

export interface SandboxedProcess {
  /** bubblewrap: the leader of the command's process group. stdio as asked, then the extra pipes. */
  child: ChildProcess;
  /** Once the process is gone: removes what was set up for it and says what the sandbox refused. */
  finish(stderr: string): Promise<SandboxReport>;
}

let filter: Buffer | null = null;
const NET_HELPER = path.join(__dirname, 'netHelper.pl');
/** prlimit64, socket, bind, listen and sendmsg's numbers: the network helper makes these calls directly. */
const NET_CALLS: Record<Arch, readonly number[]> = {
  x86_64: [302, 41, 49, 50, 46],
  aarch64: [261, 198, 200, 201, 211],
  i386: [340, 359, 361, 363, 370],
  arm: [369, 281, 282, 284, 296],
};

/** Why this machine cannot sandbox now, or null. Cheap: no process is started (check.ts probes). */
export function unavailable(): string | null {
  if (process.platform !== 'linux') return `no sandbox on this OS (${process.platform}): commands ask`;
  if (!hostArch()) return `no sandbox on this architecture (${process.arch}): commands ask`;
  if (!systemProgram('bwrap')) return 'bubblewrap is not installed (apt-get install -y bubblewrap)';
  if (!systemProgram('prlimit')) return 'prlimit is not installed (apt-get install -y util-linux)';
  if (!systemProgram('perl')) return 'perl is not installed (apt-get install -y perl-base)';
  return null;
}

/** What every launch needs first: the real workspace, its layout, its placeholders made, the host's view. */
interface Prepared {
  p: SandboxProfile;
  layout: WorkspaceLayout;
  made: string[];
  host: HostView;
}

async function prepare(profile: SandboxProfile, ownFolders: readonly string[] = []): Promise<Prepared> {
  const why = unavailable();
  if (why) throw new SandboxUnavailableError(why);
  const ws = realpathSync(profile.workspaceRoot);
  const home = os.homedir();
  if (ws === '/' || home === ws || home.startsWith(ws + '/'))
    throw new SandboxUnavailableError(`the workspace ${ws} holds the home folder: its dotfiles would be writable`);
  const p: SandboxProfile = {
    ...profile,
    workspaceRoot: ws,
    readable: [...(profile.readable ?? []), ...ownUnderTmp(ownFolders)],
  };
  const writable = p.workspace === 'write';
  const layout = await workspaceLayout(ws, { readOnly: p.readOnly, secrets: p.fileRules, writable });
  const made = makePlaceholders(ws, layout);
  return { p, layout, made, host: hostView(p, systemProgram('prlimit')!) };
}

export async function spawnSandboxed(profile: SandboxProfile, cmd: SandboxCommand): Promise<SandboxedProcess> {
  const { p, layout, made, host } = await prepare(profile, cmd.ownFolders);
  const ws = p.workspaceRoot;
  const network = p.allowedDomains.length > 0 || p.reportDomains === true;
  const extra = cmd.extraPipes ?? 0;
  const seccompFd = 3 + extra;
  const statusFd = seccompFd + 1;
  const helper = { perl: systemProgram('perl')!, helper: NET_HELPER, calls: NET_CALLS[hostArch()!] };
  const args = bwrapArgs(p, layout, host, {
    argv: cmd.argv,
    cwd: cmd.cwd,
    seccompFd,
    statusFd,
    ...(network ? { network: helper } : {}),
  });
  const env = sandboxEnv(process.env, p, cmd.env);
  const stdio: StdioOptions = [cmd.stdin, 'pipe', 'pipe', ...Array<'pipe'>(extra).fill('pipe'), 'pipe', 'pipe'];
  if (network) stdio.push('ipc');
  const cgroup = processGroupLimit(p.limits.processes);
  const bwrap = systemProgram('bwrap')!;
  let child: ChildProcess;
  try {
    // A cgroup must hold bubblewrap before it forks: a shell joins it and becomes bubblewrap.
    child = cgroup
      ? spawn('/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procs, bwrap, ...args], {
          env,
          stdio,
          detached: true,
        })
      : spawn(bwrap, args, { env, stdio, detached: true });
  } catch (e) {
    cgroup?.dispose();
    removePlaceholders(made);
    throw e;
  }
  const seccomp = child.stdio[seccompFd] as Writable | null;
  seccomp?.on('error', () => undefined);
  seccomp?.end((filter ??= encodeFilter(unixSocketFilter())));
  const started = commandStarted(child.stdio[statusFd] as Readable | null);
  const proxy = network ? new SandboxProxy(p.allowedDomains) : null;
  if (proxy) child.once('message', (_m, handle) => handle && proxy.attach(handle as Server));
  let finished: Promise<SandboxReport> | null = null;
  return {
    child,
    finish: (stderr) =>
      (finished ??= (async () => {
        proxy?.close();
        if (child.connected) child.disconnect();
        cgroup?.dispose();
        removePlaceholders(made);
        return sandboxReport(stderr, ws, proxy?.refused ?? [], await started);
      })()),
  };
}

/** A sandboxed program as a plain command line, for a spawner that takes only that (the MCP SDK's). */
export interface SandboxedCommandLine {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Once the program is gone: removes what was set up for it. */
  dispose(): Promise<void>;
}

/**
 * The same sandbox as a command line: a shell joins the pids cgroup when there is one, opens the
 * seccomp program from its file on fd 3 and becomes bubblewrap. No network: the proxy's listener
 * reaches the host over an IPC channel only spawnSandboxed opens.
 */
export async function sandboxedCommandLine(
  profile: SandboxProfile,
  cmd: Pick<SandboxCommand, 'argv' | 'cwd' | 'env'>,
): Promise<SandboxedCommandLine> {
  if (profile.allowedDomains.length > 0)
    throw new SandboxUnavailableError('a sandboxed server gets no network yet: leave its allowed domains empty');
  const { p, layout, made, host } = await prepare(profile, programFolders(cmd.argv));
  const args = bwrapArgs(p, layout, host, { argv: cmd.argv, cwd: cmd.cwd, seccompFd: 3 });
  const cgroup = processGroupLimit(p.limits.processes);
  const script = '[ -z "$1" ] || echo $$ > "$1" || exit 125; exec 3< "$2" || exit 125; shift 2; exec "$@"';
  return {
    command: '/bin/sh',
    args: ['-c', script, 'sandbox', cgroup?.procs ?? '', seccompFile(), systemProgram('bwrap')!, ...args],
    env: sandboxEnv(process.env, p, cmd.env),
    dispose: async () => {
      cgroup?.dispose();
      removePlaceholders(made);
    },
  };
}

/**
 * The folders a server's own files are in, from the files named by absolute paths on its command
 * line (its program and script, not the folders it is given to work on): a script's folder, or for
 * one inside `node_modules` the folder holding that `node_modules` (its dependencies). Bound before
 * the workspace and the masks, so neither is loosened by them.
 */
function programFolders(argv: readonly string[]): string[] {
  return argv
    .filter((a) => path.isAbsolute(a) && isFile(a))
    .map((a) => realpathSync(a))
    .map((a) => {
      const at = a.indexOf(`${path.sep}node_modules${path.sep}`);
      return at > 0 ? a.slice(0, at) : path.dirname(a);
    });
}

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The folders of what the sandbox starts (Node, the helper beside the bundle) that the private /tmp would hide. */
function ownUnderTmp(callers: readonly string[]): string[] {
  const dirs = [path.dirname(NET_HELPER), path.dirname(process.execPath), ...callers];
  return [...new Set(dirs.filter((d) => d === '/tmp' || d.startsWith('/tmp/')))];
}

/**
 * Whether the sandbox got as far as starting the command: its first process says so on the status
 * pipe and closes it (args.ts). Whatever the command prints cannot change the answer.
 */
function commandStarted(status: Readable | null): Promise<boolean> {
  if (!status) return Promise.resolve(false);
  return new Promise((resolve) => {
    let text = '';
    status.on('data', (b: Buffer) => {
      if (text.length < 64) text += b.toString('utf8');
    });
    status.on('close', () => resolve(text === 'started'));
    status.on('error', () => resolve(false));
  });
}

/**
 * Each placeholder is an empty folder made now and removed after the command (its mount point).
 * One that appeared meanwhile is the user's: it stays, read-only for this command like any other.
 * Synchronous, like the layout's reads: a few folders, where a thread-pool round trip each costs
 * more than the call and, on a loaded machine, milliseconds before the command can start.
 */
function makePlaceholders(ws: string, layout: WorkspaceLayout): string[] {
  const made: string[] = [];
  const kept: string[] = [];
  for (const rel of layout.placeholders) {
    try {
      fs.mkdirSync(path.join(ws, rel));
      made.push(path.join(ws, rel));
      kept.push(rel);
    } catch {
      const st = lstatOrNull(path.join(ws, rel));
      if (st?.isSymbolicLink()) layout.frozen.push(path.dirname(rel) === '.' ? '' : path.dirname(rel));
      else if (st) layout.readOnly.push({ rel, kind: st.isDirectory() ? 'dir' : 'file' });
      else {
        removePlaceholders(made);
        throw new SandboxUnavailableError(`could not keep ${rel} from being created in the sandbox`);
      }
    }
  }
  layout.placeholders = kept;
  return made;
}

function removePlaceholders(made: readonly string[]): void {
  // rmdir, never a recursive remove: one that is not empty now holds someone else's files.
  for (const p of made)
    try {
      fs.rmdirSync(p);
    } catch {
      // not empty, or gone: not ours to remove
    }
}

function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}
