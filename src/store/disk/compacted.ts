// A compacted run as snapshot.json holds it: what the run needs to go on first, its older records
// after, read only when one of them is asked for. A resume needs the run's lists, effects, approvals
// and newest snapshot — about half of the file; decoding, checking and replaying every older record
// would be most of the rest of its time. So the ops come in two parts (snapshotFile.ts puts the second
// in chunks of its own, `history` in the header):
//
//   state     every op but the records, in the order the run rebuilt them, each record's list
//             tails in its place as {"op":"tails","seq","lists"} (encoded as in the record), and last
//             {"op":"compacted","count","snapshot_seqs","updated_ms","codec","newest"}: how many
//             records, which hold snapshots, the newest record time, what the codec holds after the
//             last record (the segment's frames are encoded against it), and the records from the
//             newest snapshot-bearing one on, whole (not as differences).
//   history   every record op without its tails, encoded as before (a record's snapshot header and
//             payload as differences from the previous record's): decoded from the first record on
//             with the tails put back, when first asked for.
//
// Both parts are checksummed frames with the spare copy behind them (snapshotFile.ts); every frame's
// checksum is checked when the run loads, so damage is found then, and only a writer bug could make
// the history fail to read back later (an AgentCheckpointCorruptionError naming the file).
import { z } from 'zod';
import { AgentCheckpointCorruptionError } from '../api/errors';
import type { CheckpointRecord, RunMeta } from '../api/schema';
import { fastValid, parseFast } from '../core/fastValid';
import type { CompactedHistory } from '../core/records';
import {
  isRecordSkeleton,
  ListTails,
  StoredCommitBody,
  type CommitBody,
  type CommitOp,
  type RecordOp,
} from '../core/storedSchema';
import { decodeLists, decodeOps, newCodec, type Codec, type CodecDelta } from './codec';
import { decodeCommit, type RawCommit } from './commit';

const nat = z.number().int().nonnegative();
export const Compacted = z.object({
  op: z.literal('compacted'),
  count: nat.min(1),
  snapshot_seqs: z.array(nat.min(1)),
  updated_ms: z.number(),
  codec: z.object({
    header: z.record(z.string(), z.unknown()).nullable(),
    payloads: z.record(z.string(), z.record(z.string(), z.unknown())),
    timestamp: z.number().nullable(),
  }),
  newest: z.array(z.custom<CheckpointRecord>(isRecordSkeleton, 'not a checkpoint record')).min(1),
});
const Tails = z.object({ op: z.literal('tails'), seq: nat.min(1), lists: ListTails });

/**
 * The ops of a compacted run as a snapshot holds them: `decoded` (the run rebuilt, RunModel.rebuildOps)
 * and the same encoded against a fresh codec (`encoded`, `next`: encodeOps), split into the run's
 * state and its history; `historyFrom`: where the history starts.
 */
export function compactedOps(
  decoded: readonly CommitOp[],
  encoded: { ops: unknown[]; next: CodecDelta },
): { ops: unknown[]; historyFrom: number | undefined } {
  // A run without records (none is ever written so) has no history: its ops as they are.
  if (!decoded.some((op) => op.op === 'record')) return { ops: encoded.ops, historyFrom: undefined };
  const state: unknown[] = [];
  const history: unknown[] = [];
  const records: CheckpointRecord[] = [];
  const snapshotSeqs: number[] = [];
  let updated = 0;
  decoded.forEach((op, i) => {
    const enc = encoded.ops[i] as { op: string; record?: unknown; lists?: unknown };
    if (op.op !== 'record') return void state.push(enc);
    records.push(op.record);
    if (op.record.snapshot) snapshotSeqs.push(op.record.seq);
    updated = Math.max(updated, op.record.timestamp_ms);
    if (enc.lists) state.push({ op: 'tails', seq: op.record.seq, lists: enc.lists });
    history.push({ op: 'record', record: enc.record });
  });
  // The records from the newest snapshot on (the last alone when none holds one).
  const first = snapshotSeqs.at(-1) ?? records.length;
  const n = encoded.next;
  state.push({
    op: 'compacted',
    count: records.length,
    snapshot_seqs: snapshotSeqs,
    updated_ms: updated,
    codec: { header: n.header, payloads: Object.fromEntries(n.payloads), timestamp: n.timestamp },
    newest: records.slice(first - 1),
  });
  return { ops: [...state, ...history], historyFrom: state.length };
}

/** Whether a snapshot's ops are a state part (its last op says so). */
export function isCompacted(ops: readonly unknown[]): boolean {
  return (ops[ops.length - 1] as { op?: unknown } | undefined)?.op === 'compacted';
}

/**
 * Reads a snapshot's state part (`raw`: its ops decoded in place against `codec`, fresh)
 * and sets up reading its history (`history`, null: none written). Returns the commit of the run's
 * other ops, the compacted history for the run model, and the codec change after both. Throws
 * AgentCheckpointCorruptionError when the state part does not fit together.
 */
export function readCompacted(
  raw: RawCommit,
  history: (() => unknown[]) | null,
  codec: Codec,
  meta: RunMeta,
  file: string,
  runId: string,
): { body: CommitBody; delta: CodecDelta; history: CompactedHistory } {
  const bad = (why: string) => new AgentCheckpointCorruptionError(`${file} is corrupt: ${why}`, runId, file);
  const ops: unknown[] = [];
  const tailOps: unknown[] = [];
  const last = raw.ops.length - 1;
  for (let i = 0; i < last; i++) {
    const op = raw.ops[i] as { op?: unknown };
    (op?.op === 'tails' ? tailOps : ops).push(op);
  }
  // The fast path first: zod's first parse in a process compiles code of its own, and a resume is often that first.
  const c = parseFast(Compacted, raw.ops[last]);
  if (!c.success) throw bad(`its compacted state is invalid (${c.error.issues[0]?.message ?? 'invalid'})`);
  const { body, delta } = decodeCommit({ ...raw, ops }, codec, meta, file, runId);
  const tails = new Map<number, ListTails>();
  for (const t of tailOps) {
    if (!fastValid(Tails)(t)) throw bad('a list tail in its state is invalid');
    const { seq, lists } = t as z.infer<typeof Tails>;
    try {
      decodeLists(lists, codec, delta);
    } catch (err) {
      throw bad((err as Error).message);
    }
    tails.set(seq, lists);
  }
  // (the codec's values as written, not zod's copies: a later frame is decoded against them exactly)
  const { count, snapshot_seqs, updated_ms, codec: after, newest } = raw.ops[last] as z.infer<typeof Compacted>;
  delta.header = after.header;
  delta.timestamp = after.timestamp;
  for (const [phase, payload] of Object.entries(after.payloads))
    delta.payloads.set(phase, payload as Record<string, unknown>);
  const read = (): RecordOp[] => {
    const ops = history ? history() : [];
    for (const op of ops) {
      const r = op as { op?: unknown; record?: { seq?: unknown }; lists?: unknown };
      if (r?.op !== 'record') throw new Error('its history holds an op that is not a record');
      const t = typeof r.record?.seq === 'number' ? tails.get(r.record.seq) : undefined;
      if (t) r.lists = t;
    }
    // (the tails are decoded already: only each record's own differences are decoded here)
    decodeOps(ops, newCodec(), meta);
    const h = { run_id: raw.run_id, first: raw.first, last: raw.last, ops };
    if (!parseFast(StoredCommitBody, h).success) throw new Error('its history does not match its schema');
    return ops as RecordOp[];
  };
  return {
    body,
    delta,
    history: { count, tails, newest, snapshotSeqs: snapshot_seqs, updatedMs: updated_ms, read },
  };
}
