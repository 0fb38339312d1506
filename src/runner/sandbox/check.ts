// *Check sandbox*: what this machine has for the sandbox, what is missing and how to install it.
// The only test that counts is running a command: the probe starts `true` in a real sandbox (and
// once more with network, which starts the in-sandbox helper), so a kernel or AppArmor that
// refuses user namespaces, a setuid bubblewrap that refuses an option, or a missing program shows
// here with bubblewrap's own words instead of at the first command.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errorMessage } from '../../common/errors';
import { hostArch } from './bpf';
import { pidsCgroupBase, systemProgram } from './host';
import { spawnSandboxed, unavailable } from './launch';
import { COMMAND_POLICY } from './profile';

export interface SandboxCheck {
  /** Commands can run sandboxed here. */
  available: boolean;
  platform: NodeJS.Platform;
  arch: string;
  kernel: string;
  bwrap: { path: string | null; version: string | null; setuid: boolean };
  prlimit: string | null;
  /** The network helper's interpreter (netHelper.pl). */
  perl: string | null;
  /** How the number of processes is bounded: RLIMIT_NPROC (not for root), a pids cgroup, or not at all. */
  processLimit: 'rlimit' | 'cgroup' | 'none';
  /** The probes: a command without and with network. */
  probe: { ok: boolean; ms: number; error: string | null } | null;
  networkProbe: { ok: boolean; ms: number; error: string | null } | null;
  /** Each a sentence: what is missing or limited, and what to do. */
  problems: string[];
  /** The command that installs what is missing, or null. */
  install: string | null;
}

export async function checkSandbox(): Promise<SandboxCheck> {
  const bwrapPath = systemProgram('bwrap');
  const prlimit = systemProgram('prlimit');
  const perl = systemProgram('perl');
  const root = process.getuid?.() === 0;
  const c: SandboxCheck = {
    available: false,
    platform: process.platform,
    arch: process.arch,
    kernel: `${os.type()} ${os.release()}`,
    bwrap: { path: bwrapPath, version: bwrapPath ? await versionOf(bwrapPath) : null, setuid: setuid(bwrapPath) },
    prlimit,
    perl,
    processLimit: !root ? 'rlimit' : pidsCgroupBase() ? 'cgroup' : 'none',
    probe: null,
    networkProbe: null,
    problems: [],
    install: null,
  };
  const missing = [
    ...(bwrapPath ? [] : ['bubblewrap']),
    ...(prlimit ? [] : ['util-linux']),
    ...(perl ? [] : ['perl-base']),
  ];
  if (process.platform === 'linux' && missing.length > 0)
    c.install = `${root ? '' : 'sudo '}apt-get install -y ${missing.join(' ')}`;
  const why = unavailable();
  if (why) {
    c.problems.push(`${why[0]!.toUpperCase()}${why.slice(1)}.`);
    return c;
  }
  c.probe = await probe([]);
  if (!c.probe.ok) c.problems.push(explain(c.probe.error ?? ''));
  else {
    c.networkProbe = await probe(['localhost.invalid']);
    if (!c.networkProbe.ok) c.problems.push(`With network the sandbox does not start: ${c.networkProbe.error}`);
  }
  if (c.bwrap.setuid)
    c.problems.push(
      "bubblewrap is setuid root here: the sandbox works, but prefer the distribution's non-setuid package.",
    );
  if (c.processLimit === 'none')
    c.problems.push(
      "Running as root without a writable pids cgroup: a command's number of processes is not bounded (RLIMIT_NPROC does not bind root).",
    );
  c.available = c.probe.ok;
  return c;
}

async function probe(allowedDomains: string[]): Promise<{ ok: boolean; ms: number; error: string | null }> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-sandbox-check-'));
  const t0 = performance.now();
  try {
    const s = await spawnSandboxed(
      { ...COMMAND_POLICY, allowedDomains, workspaceRoot: ws },
      { argv: [systemProgram('true') ?? '/bin/true'], cwd: ws, stdin: 'ignore' },
    );
    let stderr = '';
    s.child.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => {
      s.child.on('error', () => resolve(null));
      s.child.on('close', (n) => resolve(n));
    });
    await s.finish(stderr);
    const ms = Math.round(performance.now() - t0);
    return { ok: code === 0, ms, error: code === 0 ? null : stderr.trim().slice(0, 500) || `exit code ${code}` };
  } catch (e) {
    return { ok: false, ms: Math.round(performance.now() - t0), error: errorMessage(e) };
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

/** bubblewrap's refusal, with what to change. */
function explain(error: string): string {
  if (/uid map|namespace|Operation not permitted|Permission denied/i.test(error)) {
    const apparmor = readSysctl('kernel/apparmor_restrict_unprivileged_userns') === '1';
    const max = readSysctl('user/max_user_namespaces');
    const hint = apparmor
      ? 'AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): allow bwrap with an AppArmor profile, or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`'
      : max === '0'
        ? 'user namespaces are disabled: `sudo sysctl user.max_user_namespaces=15000`'
        : readSysctl('kernel/unprivileged_userns_clone') === '0'
          ? 'unprivileged user namespaces are disabled: `sudo sysctl kernel.unprivileged_userns_clone=1`'
          : 'user namespaces are refused here (a container without them?)';
    return `The sandbox cannot start: ${error}. ${hint}.`;
  }
  return `The sandbox cannot start: ${error}`;
}

function readSysctl(name: string): string | null {
  try {
    return fs.readFileSync(`/proc/sys/${name}`, 'utf8').trim();
  } catch {
    return null;
  }
}

function setuid(p: string | null): boolean {
  try {
    return p !== null && (fs.statSync(p).mode & 0o4000) !== 0;
  } catch {
    return false;
  }
}

function versionOf(p: string): Promise<string | null> {
  return new Promise((resolve) =>
    execFile(p, ['--version'], { timeout: 5000 }, (err, out) => resolve(err ? null : out.trim() || null)),
  );
}

/** The check as lines for the user. */
export function describeCheck(c: SandboxCheck): string {
  const lines = [
    c.available
      ? `Sandbox: available (${c.probe?.ms ?? '?'} ms to start a command).`
      : 'Sandbox: not available — commands ask.',
    `OS: ${c.kernel} (${c.platform}, ${c.arch}${hostArch(c.arch) ? '' : ', no seccomp filter for this architecture'})`,
    `bubblewrap: ${c.bwrap.path ? `${c.bwrap.version ?? 'unknown version'} at ${c.bwrap.path}${c.bwrap.setuid ? ' (setuid)' : ''}` : 'missing'}`,
    `prlimit: ${c.prlimit ?? 'missing'}`,
    `perl (the network helper): ${c.perl ?? 'missing'}`,
    `Process limit: ${{ rlimit: 'RLIMIT_NPROC', cgroup: 'a pids cgroup', none: 'none' }[c.processLimit]}`,
    ...c.problems.map((p) => `• ${p}`),
  ];
  if (c.install) lines.push(`Install: ${c.install}`);
  return lines.join('\n');
}
