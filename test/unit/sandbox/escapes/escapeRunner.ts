// Runs the escape corpus once, as whoever runs this process, through the real run_command in the
// real sandbox, against a fresh world (world.ts), and prints one JSON line of verdicts. A process
// of its own so that the home, the environment and the user are the corpus's, not the test
// runner's: escapes.int.test.ts starts it as the current user and, as root, as `nobody` too.
import fs from 'node:fs';
import path from 'node:path';
import { createCodingRegistry } from '../../../../src/runner/tools';
import { COMMAND_POLICY, type SandboxProfile } from '../../../../src/runner/sandbox';
import { pidsCgroupBase } from '../../../../src/runner/sandbox/host';
import { EFFECT_ENV } from '../../../../src/runner/tools/leftovers';
import { toolCtx } from '../../runner/helpers';
import { CORPUS, type Attempt } from './corpus';
import { API_KEY, changedFiles, makeWorld, type World } from './world';

export interface Verdict {
  id: string;
  /** What got out: files changed outside, requests that arrived, processes left, … Empty: contained. */
  escapes: string[];
  /** The output shows the refusal (`seen`) and nothing it must not (`notSeen`). */
  reported: boolean;
  output: string;
}

/** Paths outside the world an attempt aims at. */
const STRAY = ['/tmp/pwned', '/var/tmp/aw-planted', '/dev/shm/aw-planted', '/usr/local/bin/git', '/etc/cron.d/evil'];
const LEFTOVER_TOKENS = ['sleep\u00001001', 'sleep\u00001002', 'sleep\u00001003', 'sleep\u00001004'];

function readProc(pid: string, file: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return '';
  }
}

/** Live processes the attempt started (its marker in their environment, or a corpus sleep). */
function leftovers(key: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    const stat = readProc(pid, 'stat');
    if (stat === '' || /^\d+ \(.*\) Z/.test(stat)) continue;
    const cmd = readProc(pid, 'cmdline');
    if (
      readProc(pid, 'environ').includes(`${EFFECT_ENV}=${key}\u0000`) ||
      LEFTOVER_TOKENS.some((t) => cmd.startsWith(t))
    )
      found.push(`${pid} ${cmd.split('\u0000').join(' ').trim()}`);
  }
  return found;
}

async function settled(key: string): Promise<string[]> {
  for (const end = Date.now() + 10_000; ;) {
    const left = leftovers(key);
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function attempt(w: World, a: Attempt, n: number, profile: SandboxProfile): Promise<Verdict> {
  // Root is not bound by RLIMIT_NPROC: without a pids cgroup the fork bomb would take the machine, not
  // the sandbox. It is not run, and counts as an escape: the sandbox does not hold it here.
  if (a.id === 'fork bomb' && process.getuid?.() === 0 && !pidsCgroupBase())
    return { id: a.id, escapes: ['no pids cgroup to bound processes as root: not run'], reported: false, output: '' };
  const strayBefore = new Set(STRAY.filter((p) => fs.existsSync(p)));
  const hits = { ...w.hits };
  const key = `corpus/${n}`;
  const ctx = toolCtx(w.ws, {
    idempotencyKey: key,
    storageDir: w.storage,
    sandbox: { ...profile, allowedDomains: a.allowedDomains ?? [] },
  });
  const args = { command: a.command(w), timeout_ms: a.timeoutMs ?? 15_000 };
  const call = {
    id: `call_${n}`,
    type: 'function' as const,
    function: { name: 'run_command', arguments: JSON.stringify(args) },
  };
  const r = await createCodingRegistry().execute(call, ctx);
  const escapes = changedFiles(w).map((f) => `changed ${f}`);
  escapes.push(...fs.readdirSync(w.hostTmp).map((f) => `wrote the host /tmp: ${f}`));
  escapes.push(...STRAY.filter((p) => !strayBefore.has(p) && fs.existsSync(p)).map((p) => `wrote ${p}`));
  if (w.hits.http > hits.http) escapes.push('reached the HTTP server on 127.0.0.1');
  if (w.hits.socket > hits.socket) escapes.push('reached the unix socket');
  if (w.victim.exitCode !== null || w.victim.signalCode !== null) escapes.push('killed a host process');
  escapes.push(...(await settled(key)).map((p) => `outlived the command: ${p}`));
  const reported = a.seen.test(r.output) && !(a.notSeen?.test(r.output) ?? false);
  return { id: a.id, escapes, reported, output: r.output.slice(0, 3000) };
}

async function main(): Promise<void> {
  const root = process.getuid?.() === 0;
  const w = await makeWorld();
  // The home, the agent socket and an API key are the world's: what a sandboxed command must not reach.
  Object.assign(process.env, {
    HOME: w.home,
    PATH: '/usr/local/bin:/usr/bin:/bin',
    SSH_AUTH_SOCK: w.socketPath,
    OPENAI_API_KEY: API_KEY,
  });
  const profile: SandboxProfile = {
    ...COMMAND_POLICY,
    workspaceRoot: w.ws,
    storageDir: w.storage,
    // Lower than the defaults so the fork bomb and the allocation end quickly on a shared machine.
    limits: { processes: 256, memoryBytes: 2 * 1024 ** 3, tmpBytes: 64 * 1024 ** 2 },
  };
  const verdicts: Verdict[] = [];
  try {
    const only = process.argv[2] ? new RegExp(process.argv[2]) : null;
    const attempts = CORPUS.filter((a) => (root || !a.rootOnly) && (!only || only.test(a.id)));
    for (const [n, a] of attempts.entries()) verdicts.push(await attempt(w, a, n, profile));
  } finally {
    await w.close();
  }
  process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), verdicts })}\n`);
}

if (require.main === module || process.argv[1]?.endsWith(path.basename(__filename)))
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
