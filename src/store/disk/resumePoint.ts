// A run's resume point, `runs/<id>/resume.json` (docs/format.md): what the run holds after one of its
// commits — enough to go on — and where in its newest segment the commits after it begin. A resume
// reads it and the segment from there on, not the snapshot and the frames before: what a long run
// holds of its history (older records, the messages a condense summarised, the calls of earlier
// steps) stays on disk until something asks for it, and is read whole then (RunModel.becomeWhole).
//
// It is a cache, as the index's head is: written after the commit it describes is durable (temp file,
// rename), replaced by the next, and used only while it fits the files — its segment the newest, the
// frames after it whole and following on, the witness claiming no more than they hold. Anything else
// and the run is read whole, as without it, which judges what is wrong. The commits after a point
// are encoded without reference to a call's record or output from before it (RunLog.markPoint), so
// they decode from the point alone; a reader of the whole log decodes them as it always did.
//
// Frames before the point are not checked when a run resumes from it: damage there is found when the
// run is next read whole (a view of its history, its next compaction), and reported then.
import path from 'node:path';
import { isJsonObject } from '../../common/json';
import { RunMeta } from '../api/schema';
import type { LoadResult, LoadSink } from '../core/engine';
import { parseFast } from '../core/fastValid';
import type { PointParts } from '../core/runModel';
import { advance, type Codec } from './codec';
import { decodeCommit, isRawCommit, rel, type LoadCtx } from './commit';
import { replaceUnsynced } from './durableFile';
import { encodeFrame, readFrame } from './frame';
import { isMissing } from './fsLayer';
import type { SegmentTail } from './load';
import type { RunLogState } from './runLogState';
import { parseSegment, parseSegmentNames, witnessAreaAt } from './segment';
import { readWitnessArea, readWitnessFile, WITNESS_AREA, WITNESS_FILE, type TailWitness } from './witness';

export const RESUME_FILE = 'resume.json';
/** What is read first of the segment for its header and witness area (a longer header: to its length). */
const HEAD_BYTES = 16 * 1024;
const RESUME_VERSION = 1;

/** Where a point stands in the log, and the codec the commits after it were encoded against. */
export interface PointPosition {
  /** The segment the commits after the point are in, and the commit it starts with. */
  segment: string;
  first: number;
  /** Byte offset of the first commit frame after the point. */
  offset: number;
  /** That commit's number. */
  next: number;
  /** Commits the snapshot covers (the segment follows it). */
  covered: number;
  /** Where the segment's commit frames no copy holds began (segmentCopy.ts). */
  copiedTo: number;
  codec: { header: Record<string, unknown> | null; payloads: Record<string, unknown>; timestamp: number | null };
}

interface PointFile extends PointPosition {
  resume: number;
  run_id: string;
  meta: RunMeta;
  parts: PointParts;
}

/** The point file's bytes: one checksummed frame (frame.ts). */
export function encodePoint(runId: string, meta: RunMeta, pos: PointPosition, parts: PointParts): Buffer {
  return encodeFrame({ resume: RESUME_VERSION, run_id: runId, meta, ...pos, parts } satisfies PointFile);
}

/**
 * Written as the index's head is (temp file, rename), without fsync: a cache. After a power loss it
 * may be missing, short or stale — a short one fails its checksum, a stale one describes a prefix of
 * the log, which its frames after it still follow — and the run is then read whole.
 */
export async function writePoint(ctx: LoadCtx, runId: string, bytes: Buffer): Promise<void> {
  await replaceUnsynced(ctx.fsl, path.join(ctx.root, rel(runId, RESUME_FILE)), bytes);
}

const nat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function decodePoint(buf: Buffer, runId: string): PointFile | null {
  const r = readFrame(buf, 0);
  if (!r.ok || r.frame.end !== buf.length) return null;
  const v = r.frame.value as Partial<PointFile> | null;
  if (!isJsonObject(v) || v.resume !== RESUME_VERSION || v.run_id !== runId) return null;
  const meta = parseFast(RunMeta, v.meta);
  if (!meta.success || meta.data.run_id !== runId) return null;
  const c = v.codec;
  if (
    typeof v.segment !== 'string' ||
    ![v.first, v.offset, v.next, v.covered, v.copiedTo].every(nat) ||
    !isJsonObject(c) ||
    !isJsonObject(c.payloads) ||
    !(c.header === null || isJsonObject(c.header)) ||
    !(c.timestamp === null || typeof c.timestamp === 'number') ||
    !isJsonObject(v.parts)
  )
    return null;
  return { ...(v as PointFile), meta: meta.data };
}

/** What loadFromPoint gives the engine: the log's state to append after, and the load's result. */
export interface PointLoad {
  state: RunLogState;
  result: LoadResult;
  /** The point read: its segment, where it stands, its file's size. */
  point: { segment: string; offset: number; bytes: number };
}

/** Receives a run from its resume point: `point` builds the run, then `commit` each commit after it. */
export interface PointSink extends LoadSink {
  point(parts: PointParts, file: string): void;
}

/**
 * The run from its resume point and the commits after it, or null when the point does not fit the
 * files (none, damaged, superseded by a compaction, frames after it that do not check out or follow
 * on, a witness or the index counting more commits than there are): the run is then read whole.
 * Nothing is changed on disk. Throws only what reading the files throws.
 */
export async function loadFromPoint(
  ctx: LoadCtx,
  runId: string,
  sink: PointSink,
  expectCommits: number,
): Promise<PointLoad | null> {
  const dir = path.join(ctx.root, 'runs', runId);
  const read = async (name: string, from = 0, length?: number): Promise<Buffer | null> => {
    try {
      return await ctx.fsl.readFrom(path.join(dir, name), from, length);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  };
  const buf = await read(RESUME_FILE);
  const p = buf && decodePoint(buf, runId);
  if (!p) return null;
  const names = await ctx.fsl.readdir(dir);
  const newest = parseSegmentNames(names).at(-1);
  if (
    newest?.name !== p.segment ||
    newest.first !== p.first ||
    p.covered !== p.first - 1 ||
    p.covered > 0 !== names.some((n) => n === 'snapshot.json') ||
    p.next < p.first ||
    p.offset < 1
  )
    return null;
  // The segment's head (its header frame and witness area), then its frames after the point.
  let head = await read(p.segment, 0, Math.min(p.offset, HEAD_BYTES));
  // A header longer than that (a long task in its meta): its length says how much to read.
  const len = head && /^(\d{1,12})\t/.exec(head.toString('latin1', 0, 13));
  const need = len ? len[1]!.length + 10 + Number(len[1]) + 1 + WITNESS_AREA : 0;
  if (head && need > head.length && need <= p.offset) head = await read(p.segment, 0, need);
  const witnessAt = head && witnessAreaAt(head);
  if (!head || witnessAt == null || witnessAt + WITNESS_AREA > Math.min(head.length, p.offset)) return null;
  const after = await read(p.segment, p.offset);
  if (!after) return null;
  const parsed = parseSegment(after, { runId, headless: true });
  if (parsed.stop || parsed.corrected.length > 0) return null; // a torn tail or damage: the whole read judges it
  const file = rel(runId, p.segment);
  const codec: Codec = {
    outputs: new Map(),
    effects: new Map(),
    header: p.codec.header,
    payloads: new Map(Object.entries(p.codec.payloads) as [string, Readonly<Record<string, unknown>>][]),
    timestamp: p.codec.timestamp,
  };
  let next = p.next;
  try {
    sink.meta(p.meta);
    sink.point(p.parts, rel(runId, RESUME_FILE));
    for (const f of parsed.frames) {
      const raw = f.value;
      if (!isRawCommit(raw) || raw.first !== next || raw.last !== next || raw.run_id !== runId) return null;
      const d = decodeCommit(raw, codec, p.meta, file, runId);
      sink.commit(d.body, file);
      advance(codec, d.delta);
      next++;
    }
  } catch {
    return null; // (the caller drops what the sink built)
  }
  const commits = next - 1;
  // The witnesses: neither may claim a commit the log no longer holds (the whole read reports that loss).
  const wf = readWitnessFile(await read(WITNESS_FILE), runId);
  const area = readWitnessArea(head, witnessAt);
  if (wf.read.kind === 'bad' || (wf.read.kind === 'ok' && wf.read.damaged) || area.kind === 'bad') return null;
  const seen = [wf.read, area].flatMap((w) => (w.kind === 'ok' ? [w.witness] : []));
  if (seen.some((w) => w.commits > commits) || expectCommits > commits) return null;
  const witness: TailWitness | null = seen.reduce<TailWitness | null>(
    (a, w) => (a === null || w.commits > a.commits ? w : a),
    null,
  );
  const tail: SegmentTail = {
    name: p.segment,
    first: p.first,
    size: p.offset + parsed.validEnd,
    witnessAt,
    copiedTo: parsed.copies.length > 0 ? p.offset + parsed.copiedTo : p.copiedTo,
    allocated: p.offset + after.length,
  };
  return {
    state: {
      next,
      codec,
      meta: p.meta,
      covered: p.covered,
      tail,
      compactFirst: false,
      witness,
      witnessAt: wf.read.kind === 'ok' ? wf.areaAt : null,
    },
    result: { report: null, commits, witness, notices: [] },
    point: { segment: p.segment, offset: p.offset, bytes: buf.length },
  };
}
