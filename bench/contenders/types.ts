// What the measuring loop needs from each contender. All contenders persist the same Workload
// ops, durably (fsync'd before the op's promise resolves, or by endStep()).
import type { TimedStep } from '../sample';
import type { Op, StepPlan } from '../workload';

export interface Contender {
  readonly name: 'ours' | 'api' | 'api_flush' | 'lowdb' | 'sqlite' | 'bare' | 'ours_pg' | 'postgres';
  /** Where its files live (a fresh temp folder per contender). */
  readonly dir: string;
  /**
   * A contender on a thread of its own (isolated.ts) runs and times its steps there, each from its
   * own copy of the workload, and resumes there too: the loop then calls this instead of apply().
   */
  runStep?(plan: StepPlan): Promise<TimedStep>;
  /** Creates the run and writes run_started (untimed). */
  start(): Promise<void>;
  /** One store call of a step (timed). */
  apply(op: Op): Promise<void>;
  /** End of a step (timed). What ours queued rides on the barrier of the next step, which pays for it. */
  endStep(): Promise<void>;
  /**
   * While the model answers (not timed): ours waits for a compaction its barrier before the request
   * started, as the runner would be waiting for the model meanwhile. Its bytes still count in the step.
   */
  modelWait?(): Promise<void>;
  /**
   * Bytes written to its files so far, when the contender can count them exactly (ours: the
   * store's fs layer). Otherwise the process's write syscalls are the meter.
   */
  bytesWritten?(): number | Promise<number>;
  /** fsync'd writes so far (commits for ours, document rewrites for lowdb, transactions for sqlite). */
  durableWrites(): Promise<number>;
  /** Bytes written so far by compactions (ours: snapshot.json, in the background while the run works). */
  compactionBytes?(): number;
  /** Bytes of zeros written so far as room ahead of the log's appends (ours), read without I/O. */
  roomBytes?(): number;
  /** Bytes of resume points written so far (ours: disk/resumePoint.ts, written while the model answers). */
  pointBytes?(): number;
  /** The same, read without I/O (ours: its fs layer's counter), so it can be read inside a timed step. */
  barriersNow?(): number;
  /** Releases everything; the files stay for resume and size measurements. */
  close(): Promise<void>;
  /**
   * Fresh open of what is on disk and rebuild of the message list (timed). Returns the message
   * count and a close() that the caller runs after stopping the clock.
   */
  resume(): Promise<{ messages: number; close(): Promise<void>; ms?: number; heapBytes?: number }>;
  /** Facts worth reporting (journal mode, serialisation, …). */
  notes(): Record<string, string>;
}
