// A compaction's snapshot.json, written and checked before it replaces anything (runLog.ts): the whole
// log encoded as one commit (its state first, its history after: compacted.ts), staged in a temp file
// (fsync'd), then read back and decoded in full into a run, so a snapshot that would not load never
// takes the place of the log it was made from.
//
// Encoding and checking a long run is seconds of work, all of it CPU: with its log on the real file
// system and past `offThreadFrom` bytes, both are done in a worker thread (snapshotWorker.ts) that reads
// the log's files as a load would, so the host's thread keeps serving the run's steps meanwhile. The
// temp file is still written and renamed through the caller's file layer.
import { advance, encodeOps, newCodec, type Codec, type CodecDelta } from './codec';
import { decodeCommit, type RawCommit, rel } from './commit';
import { compactedOps, isCompacted, readCompacted } from './compacted';
import { stageDurably } from './durableFile';
import { nodeFs, type FsLayer } from './fsLayer';
import { snapshotInWorker, type WorkerJob } from './snapshotOffThread';
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

/** Where the log's files are, for a compaction in a worker (null: in this thread). */
export type OffThread = Pick<WorkerJob, 'files' | 'from' | 'background'>;

/** `ops` (the run as of commit `last`) as snapshot.json's bytes, staged beside `file` and verified. */
export async function stageSnapshot(
  fsl: FsLayer,
  file: string,
  runId: string,
  meta: RunMeta,
  ops: readonly CommitOp[],
  last: number,
  end?: unknown,
  offThread?: OffThread | null,
): Promise<StagedSnapshot> {
  const records = recordCount(ops);
  // The worker reads the files itself: only when they are the real file system's, unchanged by the layer.
  if (offThread && fsl.readFile === nodeFs.readFile) {
    const staged = await snapshotInWorker(
      { runId, meta, last, records, end, ...offThread },
      {
        stage: (bytes) => stageDurably(fsl, file, bytes),
        unlink: (tmp) => fsl.unlink(tmp),
        check: async (tmp) => verifyStaged(await fsl.readFile(tmp), runId, meta, records),
      },
    );
    if (staged) return staged;
  }
  const enc = await encodeStaged(runId, meta, ops, last, end);
  const tmp = await stageDurably(fsl, file, enc.bytes);
  try {
    verifyStaged(await fsl.readFile(tmp), runId, meta, records);
  } catch (err) {
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  }
  return { tmp, codec: advance(newCodec(), enc.next) }; // exactly what a load computes after the snapshot
}

/** The records among `ops`. */
export function recordCount(ops: readonly CommitOp[]): number {
  let n = 0;
  for (const o of ops) if (o.op === 'record') n++;
  return n;
}

/** The snapshot's bytes, and the codec delta a load of them computes. */
export async function encodeStaged(
  runId: string,
  meta: RunMeta,
  ops: readonly CommitOp[],
  last: number,
  end?: unknown,
): Promise<{ bytes: Buffer; next: CodecDelta }> {
  const enc = encodeOps(ops, newCodec(), meta);
  const split = compactedOps(ops, enc);
  const body: RawCommit = { run_id: runId, first: 1, last, meta, witnessed: true, ops: split.ops };
  return { bytes: await encodeSnapshot(body, undefined, end, split.historyFrom), next: enc.next };
}

/**
 * What landed, read back before anything is replaced: the spare's checksums, the plain copy decoded
 * in full into a run (its history read too: every record, checked against the run), `records` of them.
 */
export function verifyStaged(buf: Buffer, runId: string, meta: RunMeta, records: number): void {
  const snapRel = rel(runId, 'snapshot.json');
  const check = decodeSnapshot(buf, snapRel, runId);
  if (check.damaged) throw new Error(`${snapRel} did not read back whole: ${check.damaged}`);
  const back = isCompacted(check.raw.ops)
    ? readCompacted(check.raw, check.history, newCodec(), meta, snapRel, runId)
    : { ...decodeCommit(check.raw, newCodec(), meta, snapRel, runId), history: null };
  const model = new RunModel(meta);
  model.check(back.body.ops, true);
  model.apply(back.body.ops);
  if (back.history) model.adoptCompacted(back.history, snapRel);
  if (model.records.length !== records)
    throw new Error(`${snapRel} did not read back whole: it holds ${model.records.length} of ${records} records`);
}
