// What the diagnostics beside the benchmark share (bench:calls, bench:ab): their options, and the
// window of steps they time — the one the bench's step-10 row is taken over.
import fs from 'node:fs';
import { windowAround } from './stats';
import { windowWidth } from './summarize';

/** Steps 6–15: the bench's window around step 10. */
export const { from: FROM, to: TO } = windowAround(10, windowWidth(10), Number.MAX_SAFE_INTEGER);

/** The value after `name` on the command line (undefined: not given). */
export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** `--runs R`: a positive integer, `fallback` when not given. */
export function runsArg(fallback: number): number {
  const runs = Number(argValue('--runs') ?? fallback);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs must be a positive integer, got ${argValue('--runs')}`);
  return runs;
}

/**
 * `--cpu-only`: fdatasync replaced by a turn of the event loop, so what is left is CPU and the page
 * cache. Returns whether it was asked for.
 */
export function cpuOnlyIfAsked(): boolean {
  const cpuOnly = process.argv.includes('--cpu-only');
  if (cpuOnly) {
    (fs as { fdatasync: unknown }).fdatasync = (_fd: number, cb: (err: null) => void) => setImmediate(() => cb(null));
  }
  return cpuOnly;
}
