// A run's checkpoint records by seq, some of which may come later: a compacted run's older records (a
// disk snapshot's history, disk/compacted.ts) are holes until one is first asked for; then every one
// is read at once and checked against the run. The run model keeps its records here, so it knows
// nothing of where, or in which form, the older ones are kept.
import { AgentCheckpointCorruptionError } from '../api/errors';
import type { CheckpointRecord, RunMeta } from '../api/schema';
import type { ListTails, RecordOp } from './storedSchema';

/**
 * A compacted run as a backend keeps it: what a run needs to go on (the list tails of every record,
 * the newest records from the newest snapshot on, which seqs hold snapshots), and a reader for the
 * rest, called the first time a record not in memory is asked for.
 */
export interface CompactedHistory {
  /** Records in the history (seqs 1..count). */
  count: number;
  /** The list tails by the seq of the record that wrote them, in seq order. */
  tails: Map<number, ListTails>;
  /** The records from the newest snapshot-bearing one to `count`, in order. */
  newest: CheckpointRecord[];
  /** The seqs of the records with a snapshot, ascending. */
  snapshotSeqs: number[];
  /** The newest record timestamp. */
  updatedMs: number;
  /** Every record op 1..count, decoded and skeleton-checked (their tails put back). */
  read: () => RecordOp[];
}

/** What the records read later must pass: their ops follow one another as a run's do (RunModel.check). */
export type CheckRecords = (ops: readonly RecordOp[]) => void;

export class Records {
  /** By seq − 1; a hole is a record of the history not read yet. */
  private readonly recs: (CheckpointRecord | undefined)[] = [];
  private later: { read: () => RecordOp[]; file: string; count: number; check: CheckRecords } | null = null;

  constructor(
    private readonly meta: RunMeta,
    /** Records not yet checked against the full schema: seq → the file they came from. */
    private readonly unverified: Map<number, string>,
    /** The seqs of the records with a snapshot, ascending (the history must agree). */
    private readonly snapshotSeqs: readonly number[],
  ) {}

  get length(): number {
    return this.recs.length;
  }

  /** Whether older records are still to be read (tests, benchmarks). */
  get pending(): boolean {
    return this.later !== null;
  }

  /** Every record, in seq order (the older ones read first if they are not). */
  all(): readonly CheckpointRecord[] {
    this.readLater();
    return this.recs as CheckpointRecord[];
  }

  /** The record of `seq`, reading the older ones when it is one of them. */
  get(seq: number): CheckpointRecord | undefined {
    if (!(seq >= 1 && seq <= this.recs.length)) return undefined;
    const r = this.recs[seq - 1];
    if (r !== undefined) return r;
    this.readLater();
    return this.recs[seq - 1];
  }

  /** The newest record (always in memory). */
  last(): CheckpointRecord | undefined {
    return this.recs[this.recs.length - 1];
  }

  push(r: CheckpointRecord): void {
    this.recs.push(r);
  }

  /** The record of `seq` replaced (by its checked copy). */
  set(seq: number, r: CheckpointRecord): void {
    this.recs[seq - 1] = r;
  }

  /**
   * Records 1..count from `file`: `newest` (the last of them) in place, the others read by `read`
   * and passed through `check` the first time one is asked for. Fresh records only.
   */
  adopt(
    count: number,
    newest: readonly CheckpointRecord[],
    file: string,
    read: () => RecordOp[],
    check: CheckRecords,
  ): void {
    this.recs.length = count;
    for (const r of newest) {
      this.recs[r.seq - 1] = r;
      this.unverified.set(r.seq, file);
    }
    this.later = count > newest.length ? { read, file, count, check } : null;
  }

  /** Reads the older records into the holes (once); throws AgentCheckpointCorruptionError when they do not read back. */
  private readLater(): void {
    const h = this.later;
    if (!h) return;
    const bad = (why: string) =>
      new AgentCheckpointCorruptionError(`${h.file} is corrupt: ${why}`, this.meta.run_id, h.file);
    let ops: RecordOp[];
    try {
      ops = h.read();
    } catch (err) {
      throw err instanceof AgentCheckpointCorruptionError ? err : bad((err as Error).message);
    }
    if (ops.length !== h.count) throw bad(`its history holds ${ops.length} records, its state says ${h.count}`);
    try {
      h.check(ops);
    } catch (err) {
      throw bad((err as Error).message);
    }
    const snapshots = new Set(this.snapshotSeqs);
    for (let i = 0; i < ops.length; i++) {
      const r = ops[i]!.record;
      if (Boolean(r.snapshot) !== snapshots.has(r.seq)) throw bad(`checkpoint ${r.seq} and the snapshot seqs disagree`);
      if (this.recs[i] === undefined) {
        this.recs[i] = r;
        this.unverified.set(r.seq, h.file);
      }
    }
    this.later = null;
  }
}
