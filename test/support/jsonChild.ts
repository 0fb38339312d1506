// A test's child process that reports as JSON lines on stdout (the crash tests' children): its events
// as they come, and all of them once its output has closed — not at its exit, which can come before
// the last lines are read. An `{"event":"error"}` line fails the call with the child's stderr.
import { spawn } from 'node:child_process';

export interface JsonChildResult {
  events: Record<string, unknown>[];
  signal: NodeJS.Signals | null;
  code: number | null;
}

/** Runs `node <args>` with `env` added until its output closes; `onEvent` sees each event as it is printed. */
export function runJsonChild(
  args: string[],
  env: Record<string, string>,
  onEvent?: (e: Record<string, unknown>) => void,
): Promise<JsonChildResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const events: Record<string, unknown>[] = [];
    let partial = '';
    let err = '';
    const take = (line: string) => {
      if (!line) return;
      const e = JSON.parse(line) as Record<string, unknown>;
      events.push(e);
      onEvent?.(e);
    };
    p.stdout.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      lines.forEach(take);
    });
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code, signal) => {
      take(partial);
      const failed = events.find((e) => e.event === 'error');
      if (failed) reject(new Error(`child failed: ${String(failed.message)}\n${err}`));
      else resolve({ events, signal, code });
    });
  });
}
