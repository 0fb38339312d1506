// What this machine provides to a sandbox: the programs (bubblewrap and prlimit, from the
// system's own folders — never from PATH, which the workspace can influence), the home folder and
// what exists in it to hide, an empty folder and file to hide things with, and — for root, whom
// RLIMIT_NPROC does not bind — a pids cgroup to bound the number of processes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostView } from './args';
import { secretCandidates } from './args';
import { encodeFilter, unixSocketFilter } from './bpf';
import type { EntryKind } from './layout';
import type { SandboxProfile } from './profile';

const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/local/bin', '/usr/sbin', '/sbin'];

/** An executable in the system's folders, or null. */
export function systemProgram(name: string): string | null {
  for (const dir of SYSTEM_BIN) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

let files: { dir: string; file: string; seccomp: string } | null = null;

/**
 * A private folder (made once per process) with an empty read-only folder and file in it, to hide
 * things with, and the seccomp program for launches that can only hand bubblewrap a file.
 */
function privateFiles(): { dir: string; file: string; seccomp: string } {
  if (files && fs.existsSync(files.seccomp)) return files;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-sandbox-'));
  const dir = path.join(base, 'empty-dir');
  const file = path.join(base, 'empty-file');
  const seccomp = path.join(base, 'seccomp.bpf');
  fs.mkdirSync(dir, { mode: 0o555 });
  fs.writeFileSync(file, '', { mode: 0o444 });
  fs.writeFileSync(seccomp, encodeFilter(unixSocketFilter()), { mode: 0o444 });
  fs.chmodSync(base, 0o555);
  process.once('exit', () => {
    try {
      fs.chmodSync(base, 0o700);
      fs.rmSync(base, { recursive: true, force: true });
    } catch {
      // leaves an empty folder in the temp folder
    }
  });
  files = { dir, file, seccomp };
  return files;
}

/** The seccomp program (bpf.ts) as a read-only file. */
export function seccompFile(): string {
  return privateFiles().seccomp;
}

function kindOf(p: string): EntryKind | null {
  try {
    return fs.statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return null; // missing (or a dangling link): nothing to read, and the read-only file system keeps it so
  }
}

function otherHomes(): string[] {
  try {
    return fs
      .readdirSync('/home', { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => path.join('/home', d.name));
  } catch {
    return [];
  }
}

export function hostView(profile: SandboxProfile, prlimit: string, env: NodeJS.ProcessEnv = process.env): HostView {
  const root = process.getuid?.() === 0;
  const base = { home: os.homedir(), root, otherHomes: root ? otherHomes() : [], env };
  const kinds = new Map<string, EntryKind>();
  for (const p of secretCandidates(profile, base)) {
    const k = kindOf(p);
    if (k) kinds.set(p, k);
  }
  const { dir, file } = privateFiles();
  return { ...base, kinds, empty: { dir, file }, prlimit, shellProcessesOption: shellProcessesOption() };
}

let shellOption: '-p' | '-u' | null | undefined;

/** `ulimit`'s option for RLIMIT_NPROC in /bin/sh, from which shell it is (once per process); null: unknown. */
export function shellProcessesOption(): '-p' | '-u' | null {
  if (shellOption !== undefined) return shellOption;
  let shell = '';
  try {
    shell = path.basename(fs.realpathSync('/bin/sh'));
  } catch {
    // no /bin/sh: prlimit then
  }
  shellOption = shell === 'dash' ? '-p' : shell === 'bash' ? '-u' : null;
  return shellOption;
}

/** A pids cgroup (v1) holding the command, when this process may make one. */
export interface ProcessGroupLimit {
  /** The file a process writes its pid to, to join. */
  procs: string;
  dispose(): void;
}

const PIDS_ROOT = '/sys/fs/cgroup/pids';

/** The pids controller's folder this process is in (cgroup v1), if it is writable. */
export function pidsCgroupBase(): string | null {
  try {
    const dir = pidsCgroupDir(fs.readFileSync('/proc/self/cgroup', 'utf8'));
    if (!dir) return null;
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.existsSync(path.join(dir, 'pids.max')) || dir === PIDS_ROOT ? dir : null;
  } catch {
    return null;
  }
}

/** The pids controller's folder named by a `/proc/<pid>/cgroup` text (cgroup v1), or null. */
export function pidsCgroupDir(procCgroup: string): string | null {
  const line = procCgroup.split('\n').find((l) => /^\d+:([^:]*,)?pids(,[^:]*)?:/.test(l));
  if (!line) return null;
  // resolve, not join: at the hierarchy's root the line's path is `/`, and join keeps that slash.
  return path.resolve(PIDS_ROOT, `.${line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1)}`);
}

export function processGroupLimit(max: number): ProcessGroupLimit | null {
  const base = pidsCgroupBase();
  if (!base) return null;
  let dir: string;
  try {
    dir = fs.mkdtempSync(path.join(base, 'aw-sandbox-'));
    fs.writeFileSync(path.join(dir, 'pids.max'), String(max));
  } catch {
    return null;
  }
  return { procs: path.join(dir, 'cgroup.procs'), dispose: () => removeCgroup(dir, 20) };
}

/** Empty once the sandbox's pid namespace is gone; its last processes may take a moment to be reaped. */
function removeCgroup(dir: string, tries: number): void {
  fs.rmdir(dir, (err) => {
    if (err?.code === 'EBUSY' && tries > 1) setTimeout(() => removeCgroup(dir, tries - 1), 50).unref();
  });
}
