// A contender on a thread of its own. Interleaved in one V8 heap, the contenders would collect each
// other's garbage: lowdb and SqliteSaver leave megabytes per step, and whichever contender ran when
// the collector did would pay for it. A full GC before each step does not fix that: the sweeping it
// leaves behind lands on the next contender's clock. A worker thread is an isolate with a heap of
// its own, so each contender pays for exactly its own garbage, as it would in a process of its own
// — and the steps still alternate on one machine, one disk and one page cache. What a step left is collected in its thread right after it, off
// the clock (as while the model answers), so that no collection of one heap runs on the other core
// beside the next contender's step. Each thread builds its own copy of the seeded workload (the
// same steps, byte for byte: checked by step number and content bytes) and times its steps and
// resumes itself; only the results cross the thread boundary, off the clock.
import path from 'node:path';
import v8 from 'node:v8';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { openDiskStore } from '../src/store';
import { BareLogContender } from './contenders/bareLog';
import { LowdbContender } from './contenders/lowdb';
import { ApiContender, type OpenStore, OursContender } from './contenders/ours';
import { SqliteContender } from './contenders/sqlite';
import type { Contender } from './contenders/types';
import { exposeGc, fullGc, type Resumable, timeStep } from './measure';
import type { TimedStep } from './sample';
import { type StepPlan, Workload, type WorkloadOptions } from './workload';

export type Kind = 'ours' | 'api' | 'api_flush' | 'lowdb' | 'sqlite' | 'bare';

/** The backstop timer and the index's progress timer never fire inside a round (see contenders/ours.ts). */
export const openOurs: OpenStore = (dir, fs) =>
  openDiskStore(dir, { deferMs: 60_000, indexProgressMs: 3_600_000, ...(fs ? { fs } : {}) });

/** The contender of `kind` over `workload`'s run, its files in `dir`. */
export function makeContender(kind: Kind, dir: string, workload: Workload): Contender {
  const runStarted = { kind: 'append' as const, input: workload.runStarted };
  if (kind === 'ours') return new OursContender(dir, openOurs, workload.runInput, runStarted);
  if (kind === 'api' || kind === 'api_flush')
    return new ApiContender(dir, workload.runInput, runStarted, kind === 'api_flush');
  if (kind === 'lowdb') return new LowdbContender(dir, workload.runInput, runStarted);
  if (kind === 'bare') return new BareLogContender(dir, workload.runInput, runStarted);
  return new SqliteContender(dir, workload.runInput, workload.initial, runStarted);
}

interface Setup {
  isolated: true;
  kind: Kind;
  dir: string;
  seed: number;
  runId: string;
  /** The workload's options (the scale run's condenses). */
  workload?: WorkloadOptions;
  /** Steps after (and before) which the thread collects its heap: every step when absent (a long run's heap makes that minutes). */
  gcSteps?: number[];
}

type Call =
  | { m: 'warmUp'; dir: string; seed: number; steps: number }
  | { m: 'start' }
  | { m: 'step'; step: number; contentBytes: number }
  | { m: 'durableWrites' }
  | { m: 'bytesWritten' }
  | { m: 'idle' }
  | { m: 'close' }
  | { m: 'notes' }
  | { m: 'crashCopy'; to: string; whole: boolean }
  | { m: 'resume'; from: string | null };

/** The contender's side, proxied from the bench's thread. */
export class IsolatedContender implements Contender {
  private readonly worker: Worker;
  private next = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private failed: Error | null = null;
  private kept: Record<string, string> = {};
  /** How long the last close() took, timed in the contender's thread. */
  closeMs = 0;

  constructor(
    readonly name: Kind,
    readonly dir: string,
    seed: number,
    runId: string,
    extra: Pick<Setup, 'workload' | 'gcSteps'> = {},
  ) {
    const setup: Setup = { isolated: true, kind: name, dir, seed, runId, ...extra };
    // The thread runs this file's TypeScript through tsx, as the benchmark does.
    this.worker = new Worker(
      `require('tsx/cjs/api').register(); require(${JSON.stringify(path.join(__dirname, 'isolated.ts'))});`,
      { eval: true, workerData: setup },
    );
    this.worker.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.value);
      else p?.reject(new Error(`${this.name} (its thread): ${m.error}`));
    });
    const fail = (err: Error) => {
      this.failed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      if (this.pending.size > 0) fail(new Error(`${this.name}'s thread exited (${code}) with calls pending`));
    });
  }

  private call<T>(c: Call): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, ...c });
    });
  }

  /** Runs `steps` steps of another seed's workload through a contender of this kind in `dir`, untimed, then closes it: JIT and first-file costs paid in this thread. */
  warmUp(dir: string, seed: number, steps: number): Promise<void> {
    return this.call({ m: 'warmUp', dir, seed, steps });
  }

  start(): Promise<void> {
    return this.call({ m: 'start' });
  }

  runStep(plan: StepPlan): Promise<TimedStep> {
    return this.call({ m: 'step', step: plan.step, contentBytes: plan.contentBytes });
  }

  apply(): Promise<void> {
    throw new Error('an isolated contender runs its steps itself (runStep)');
  }

  endStep(): Promise<void> {
    throw new Error('an isolated contender runs its steps itself (runStep)');
  }

  durableWrites(): Promise<number> {
    return this.call({ m: 'durableWrites' });
  }

  bytesWritten(): Promise<number> {
    return this.call({ m: 'bytesWritten' });
  }

  /** Ours: waits for a compaction under way and writes what is queued (before a crash copy). */
  idle(): Promise<void> {
    return this.call({ m: 'idle' });
  }

  /** Closes the contender (its thread stays, for the resumes); its notes are kept for the report. */
  async close(): Promise<void> {
    this.closeMs = await this.call<number>({ m: 'close' });
    this.kept = await this.call<Record<string, string>>({ m: 'notes' });
  }

  notes(): Record<string, string> {
    return this.kept;
  }

  resume(): Promise<{ messages: number; close(): Promise<void>; ms: number; heapBytes: number }> {
    return this.resumeFrom(null);
  }

  /**
   * Ours: a copy of its folder as it is now, while the run is still held (what a SIGKILL leaves), resumed
   * in this thread as the runner resumes; `whole`: its whole history read instead (loadSnapshot).
   */
  async crashCopy(to: string, whole = false): Promise<Resumable> {
    await this.call({ m: 'crashCopy', to, whole });
    return { name: whole ? 'ours_whole_after_crash' : 'ours_after_crash', resume: () => this.resumeFrom(to) };
  }

  private async resumeFrom(
    from: string | null,
  ): Promise<{ messages: number; close(): Promise<void>; ms: number; heapBytes: number }> {
    const r = await this.call<{ messages: number; ms: number; heapBytes: number }>({ m: 'resume', from });
    return { ...r, close: async () => undefined };
  }

  /** Ends the thread. */
  async dispose(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The thread's side: one contender, its own copy of the workload, the calls answered in order. */
async function contenderThread(port: NonNullable<typeof parentPort>, s: Setup): Promise<void> {
  exposeGc();
  const workload = new Workload(s.seed, s.runId, s.workload);
  const contender = makeContender(s.kind, s.dir, workload);
  const gcSteps = s.gcSteps ? new Set(s.gcSteps) : undefined;
  const ours = () => {
    if (!(contender instanceof OursContender)) throw new Error(`${s.kind} has no such call`);
    return contender;
  };
  /** Ours' crash copies, by folder. */
  const copies = new Map<string, Resumable>();
  const handle = async (c: Call): Promise<unknown> => {
    switch (c.m) {
      case 'warmUp': {
        const w = new Workload(c.seed, s.runId);
        const warm = makeContender(s.kind, c.dir, w);
        await warm.start();
        for (let i = 0; i < c.steps; i++) await timeStep(warm, w.nextStep(), false);
        await warm.close();
        return undefined;
      }
      case 'start':
        return contender.start();
      case 'step': {
        const plan = workload.nextStep();
        if (plan.step !== c.step || plan.contentBytes !== c.contentBytes)
          throw new Error(
            `workload out of step: step ${plan.step} (${plan.contentBytes} B), the bench's ${c.step} (${c.contentBytes} B)`,
          );
        const t = await timeStep(contender, plan, false);
        // What the step left is collected now, off the clock, before the next contender's step: as
        // while the model answers, and so that no collection of this heap runs on the machine's
        // other core beside the next step (where it would slow the raw append and ours' step alike).
        // Not for the public API's loop: a caller's process collects when V8 decides, on its clock.
        if (!(contender instanceof ApiContender) && (!gcSteps || gcSteps.has(c.step) || gcSteps.has(c.step + 1)))
          fullGc();
        return t;
      }
      case 'durableWrites':
        return contender.durableWrites();
      case 'bytesWritten':
        return contender.bytesWritten?.();
      case 'idle':
        return ours().idle();
      case 'close': {
        const t0 = performance.now();
        await contender.close();
        return performance.now() - t0;
      }
      case 'notes':
        return contender.notes();
      case 'crashCopy':
        copies.set(c.to, ours().crashCopy(c.to, c.whole));
        return undefined;
      case 'resume': {
        const from = c.from === null ? contender : copies.get(c.from);
        if (!from) throw new Error(`no crash copy at ${c.from}`);
        fullGc();
        const heapBytes = v8.getHeapStatistics().used_heap_size;
        const t0 = performance.now();
        const { messages, close } = await from.resume();
        const ms = performance.now() - t0;
        await close();
        fullGc(); // its garbage, collected before the next contender's resume
        return { messages, ms, heapBytes };
      }
    }
  };
  let chain = Promise.resolve();
  port.on('message', (m: Call & { id: number }) => {
    chain = chain.then(async () => {
      try {
        port.postMessage({ id: m.id, ok: true, value: await handle(m) });
      } catch (err) {
        port.postMessage({
          id: m.id,
          ok: false,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        });
      }
    });
  });
}

if (parentPort && (workerData as Partial<Setup> | undefined)?.isolated)
  void contenderThread(parentPort, workerData as Setup);
