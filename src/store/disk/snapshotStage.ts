// A compaction's snapshot.json, written and checked before it replaces anything (runLog.ts): the whole
// log encoded as one commit (its state first, its history after: compacted.ts), staged in a temp file
// (fsync'd), then read back and decoded in full into a run, so a snapshot that would not load never
// takes the place of the log it was made from.
import { advance, encodeOps, newCodec, type Codec } from './codec';
import { decodeCommit, type RawCommit, rel } from './commit';
import { compactedOps, isCompacted, readCompacted } from './compacted';
import { stageDurably } from './durableFile';
import type { FsLayer } from './fsLayer';
import { decodeSnapshot, encodeSnapshot } from './snapshotFile';
import { RunModel } from '../core/runModel';
import type { CommitOp } from '../core/storedSchema';
import type { RunMeta } from '../api/schema';

export interface StagedSnapshot {
  /** The temp file holding it (publish() renames it over snapshot.json). */
  tmp: string;
  /** The codec a load has after reading it: what commits after it are encoded against. */
  codec: Codec;
}

/** `ops` (the run as of commit `last`) as snapshot.json's bytes, staged beside `file` and verified. */
export async function stageSnapshot(
  fsl: FsLayer,
  file: string,
  runId: string,
  meta: RunMeta,
  ops: readonly CommitOp[],
  last: number,
  end?: unknown,
): Promise<StagedSnapshot> {
  const enc = encodeOps(ops, newCodec(), meta);
  const split = compactedOps(ops, enc);
  const body: RawCommit = { run_id: runId, first: 1, last, meta, witnessed: true, ops: split.ops };
  const tmp = await stageDurably(fsl, file, await encodeSnapshot(body, undefined, end, split.historyFrom));
  try {
    await verify(fsl, tmp, runId, meta, ops);
  } catch (err) {
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  }
  return { tmp, codec: advance(newCodec(), enc.next) }; // exactly what a load computes after the snapshot
}

/**
 * What landed, read back before anything is replaced: the spare's checksums, the plain copy decoded
 * in full into a run (its history read too: every record, checked against the run).
 */
async function verify(
  fsl: FsLayer,
  tmp: string,
  runId: string,
  meta: RunMeta,
  ops: readonly CommitOp[],
): Promise<void> {
  const snapRel = rel(runId, 'snapshot.json');
  const check = decodeSnapshot(await fsl.readFile(tmp), snapRel, runId);
  if (check.damaged) throw new Error(`${snapRel} did not read back whole: ${check.damaged}`);
  const back = isCompacted(check.raw.ops)
    ? readCompacted(check.raw, check.history, newCodec(), meta, snapRel, runId)
    : { ...decodeCommit(check.raw, newCodec(), meta, snapRel, runId), history: null };
  const model = new RunModel(meta);
  model.check(back.body.ops, true);
  model.apply(back.body.ops);
  if (back.history) model.adoptCompacted(back.history, snapRel);
  const records = ops.reduce((n, o) => n + (o.op === 'record' ? 1 : 0), 0);
  if (model.records.length !== records)
    throw new Error(`${snapRel} did not read back whole: it holds ${model.records.length} of ${records} records`);
}
