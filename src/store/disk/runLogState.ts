// What a run's log knows of itself between writes: shared by the log (runLog.ts) and the compaction
// that runs beside its appends (besideCompaction.ts), each of which changes it.
import type { RunMeta } from '../api/schema';
import type { Codec } from './codec';
import type { SegmentTail } from './load';
import type { TailWitness } from './witness';

export interface RunLogState {
  next: number;
  codec: Codec;
  meta: RunMeta;
  covered: number;
  tail: SegmentTail | null;
  /**
   * The snapshot was read from its spare copy after damage: compact() rewrites the log (a snapshot
   * with both copies, a fresh segment) before the run's next write.
   */
  compactFirst: boolean;
  /** The newest witness known (read at load, or written since): a new segment starts with it. */
  witness: TailWitness | null;
  /** Where the witness file's slots start (null: it is written again whole before its next slot). */
  witnessAt: number | null;
}
