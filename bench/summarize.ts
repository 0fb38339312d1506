// Turns raw samples into the figures of docs/design.md's Targets: per-step time and bytes in windows around
// steps 10 / 100 / 1000, write amplification, storage growth, distance to the disk's limit.
import type { RunSamples } from './measure';
import type { StepSample } from './sample';
import { median, p95, sum, windowAround } from './stats';

export interface PointFigures {
  point: number;
  window: { from: number; to: number };
  medianMs: number;
  p95Ms: number;
  /** Median bytes written per step in the window. */
  bytesPerStep: number | null;
  /** Σ bytes written / Σ new content bytes over the window. */
  amplification: number | null;
  durableWritesPerStep: number;
  /** Median over the window of (step time / fsync'd writes of that step): the cost of one durable write. */
  msPerDurableWrite: number;
  /**
   * Median barriers of the window's steps with side-effecting calls / without, each step counted
   * with the barrier before the next request (which carries its results) instead of its own (null: none).
   */
  barriersWithEffects: number | null;
  barriersWithout: number | null;
  /** Median over the window of (step time ÷ a raw append + fdatasync of the step's own bytes) (null: not measured). */
  msOverRawOfStep: number | null;
  /** Runs whose windows the figures were taken over (the early runs join the window around step 10). */
  runs?: number;
}

export interface ContenderFigures {
  points: PointFigures[];
  /** Worst per-step amplification over all steps, and where. */
  maxAmplification: { value: number; step: number } | null;
  /** The same without what background compactions wrote during a step. */
  maxAmplificationWithoutCompaction: { value: number; step: number } | null;
  /** The same without the room written ahead either (ours: the step's own writes, upkeep left out). */
  maxAmplificationOwn: { value: number; step: number } | null;
  /**
   * The same over two consecutive steps (`step`: the second). The runner's durability hands a step's
   * last result and its post_tool_batch to the next step's first barrier, so one step's bytes land in
   * the next: a step that follows a large result shows them against its own small content.
   */
  maxAmplificationOwnPair: { value: number; step: number } | null;
  /** Steps during which room was written ahead of the log, and its zeros in all (per run). */
  room: { steps: number; bytes: number };
  /** Resume points written (ours): steps during which one was, and their bytes in all. */
  resumePoints: { steps: number; bytes: number };
  /** Steps during which a background compaction wrote, and its bytes in all (per run). */
  compaction: { steps: number; bytes: number };
  /** Σ bytes written over the run / Σ content. */
  runAmplification: number | null;
  totalBytesWritten: number | null;
}

/** Window widths: 10 steps around step 10, 20 around the later points. */
export const windowWidth = (point: number): number => (point <= 10 ? 10 : 20);

export function pointsFor(steps: number): number[] {
  const pts = [10, 100, 1000].filter((p) => p <= steps);
  if (pts.at(-1) !== steps && steps > 10 && !pts.includes(steps)) pts.push(steps);
  return pts;
}

export function contenderFigures(
  samples: RunSamples[],
  name: string,
  points: number[],
  width: (point: number) => number = windowWidth,
): ContenderFigures {
  const steps = samples[0]!.steps;
  const all = samples.flatMap((s) => {
    const xs = s.byContender[name]!;
    // A step's barriers: its own, less the one before its request (the previous step's results), plus the next step's.
    return xs.map((x, i) => ({
      ...x,
      content: s.contentBytes[x.step - 1]!,
      ownBarriers: x.durableWrites - x.leadBarriers + (xs[i + 1]?.leadBarriers ?? 0),
    }));
  });
  const pointFigures = points.map((point) => {
    const window = windowAround(point, width(point), steps);
    const inWindow = all.filter((x) => x.step >= window.from && x.step <= window.to);
    return {
      point,
      window,
      medianMs: median(inWindow.map((x) => x.ms)),
      p95Ms: p95(inWindow.map((x) => x.ms)),
      bytesPerStep: bytesKnown(inWindow) ? median(inWindow.map((x) => x.bytes!)) : null,
      amplification: bytesKnown(inWindow)
        ? sum(inWindow.map((x) => x.bytes!)) / sum(inWindow.map((x) => x.content))
        : null,
      durableWritesPerStep: median(inWindow.map((x) => x.durableWrites)),
      msPerDurableWrite: median(inWindow.map((x) => x.ms / Math.max(1, x.durableWrites))),
      barriersWithEffects: medianOrNull(inWindow.filter((x) => x.sideEffects).map((x) => x.ownBarriers)),
      barriersWithout: medianOrNull(inWindow.filter((x) => !x.sideEffects).map((x) => x.ownBarriers)),
      msOverRawOfStep: medianOrNull(inWindow.filter((x) => x.rawOfStepMs).map((x) => x.ms / x.rawOfStepMs!)),
    };
  });
  let maxAmplification: ContenderFigures['maxAmplification'] = null;
  let maxOnStepPath: ContenderFigures['maxAmplification'] = null;
  let maxOwn: ContenderFigures['maxAmplification'] = null;
  let maxPair: ContenderFigures['maxAmplification'] = null;
  if (bytesKnown(all)) {
    for (const x of all) {
      const a = x.bytes! / x.content;
      if (!maxAmplification || a > maxAmplification.value) maxAmplification = { value: a, step: x.step };
      const b = (x.bytes! - x.compactionBytes) / x.content;
      if (!maxOnStepPath || b > maxOnStepPath.value) maxOnStepPath = { value: b, step: x.step };
      const c = ownBytes(x) / x.content;
      if (!maxOwn || c > maxOwn.value) maxOwn = { value: c, step: x.step };
    }
    for (const s of samples) {
      const xs = s.byContender[name]!;
      for (let i = 1; i < xs.length; i++) {
        const [a, b] = [xs[i - 1]!, xs[i]!];
        const p = (ownBytes(a) + ownBytes(b)) / (s.contentBytes[a.step - 1]! + s.contentBytes[b.step - 1]!);
        if (!maxPair || p > maxPair.value) maxPair = { value: p, step: b.step };
      }
    }
  }
  const compacting = all.filter((x) => x.compactionBytes > 0);
  const reserving = all.filter((x) => x.roomBytes > 0);
  const pointing = all.filter((x) => (x.pointBytes ?? 0) > 0);
  const totalBytesWritten = bytesKnown(all) ? sum(all.map((x) => x.bytes!)) / samples.length : null;
  const totalContent = sum(samples[0]!.contentBytes);
  return {
    points: pointFigures,
    maxAmplification,
    maxAmplificationWithoutCompaction: maxOnStepPath,
    maxAmplificationOwn: maxOwn,
    maxAmplificationOwnPair: maxPair,
    room: { steps: reserving.length / samples.length, bytes: sum(reserving.map((x) => x.roomBytes)) / samples.length },
    resumePoints: {
      steps: pointing.length / samples.length,
      bytes: sum(pointing.map((x) => x.pointBytes)) / samples.length,
    },
    compaction: {
      steps: compacting.length / samples.length,
      bytes: sum(compacting.map((x) => x.compactionBytes)) / samples.length,
    },
    runAmplification: totalBytesWritten === null ? null : totalBytesWritten / totalContent,
    totalBytesWritten,
  };
}

/** A step's bytes less what a background compaction, the room written ahead and a resume point wrote during it. */
function ownBytes(x: Pick<StepSample, 'bytes' | 'compactionBytes' | 'roomBytes' | 'pointBytes'>): number {
  return x.bytes! - x.compactionBytes - x.roomBytes - (x.pointBytes ?? 0);
}

function medianOrNull(xs: number[]): number | null {
  return xs.length > 0 ? median(xs) : null;
}

function bytesKnown(xs: readonly Pick<StepSample, 'bytes'>[]): boolean {
  return xs.length > 0 && xs.every((x) => x.bytes !== null);
}

export interface PrimitivePoint {
  point: number;
  medianMs: number;
  p95Ms: number;
  runs?: number;
}

export function primitiveFigures(
  samples: RunSamples[],
  points: number[],
  width: (point: number) => number = windowWidth,
): { points: PrimitivePoint[]; medianMs: number; p95Ms: number; p99Ms: number } {
  const steps = samples[0]!.steps;
  const all = samples.flatMap((s) => s.primitive);
  const ms = all.map((x) => x.ms);
  return {
    points: points.map((point) => {
      const w = windowAround(point, width(point), steps);
      const inWindow = all.filter((x) => x.step >= w.from && x.step <= w.to).map((x) => x.ms);
      return { point, medianMs: median(inWindow), p95Ms: p95(inWindow) };
    }),
    medianMs: median(ms),
    p95Ms: p95(ms),
    p99Ms: ms.length ? [...ms].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.99 * ms.length) - 1)]! : NaN,
  };
}

/**
 * per-step durable cost / (durable writes per step × the raw primitive), per point. Steps differ in
 * their number of fsync'd writes (3 to 8: it depends on the side-effecting calls), so the ratio is
 * taken step by step (time / writes of that step) and its window median divided by the primitive's.
 */
export function distanceToLimit(
  ours: ContenderFigures,
  primitive: PrimitivePoint[],
): { point: number; value: number }[] {
  return ours.points.map((p, i) => ({ point: p.point, value: p.msPerDurableWrite / primitive[i]!.medianMs }));
}

/** Figures whose point 10 is taken over the full runs and the early ones together (`at`: the same figures over both, for these points); every other point over the full runs alone. */
export function withEarlyRuns<T extends { points: P[] }, P extends { point: number; runs?: number }>(
  figures: T,
  at: (points: number[]) => P[],
  fullRuns: number,
  earlyRuns: number,
): T {
  const early = earlyRuns > 0 && figures.points.some((p) => p.point === 10) ? at([10])[0] : undefined;
  return {
    ...figures,
    points: figures.points.map((p) =>
      p.point === 10 && early ? { ...early, runs: fullRuns + earlyRuns } : { ...p, runs: fullRuns },
    ),
  };
}
