// What the measuring loop records of one step of a contender: its own module, so the contenders
// (which time their steps where they run) and the loop (measure.ts) share it without importing each other.

export interface StepSample {
  step: number;
  ms: number;
  /**
   * Bytes written during the step: the contender's own count where it has one (ours, through the
   * store's fs layer), else the process's write syscalls (null: no /proc/self/io).
   */
  bytes: number | null;
  /** Bytes the whole process handed to write syscalls during the step (/proc/self/io wchar). */
  processBytes: number | null;
  /** Page-cache bytes dirtied during the step (page-granular). */
  pageBytes: number | null;
  /** Durable barriers (fsync / fdatasync of a file) during the step. */
  durableWrites: number;
  /**
   * Of those, the ones up to the step's first `barrier` op: the barrier before the request carries the
   * previous step's results, so it is counted with that step (contenders with barriersNow() only).
   */
  leadBarriers: number;
  /** The step made side-effecting calls (intents and results). */
  sideEffects: boolean;
  /** Of `bytes`, those a background compaction wrote during the step (ours; 0 for the peers). */
  compactionBytes: number;
  /**
   * Of `bytes`, the zeros of the room written ahead of the segment's appends during the step (ours:
   * runLog.ts, reserve; upkeep while the model answers, as a compaction is; 0 for the peers).
   */
  roomBytes: number;
  /** Of `bytes`, a resume point's (ours: disk/resumePoint.ts; upkeep while the model answers, as the room is). */
  pointBytes: number;
  /** ours: a raw append + fdatasync of exactly the bytes the step wrote, run right after it (ms). */
  rawOfStepMs?: number;
}

/** What one step of a contender measured: StepSample without what the loop adds. */
export type TimedStep = Omit<StepSample, 'step' | 'sideEffects' | 'rawOfStepMs'>;
