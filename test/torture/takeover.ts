// SIGSTOP of a run's owner past its lease: the torture child as two "machines" on one
// store. Used by test/unit/store/pg/processes.int.test.ts.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TortureBackend } from './backend';
import { bundleChild, newRunState, runChild, verify } from './run';

/**
 * A paused owner (SIGSTOP) loses its run: child A ("machine-a") writes the run and stops just before
 * its first write after its `stopAfterAcks`-th ACK; once the run's lease has gone stale (`holderGone`), child B
 * ("machine-b") takes it over and finishes it; then A is continued. A's next write must be refused
 * (it pauses on RunNotOwnedError), and the store must hold everything either child acknowledged,
 * with every side effect once or again only behind an uncertain approval, and the run's transcript
 * equal to the uninterrupted one.
 */
export async function runTakeover(o: {
  backend: (dir: string) => TortureBackend;
  seed: number;
  stopAfterAcks: number;
  staleMs: number;
  holderGone: (runId: string) => Promise<boolean>;
  steps?: number;
}): Promise<{ problems: string[]; a: string; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-takeover-'));
  const backend = o.backend(path.join(dir, 'store'));
  const effectsLog = path.join(dir, 'effects.log');
  const cmd = [process.execPath, await bundleChild(dir)];
  const st = newRunState(o.seed, o.steps ?? 12);
  const env = (machine: string) => ({
    ...backend.env,
    MACHINE: machine,
    STALE_MS: String(o.staleMs),
    PAUSE_ON_STORE_ERROR: '1',
    EFFECTS_LOG: effectsLog,
    SEED: String(st.seed),
    STEPS: String(st.steps),
  });
  let stoppedChild: ChildProcess | undefined;
  let onStop!: () => void;
  const stopped = new Promise<void>((r) => (onStop = r));
  // A stops itself before its first write after that ACK, so what it does when continued is a write.
  const envA = { ...env('machine-a'), STOP_BEFORE_WRITE: String(o.stopAfterAcks) };
  const a = runChild(cmd, envA, st, { afterAcks: Infinity, delayMs: 0 }, (child) => {
    stoppedChild = child;
    onStop();
  });
  const problems: string[] = [];
  const first = await Promise.race([stopped.then(() => null), a]);
  if (first) return { problems: [`machine-a finished before it could be stopped`], a: 'finished', dir };
  while (!isStopped(stoppedChild!.pid!) || !(await o.holderGone(st.runId!)))
    await new Promise((r) => setTimeout(r, 50));
  const b = await runChild(cmd, { ...env('machine-b'), RUN_ID: st.runId! }, st, { afterAcks: Infinity, delayMs: 0 });
  if (b.error) problems.push(`machine-b failed: ${b.error}`);
  if (!st.done) problems.push('machine-b did not finish the run');
  stoppedChild!.kill('SIGCONT');
  const ra = await a;
  const outcome = ra.paused ?? ra.error ?? 'finished';
  if (!ra.paused || !/RunNotOwnedError/.test(ra.paused))
    problems.push(`machine-a, continued after the takeover, was not refused: ${outcome}`);
  problems.push(...(await verify(backend, st, effectsLog)));
  return { problems, a: outcome, dir };
}

/** The process is stopped (its state in /proc is `T`). */
function isStopped(pid: number): boolean {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}
