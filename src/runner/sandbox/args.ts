// The bubblewrap command line for one sandboxed command, and the environment it starts with —
// pure functions of the profile, the workspace's layout (layout.ts) and what the host has
// (host.ts), so the unit tests read exactly what will run. Mounts are applied in order, each over
// the ones before: the file system read-only; fresh /dev, /proc and /tmp; the workspace; what
// keeps its protections in place; the read-only paths; last, everything hidden.
import path from 'node:path';
import { baseEnv } from '../mcp/launch';
import type { Entry, EntryKind, WorkspaceLayout } from './layout';
import { HOME_SECRETS, PROC_READ_ONLY, ROOT_SECRETS, SECRET_ENV_PATHS, type SandboxProfile } from './profile';

/** What the host provides that the arguments depend on. */
export interface HostView {
  home: string;
  /** Running as uid 0 (a dev container, Remote-SSH as root). */
  root: boolean;
  /** Other users' home folders (root can read them). */
  otherHomes: readonly string[];
  env: NodeJS.ProcessEnv;
  /** What exists among the candidates to hide (secretCandidates): a mask needs something to cover. */
  kinds: ReadonlyMap<string, EntryKind>;
  /** An empty folder and an empty file, read-only: what a hidden path shows. */
  empty: { dir: string; file: string };
  prlimit: string;
  /**
   * The option of /bin/sh's `ulimit` that sets RLIMIT_NPROC (dash `-p`, bash `-u`), or null for
   * another shell: then prlimit sets the limits.
   */
  shellProcessesOption: '-p' | '-u' | null;
}

export interface CommandLine {
  /** The program and its arguments, as run inside. */
  argv: readonly string[];
  cwd: string;
  /** The file descriptor bubblewrap reads the seccomp program from. */
  seccompFd: number;
  /**
   * A pipe the sandbox's first process writes `started` to once bubblewrap has set everything up,
   * and closes before the command runs: the command cannot fake it, nor a setup failure. Absent:
   * nobody listens (a long-lived server whose failure shows as its exit).
   */
  statusFd?: number;
  /**
   * With network: the in-sandbox helper (netHelper.pl) is the first process and does the status
   * shell's and prlimit's work too, so no other program starts before the command. `calls` are
   * this machine's numbers of prlimit64, socket, bind, listen and sendmsg.
   */
  network?: { perl: string; helper: string; calls: readonly number[] };
}

/** The port the in-sandbox proxy listener takes (the network namespace is the command's own). */
export const PROXY_PORT = 3128;
export const PROXY_URL = `http://127.0.0.1:${PROXY_PORT}`;

/** Absolute paths to hide when they exist: home credentials, files named by variables, the storage folder. */
export function secretCandidates(
  profile: Pick<SandboxProfile, 'storageDir' | 'hidden'>,
  host: Pick<HostView, 'home' | 'root' | 'otherHomes' | 'env'>,
): string[] {
  const homes = [host.home, ...(host.root ? host.otherHomes : [])];
  const out = homes.flatMap((h) => HOME_SECRETS.map((s) => path.join(h, s)));
  for (const name of SECRET_ENV_PATHS) {
    const v = host.env[name];
    if (v && path.isAbsolute(v)) out.push(v);
  }
  if (host.root) out.push(...ROOT_SECRETS);
  if (profile.storageDir) out.push(profile.storageDir);
  out.push(...(profile.hidden ?? []));
  return [...new Set(out.map((p) => path.resolve(p)))];
}

export function bwrapArgs(
  profile: SandboxProfile,
  layout: WorkspaceLayout,
  host: HostView,
  cmd: CommandLine,
): string[] {
  const ws = profile.workspaceRoot;
  const abs = (rel: string): string => (rel === '' ? ws : path.join(ws, rel));
  const mask = (p: string, kind: EntryKind): string[] => [
    '--ro-bind',
    kind === 'dir' ? host.empty.dir : host.empty.file,
    p,
  ];
  const size = String(profile.limits.tmpBytes);
  const a: string[] = ['--ro-bind', '/', '/'];
  // A fresh /dev, read-only but for its bounded /dev/shm: nothing written there outlives the command or fills memory.
  a.push('--dev', '/dev', '--size', size, '--tmpfs', '/dev/shm', '--remount-ro', '/dev');
  a.push('--proc', '/proc');
  for (const p of PROC_READ_ONLY) a.push('--ro-bind-try', p, p);
  a.push('--size', size, '--tmpfs', '/tmp');
  for (const p of profile.readable ?? []) a.push('--ro-bind', p, p);
  for (const p of profile.writable ?? []) a.push('--bind', p, p);
  a.push(profile.workspace === 'write' ? '--bind' : '--ro-bind', ws, ws);
  for (const e of layout.pinned) a.push('--bind', abs(e.rel), abs(e.rel));
  for (const rel of layout.frozen) a.push('--ro-bind', abs(rel), abs(rel));
  for (const e of layout.readOnly) a.push('--ro-bind', abs(e.rel), abs(e.rel));
  for (const rel of layout.placeholders) a.push(...mask(abs(rel), 'dir'));
  for (const e of layout.hidden) a.push(...mask(abs(e.rel), e.kind));
  for (const t of layout.hiddenTargets) a.push(...mask(t.abs, t.kind));
  for (const p of secretCandidates(profile, host)) {
    const kind = host.kinds.get(p);
    if (kind) a.push(...mask(p, kind));
  }
  a.push('--chdir', cmd.cwd);
  a.push('--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try');
  a.push('--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL');
  a.push('--seccomp', String(cmd.seccompFd));
  a.push('--', ...firstProcess(profile.limits, host, cmd), ...cmd.argv);
  return a;
}

/**
 * What bubblewrap starts before the command: it sets the limits and, when asked, reports `started`
 * once everything before the command has worked. The status shell sets the limits itself when
 * /bin/sh's `ulimit` is known here, saving prlimit's start.
 */
function firstProcess(l: SandboxProfile['limits'], host: HostView, cmd: CommandLine): string[] {
  const fd = cmd.statusFd;
  if (cmd.network) {
    if (fd === undefined) throw new Error('the network helper needs a status pipe');
    const { perl, helper, calls } = cmd.network;
    return [perl, helper, ...[fd, l.processes, l.memoryBytes, ...calls, PROXY_PORT].map(String)];
  }
  const report = `printf started >&${fd} && exec ${fd}>&- && exec "$@"`;
  const option = host.shellProcessesOption;
  if (fd !== undefined && option) {
    // One limit per `ulimit`: dash refuses two options in one.
    const limits = `ulimit ${option} ${l.processes} && ulimit -d ${Math.floor(l.memoryBytes / 1024)}`;
    return ['/bin/sh', '-c', `${limits} && ${report}`, 'sandbox'];
  }
  const prlimit = [host.prlimit, `--nproc=${l.processes}:${l.processes}`, `--data=${l.memoryBytes}:${l.memoryBytes}`];
  return [...(fd === undefined ? [] : ['/bin/sh', '-c', report, 'sandbox']), ...prlimit, '--'];
}

/** Toolchains' own folders: naming them is no secret, and builds fail without them. */
const TOOLCHAIN_ENV = [
  'JAVA_HOME',
  'GOPATH',
  'GOROOT',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'NVM_DIR',
  'NVM_BIN',
  'PYENV_ROOT',
  'VIRTUAL_ENV',
  'CONDA_PREFIX',
  'PNPM_HOME',
  'DENO_DIR',
  'BUN_INSTALL',
  'GEM_HOME',
  'GEM_PATH',
  'ELECTRON_RUN_AS_NODE',
];

/** A name that may carry a secret is never passed in, even when asked for by name. */
export const SECRET_NAME = /key|token|secret|passw|credential|auth|session|cookie/i;

/**
 * The environment bubblewrap starts with — and so everything in the sandbox, its init included
 * (/proc/1/environ): the base names every program needs, toolchain folders, the names the
 * policy passes, the caller's own variables, then caches in the private /tmp (the home is
 * read-only) and the proxy when there is network. Never an API key the host happens to have.
 */
export function sandboxEnv(
  host: NodeJS.ProcessEnv,
  profile: Pick<SandboxProfile, 'envNames' | 'allowedDomains' | 'reportDomains'>,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env = baseEnv(host, 'linux');
  for (const name of [...TOOLCHAIN_ENV, ...(profile.envNames ?? [])]) {
    const v = host[name];
    if (v !== undefined && !SECRET_NAME.test(name)) env[name] = v;
  }
  // The sandbox's own places come last: the caller's variables cannot point them at the host's.
  const own: Record<string, string> = { TMPDIR: '/tmp', XDG_CACHE_HOME: '/tmp/.cache', npm_config_cache: '/tmp/.npm' };
  if (profile.allowedDomains.length > 0 || profile.reportDomains)
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) own[name] = PROXY_URL;
  return { ...env, ...extra, ...own };
}

export type { Entry };
