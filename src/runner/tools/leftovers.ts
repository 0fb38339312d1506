// Commands that outlive their window. run_command starts its command in a process group of its own
// (so cancel can kill all of it), which also means a SIGKILL of the extension host leaves it
// running. On resume such a call has an intent and no result: asking "may already have run?" while
// it is still working invites the user to start it a second time. So the command carries a marker
// in its environment (inherited by everything it starts), its pid is recorded with the intent, and
// resume first looks for it: found alive → wait (or kill), then ask. vscode-free.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import type { Effect } from '../../store/api/schema';

/** The environment variable run_command sets to the call's idempotency key. */
export const EFFECT_ENV = 'AGENT_WAYPOINTS_EFFECT';

export interface Leftover {
  toolCallId: string;
  /** Live processes of the command (on Linux all of them; elsewhere the recorded group leader). */
  pids: number[];
}

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
 * The calls among `effects` (intent, no result) whose command is still running. Linux finds every
 * process of it by its marker, even after its shell exited; elsewhere the recorded pid is checked
 * (its process group, on this host).
 */
export async function findLeftovers(effects: readonly Effect[]): Promise<Leftover[]> {
  const open = effects.filter((e) => e.side_effecting && !e.result);
  if (open.length === 0) return [];
  const byMarker = await scanProc(new Set(open.map((e) => e.idempotency_key)));
  const out: Leftover[] = [];
  for (const e of open) {
    const marked = byMarker?.get(e.idempotency_key);
    if (marked) out.push({ toolCallId: e.tool_call_id, pids: marked });
    else if (
      !byMarker &&
      e.process &&
      e.process.hostname === os.hostname() &&
      (alive(-e.process.pid) || alive(e.process.pid))
    ) {
      out.push({ toolCallId: e.tool_call_id, pids: [e.process.pid] });
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

/** SIGTERM to each leftover's process group (and the process), SIGKILL after a grace period. */
export function killLeftovers(leftovers: readonly Leftover[], graceMs = 2000): void {
  const send = (sig: NodeJS.Signals) => {
    for (const l of leftovers) {
      for (const target of l.pids.flatMap((p) => [-p, p])) {
        try {
          process.kill(target, sig);
        } catch {
          // gone already
        }
      }
    }
  };
  send('SIGTERM');
  setTimeout(() => send('SIGKILL'), graceMs).unref();
}
