// The measuring loop: all contenders run the same workload in one process, interleaved step by
// step (ours step i, lowdb step i, sqlite step i, the raw primitive; the order rotates every step)
// so that drift in machine load, page cache and thermal state hits all of them alike. A step's
// time is the wall time of all its store calls (the runner's barriers included) plus the
// contender's endStep(), with nothing else running in the process meanwhile. The store contenders
// each run on a thread of their own (isolated.ts), so none pays for another's garbage; the shared
// store's contenders (shared.ts) and the raw primitive run on this one. Right after ours' step
// the raw primitive appends exactly the bytes that step wrote (one pwrite + fdatasync).
import v8 from 'node:v8';
import vm from 'node:vm';
import { type Contender } from './contenders/types';
import { ioCounters } from './fsutil';
import { type RawAppend } from './primitive';
import type { StepSample, TimedStep } from './sample';
import type { StepPlan, Workload } from './workload';

export interface RunSamples {
  steps: number;
  contentBytes: number[];
  byContender: Record<string, StepSample[]>;
  /** Raw primitive durations, tagged with the step they were interleaved with. */
  primitive: { step: number; ms: number }[];
  /** Bytes each contender wrote before step 1 (createRun, run_started). */
  startBytes: Record<string, number | null>;
}

export interface MeasureOptions {
  steps: number;
  /** Raw primitive repetitions per step. */
  primitivePerStep: number;
  /** Steps on which a full GC runs before each in-process contender's step (the reported windows). */
  gcSteps?: Set<number>;
  onProgress?(step: number): void;
}

/**
 * Makes `gc` callable (what --expose-gc does), at run time so `tsx bench/index.ts` is enough: the
 * bench's main() calls it, and each contender's thread (isolated.ts) for its own isolate.
 */
export function exposeGc(): void {
  if ((globalThis as { gc?: unknown }).gc) return;
  v8.setFlagsFromString('--expose-gc');
  (globalThis as { gc?: unknown }).gc = vm.runInNewContext('gc');
}

/**
 * A full garbage collection. `gc` is exposed when the bench's main() starts — after this module was
 * loaded — so it is looked up at each call (read once at load, it was always undefined and no
 * collection ever ran). Throws when it is missing: the windows and the resumes are measured after one.
 */
export function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc)
    throw new Error(
      'the benchmark needs a full GC between contenders: run it with --expose-gc or through bench/index.ts',
    );
  gc();
}

export async function measureRun(
  workload: Workload,
  contenders: Contender[],
  raw: RawAppend | undefined,
  opts: MeasureOptions,
): Promise<RunSamples> {
  const out: RunSamples = { steps: opts.steps, contentBytes: [], byContender: {}, primitive: [], startBytes: {} };
  for (const c of contenders) {
    out.byContender[c.name] = [];
    const io0 = ioCounters();
    await c.start();
    const io1 = ioCounters();
    out.startBytes[c.name] = io0 && io1 ? io1.wchar - io0.wchar : null;
  }
  const slots: (Contender | 'raw')[] = raw ? [...contenders, 'raw'] : [...contenders];
  for (let step = 1; step <= opts.steps; step++) {
    const plan = workload.nextStep();
    if (plan.step !== step) throw new Error(`workload out of step: ${plan.step} != ${step}`);
    out.contentBytes.push(plan.contentBytes);
    for (let k = 0; k < slots.length; k++) {
      const slot = slots[(k + step) % slots.length]!;
      if (slot === 'raw') {
        for (let r = 0; r < opts.primitivePerStep; r++) out.primitive.push({ step, ms: await raw!.once() });
        continue;
      }
      // In-process contenders: garbage another one left must not be collected on this one's clock in
      // the reported windows (isolated contenders have heaps of their own: runStep).
      const t = slot.runStep ? await slot.runStep(plan) : await timeStep(slot, plan, opts.gcSteps?.has(step) ?? false);
      const bytes = t.bytes;
      // The disk's own cost of this step's bytes, in one append: what ours' step time is set against.
      const rawOfStepMs = slot.name === 'ours' && raw && bytes ? await raw.once(bytes) : undefined;
      out.byContender[slot.name]!.push({
        step,
        ...t,
        sideEffects: plan.ops.some((o) => o.kind === 'intent'),
        ...(rawOfStepMs === undefined ? {} : { rawOfStepMs }),
      });
    }
    opts.onProgress?.(step);
  }
  await raw?.close();
  return out;
}

/**
 * One step of a contender, timed: the wall time of all its store calls and its endStep(), the
 * model's answer left out; its durable barriers, bytes and compaction bytes. Runs where the
 * contender lives (the bench's thread, or the contender's own: isolated.ts).
 */
export async function timeStep(slot: Contender, plan: StepPlan, gcBefore: boolean): Promise<TimedStep> {
  if (gcBefore) fullGc();
  const writes0 = await slot.durableWrites();
  const own0 = await slot.bytesWritten?.();
  const io0 = ioCounters();
  const compacted0 = slot.compactionBytes?.() ?? 0;
  const room0 = slot.roomBytes?.() ?? 0;
  const point0 = slot.pointBytes?.() ?? 0;
  let lead: number | undefined;
  let modelMs = 0;
  const t0 = performance.now();
  for (const op of plan.ops) {
    if (op.kind === 'model') {
      const m0 = performance.now();
      await slot.modelWait?.();
      modelMs += performance.now() - m0;
      continue;
    }
    await slot.apply(op);
    if (op.kind === 'barrier' && lead === undefined && slot.barriersNow) lead = slot.barriersNow();
  }
  await slot.endStep();
  const ms = performance.now() - t0 - modelMs;
  const io1 = ioCounters();
  const own1 = await slot.bytesWritten?.();
  const writes1 = await slot.durableWrites();
  const processBytes = io0 && io1 ? io1.wchar - io0.wchar : null;
  return {
    ms,
    bytes: own0 !== undefined && own1 !== undefined ? own1 - own0 : processBytes,
    processBytes,
    pageBytes: io0 && io1 ? io1.writeBytes - io0.writeBytes : null,
    durableWrites: writes1 - writes0,
    compactionBytes: (slot.compactionBytes?.() ?? 0) - compacted0,
    roomBytes: (slot.roomBytes?.() ?? 0) - room0,
    pointBytes: (slot.pointBytes?.() ?? 0) - point0,
    leadBarriers: lead === undefined ? 0 : lead - writes0,
  };
}

/** Anything that can be reopened from disk and timed; `messages`: what it must give back, when not the run's last. */
export type Resumable = { readonly name: string; resume: Contender['resume']; messages?: number };

/** Resume latency: fresh open + rebuild of the message list, interleaved over rounds. */
export async function measureResume(
  contenders: Resumable[],
  rounds: number,
  expectMessages: number,
  /** Filled with the process's heap in use as each resume began (after the GC before it). */
  heapBytes?: number[],
): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = Object.fromEntries(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(k + r) % contenders.length]!;
      fullGc();
      const heap0 = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const got = await c.resume();
      const { messages, close } = got;
      // An isolated contender times its resume in its own thread, after a full GC there, in its own heap.
      out[c.name]!.push(got.ms ?? performance.now() - t0);
      heapBytes?.push(got.heapBytes ?? heap0);
      await close();
      // Every contender must give back the same conversation, or the comparison is meaningless.
      const expected = c.messages ?? expectMessages;
      if (messages !== expected) throw new Error(`${c.name} resumed ${messages} messages, expected ${expected}`);
    }
  }
  return out;
}
