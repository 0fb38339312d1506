// One factor for every deadline of the tests that drive a real workbench: how much slower than a quiet
// machine this one runs right now. AW_TIME_SCALE sets it; otherwise it is the load average per core,
// read at each call, so a deadline set while the machine is busy is as long as the business makes it.
// A wait on a visible state then fails for a state that never comes, not for a loaded machine. The
// measured factor is capped: a runaway process elsewhere (a load of hundreds) must not stretch a
// 30 s wait into hours, or a test that truly hangs would never fail.
import os from 'node:os';

/** The measured factor's ceiling: well above the loads these machines see under a full suite (≈ 4–5 per core). */
const MAX_MEASURED = 8;

export function timeScale(): number {
  const set = Number(process.env.AW_TIME_SCALE);
  if (Number.isFinite(set) && set > 0) return set;
  const perCore = os.loadavg()[0]! / Math.max(1, os.cpus().length);
  return Math.min(MAX_MEASURED, Math.max(1, perCore));
}

/** `ms` as long as the machine's load makes it. */
export const scaled = (ms: number): number => Math.round(ms * timeScale());
