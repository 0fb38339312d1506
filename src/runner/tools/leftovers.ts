// Commands that outlive their window. run_command starts its command in a process group of its own
// (so cancel can kill all of it), which also means a SIGKILL of the extension host leaves it
// running. On resume such a call has an intent and no result: asking "may already have run?" while
// it is still working invites the user to start it a second time. So the command carries a marker
// in its environment (inherited by everything it starts), its pid is recorded with the intent, and
// resume first looks for it: found alive → wait (or kill), then ask. A pid alone is never trusted:
// pids are reused, so a process counts only when its marker matches (Linux) or it started when the
// command did; kill checks each process's start time again right before each signal. vscode-free.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import type { Effect } from '../../store/api/schema';

/** The environment variable run_command sets to the call's idempotency key. */
export const EFFECT_ENV = 'AGENT_WAYPOINTS_EFFECT';

export interface Leftover {
  toolCallId: string;
  /** Live processes of the command (on Linux all of them; elsewhere the recorded group leader). */
  pids: number[];
  /** When each of them started (ms since the epoch), as found: a kill signals only a process that still has it. */
  started: Record<number, number>;
}

/** How far a recorded start time and the process's may be apart (the clock reading after spawn, the OS's rounding). */
const START_TOLERANCE_MS = 5_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux: every live process whose environment carries `EFFECT_ENV=<key>`, by key. Elsewhere: null. */
async function scanProc(keys: ReadonlySet<string>): Promise<Map<string, number[]> | null> {
  if (process.platform !== 'linux') return null;
  let names: string[];
  try {
    names = await fs.readdir('/proc');
  } catch {
    return null;
  }
  const found = new Map<string, number[]>();
  const prefix = `${EFFECT_ENV}=`;
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const env = await fs.readFile(`/proc/${n}/environ`, 'latin1').catch(() => '');
    const entry = env.split('\0').find((e) => e.startsWith(prefix));
    const key = entry?.slice(prefix.length);
    if (key && keys.has(key)) found.set(key, [...(found.get(key) ?? []), Number(n)]);
  }
  return found;
}

/**
 * When process `pid` started (ms since the epoch), or null when it is gone or this platform cannot
 * say. Linux: /proc (exact to the clock tick, boot time to the second); elsewhere `ps -o etime=`.
 */
export async function processStartMs(pid: number): Promise<number | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'latin1').catch(() => null);
  if (stat !== null) {
    // Field 22 (starttime, clock ticks since boot) follows the command name, which may hold spaces or ')'.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const btime = Number(/^btime (\d+)$/m.exec(await fs.readFile('/proc/stat', 'latin1').catch(() => ''))?.[1]);
    return Number.isFinite(ticks) && btime > 0 ? btime * 1000 + ticks * 10 : null; // USER_HZ is 100 on Linux
  }
  if (process.platform === 'win32' || process.platform === 'linux') return null;
  const elapsed = await new Promise<string | null>((resolve) =>
    execFile('ps', ['-o', 'etime=', '-p', String(pid)], { timeout: 5000 }, (err, out) => resolve(err ? null : out)),
  );
  const m = elapsed && /^\s*(?:(?:(\d+)-)?(\d+):)?(\d+):(\d+)\s*$/.exec(elapsed);
  if (!m) return null;
  const [d, h, mi, se] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0)) as [number, number, number, number];
  return Date.now() - (((d * 24 + h) * 60 + mi) * 60 + se) * 1000;
}

async function startedNear(pid: number, expectedMs: number): Promise<number | null> {
  const start = await processStartMs(pid);
  return start !== null && Math.abs(start - expectedMs) <= START_TOLERANCE_MS ? start : null;
}

/**
 * The calls among `effects` (intent, no result) whose command is still running. Linux finds every
 * process of it by its marker, even after its shell exited; elsewhere the recorded pid counts only
 * on this host and only if that process started when the command did (a reused pid is someone else).
 */
export async function findLeftovers(effects: readonly Effect[]): Promise<Leftover[]> {
  const open = effects.filter((e) => e.side_effecting && !e.result);
  if (open.length === 0) return [];
  const byMarker = await scanProc(new Set(open.map((e) => e.idempotency_key)));
  const out: Leftover[] = [];
  for (const e of open) {
    const marked = byMarker?.get(e.idempotency_key);
    if (marked) {
      const started: Record<number, number> = {};
      for (const pid of marked) {
        const start = await processStartMs(pid);
        if (start !== null) started[pid] = start;
      }
      const pids = marked.filter((p) => p in started);
      if (pids.length > 0) out.push({ toolCallId: e.tool_call_id, pids, started });
    } else if (!byMarker && e.process && e.process.hostname === os.hostname()) {
      const { pid, started_ms } = e.process;
      if (!(alive(-pid) || alive(pid))) continue;
      const start = await startedNear(pid, started_ms);
      if (start !== null) out.push({ toolCallId: e.tool_call_id, pids: [pid], started: { [pid]: start } });
    }
  }
  return out;
}

/** Resolves once none of the leftovers is alive any more (polled), or when `signal` aborts. */
export async function waitForLeftovers(effects: readonly Effect[], signal: AbortSignal, pollMs = 250): Promise<void> {
  while (!signal.aborted && (await findLeftovers(effects)).length > 0) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, pollMs);
      function done(): void {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * SIGTERM to each leftover's process group (and the process), SIGKILL after a grace period. Each
 * signal goes only to a process that still started when it did when it was found: a pid reused
 * meanwhile belongs to someone else and is left alone.
 */
export function killLeftovers(leftovers: readonly Leftover[], graceMs = 2000): void {
  const send = async (sig: NodeJS.Signals) => {
    for (const l of leftovers) {
      for (const pid of l.pids) {
        const found = l.started[pid];
        if (found === undefined || (await startedNear(pid, found)) === null) continue;
        for (const target of [-pid, pid]) {
          try {
            process.kill(target, sig);
          } catch {
            // gone already
          }
        }
      }
    }
  };
  void send('SIGTERM').then(() => setTimeout(() => void send('SIGKILL'), graceMs).unref());
}
