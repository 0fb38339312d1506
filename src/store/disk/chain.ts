// Recovery reads before it judges: a run's segments parsed (one flipped bit corrected, damage its copies
// mend rebuilt in memory: segmentCopy.ts) and its commits applied in order — the snapshot's, then each
// segment's from the next commit on — until the first that does not check out or does not fit. Where
// that was, and what the files still show past it, go to the judgement (damage.ts). No file is changed.
import { SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import type { LoadSink } from '../core/engine';
import { parseFast } from '../core/fastValid';
import { advance, newCodec, peekBody, peekCalls, type Codec } from './codec';
import { decodeCommit, emptyPeek, isRawCommit, peekInto, rel, Survived, type Peeked, type RawCommit } from './commit';
import { isCompacted, readCompacted } from './compacted';
import { frameKey, scanFrames, type Frame } from './frame';
import { isCopyAt, parseSegment, SEGMENT_VERSION, SegmentHeader, type ParsedSegment } from './segment';
import { damageIn, rebuildSegment } from './segmentCopy';
import type { ReadSnapshot } from './snapshotFile';
import type { ChainStop } from './damage';

export interface SegmentFile {
  name: string;
  file: string;
  first: number;
  buf: Buffer;
  parsed: ParsedSegment;
  /** The header's complaint, or null when the header is this run's. */
  headerBad: string | null;
  header: SegmentHeader | null;
  /** The file had a damaged frame and was rebuilt from what is still whole: `buf` and `parsed` are that. */
  rebuilt: { reason: string } | null;
}

/** Where the run's log continues: the segment the next commit is appended to. */
export interface SegmentTail {
  name: string;
  first: number;
  /** Bytes of valid frames: the next frame goes here. */
  size: number;
  /** Where its witness area starts. */
  witnessAt: number | null;
  /** Where the commit frames no copy holds begin (segmentCopy.ts): a copy is written when the run is let go. */
  copiedTo: number;
  /**
   * The file's length as last known: from `size` to here it holds zeros (room written ahead, runLog.ts
   * reserve), so an append there changes no size and no block. A hint only: an append past it extends
   * the file, as any append does.
   */
  allocated: number;
}

/** A segment read and checked. A segment of another version is refused (SchemaVersionError), never taken for damage. */
export function readSegmentFile(runId: string, name: string, first: number, buf: Buffer): SegmentFile {
  const file = rel(runId, name);
  let parsed = parseSegment(buf, { runId });
  let rebuilt: SegmentFile['rebuilt'] = null;
  const damage = damageIn(parsed);
  const fix = damage && rebuildSegment(buf, parsed, runId, damage.at);
  if (fix) {
    rebuilt = { reason: `${file} is corrupt at byte ${damage.at}: ${damage.reason}` };
    buf = fix.buf;
    parsed = fix.parsed;
  }
  const version = (parsed.frames[0]?.value as { segment?: unknown } | undefined)?.segment;
  if (typeof version === 'number' && version !== SEGMENT_VERSION)
    throw new SchemaVersionError(file, version, SEGMENT_VERSION);
  // (the header frame's value is this file's alone: the fast path's yes makes it the header)
  const h = parsed.frames[0] ? parseFast(SegmentHeader, parsed.frames[0].value) : null;
  let headerBad: string | null = null;
  if (!h) headerBad = parsed.stop ? `its header frame is bad (${parsed.stop.reason})` : 'it has no header frame';
  else if (!h.success) headerBad = 'its header frame is not a segment header';
  else if (h.data.run_id !== runId || h.data.meta.run_id !== runId) headerBad = `it belongs to run ${h.data.run_id}`;
  else if (h.data.first !== first)
    headerBad = `its header says it starts at commit ${h.data.first}, its name at ${first}`;
  return { name, file, first, buf, parsed, headerBad, header: h?.success && !headerBad ? h.data : null, rebuilt };
}

export interface Stop extends ChainStop {
  seg: SegmentFile | null;
}

export interface Chain {
  next: number;
  codec: Codec;
  survived: Survived;
  /** Commits the snapshot covers (0: none). */
  covered: number;
  stop: Stop | null;
  tail: SegmentTail | null;
  used: Set<SegmentFile>;
  /** Segments a later one supersedes (not read; retired by the owner). */
  superseded: Set<SegmentFile>;
  /** The snapshot could not be applied, and why (null: none, or it was). */
  snapBad: string | null;
}

/** Applies the snapshot (if any, and readable) and then each segment's commits through `sink`, in order. */
export function applyChain(
  runId: string,
  meta: RunMeta,
  sink: LoadSink,
  snap: { file: string; read: ReadSnapshot | Error | null },
  segs: SegmentFile[],
): Chain {
  const c: Chain = {
    next: 1,
    codec: newCodec(),
    survived: new Survived(),
    covered: 0,
    stop: null,
    tail: null,
    used: new Set(),
    superseded: new Set(),
    snapBad: snap.read instanceof Error ? snap.read.message : null,
  };
  const apply = (raw: RawCommit, file: string, history?: (() => unknown[]) | null) => {
    // A snapshot's state part now, its older records when first asked for (compacted.ts).
    const d =
      history !== undefined && isCompacted(raw.ops)
        ? readCompacted(raw, history, c.codec, meta, file, runId)
        : { ...decodeCommit(raw, c.codec, meta, file, runId), history: null };
    sink.commit(d.body, file);
    if (d.history) sink.compacted(d.history, file);
    advance(c.codec, d.delta);
    c.survived.add(d.body.ops);
    const newest = d.history?.newest.at(-1);
    if (newest) {
      c.survived.seq = newest.seq;
      c.survived.step = newest.step;
    }
    c.next = raw.last + 1;
  };
  if (snap.read && !(snap.read instanceof Error)) {
    try {
      apply(snap.read.raw, snap.file, snap.read.history);
      c.covered = snap.read.raw.last;
    } catch (err) {
      c.snapBad = (err as Error).message;
    }
  }
  for (const [i, seg] of segs.entries()) {
    // A later segment that starts where the log stands holds everything after it (a compaction beside
    // the appends renamed it into place: besideCompaction.ts); this one's commits past the snapshot
    // were encoded against the log before it, so they are not read.
    if (segs.slice(i + 1).some((later) => later.headerBad === null && later.first <= c.next)) {
      c.superseded.add(seg);
      continue;
    }
    if (seg.first > c.next) {
      // Commits before this segment are missing: the snapshot that held them (bad or gone), or a segment.
      const gone = c.next === 1;
      const reason =
        c.snapBad ??
        (gone
          ? `${snap.file} is missing: ${seg.file} starts at commit ${seg.first}`
          : `${seg.file} starts at commit ${seg.first}, but the log before it ends at ${c.next - 1}`);
      c.stop = stopAt(gone ? snap.file : seg.file, reason, null, null, 0);
      break;
    }
    if (seg.headerBad) {
      // No header of this run: a last segment with nothing valid in it may be one being created (or destroyed).
      const headless = i === segs.length - 1 && seg.parsed.frames.length === 0 && (seg.parsed.stop?.torn ?? true);
      const reason = headless
        ? `${seg.file} has no complete header (${seg.buf.length} bytes)`
        : `${seg.file} is corrupt: ${seg.headerBad}`;
      c.stop = { ...stopAt(seg.file, reason, seg, i, 0), torn: headless, headless };
      break;
    }
    c.used.add(seg);
    c.stop = applyFrames(seg, i, runId, () => c.next, apply);
    const end = c.stop ? c.stop.frameAt : seg.parsed.validEnd;
    c.tail = {
      name: seg.name,
      first: seg.first,
      size: end,
      witnessAt: seg.parsed.witnessAt,
      copiedTo: Math.min(seg.parsed.copiedTo, end),
      // (a torn tail is cut off at its start when the owner loads the run)
      allocated: c.stop ? c.stop.frameAt : seg.buf.length,
    };
    if (c.stop) {
      c.stop.torn &&= i === segs.length - 1;
      break;
    }
  }
  if (!c.stop && c.snapBad && segs.length === 0) c.stop = stopAt(snap.file, c.snapBad, null, null, 0);
  return c;
}

function stopAt(file: string, reason: string, seg: SegmentFile | null, segment: number | null, frameAt: number): Stop {
  return { file, reason, seg, segment, frameAt, torn: false, headless: false, copy: false };
}

/** Applies a segment's commit frames from commit `next()`; returns where it stopped on something bad. */
function applyFrames(
  seg: SegmentFile,
  index: number,
  runId: string,
  next: () => number,
  apply: (raw: RawCommit, file: string) => void,
): Stop | null {
  for (const f of seg.parsed.frames.slice(1)) {
    const raw = f.value;
    try {
      if (!isRawCommit(raw) || raw.run_id !== runId || raw.first !== raw.last)
        throw new Error(`the frame at byte ${f.start} is not a commit of this run`);
      if (raw.last < next()) continue; // already in the snapshot (a compaction that had not yet retired this segment)
      if (raw.first !== next())
        throw new Error(`the frame at byte ${f.start} holds commit ${raw.first} where ${next()} was expected`);
      apply(raw, seg.file);
    } catch (err) {
      return stopAt(seg.file, `${seg.file} is corrupt: ${(err as Error).message}`, seg, index, f.start);
    }
  }
  const s = seg.parsed.stop;
  if (!s) return null;
  const reason = `${seg.file} ${s.torn ? 'ends in a torn frame' : 'is corrupt'} at byte ${s.offset}: ${s.reason}`;
  return { ...stopAt(seg.file, reason, seg, index, s.offset), torn: s.torn, copy: isCopyAt(seg.buf, s.offset) };
}

/** The run's meta: the snapshot's, a segment header's, or — headers damaged — a segment's first commit's. */
export function metaOf(snap: ReadSnapshot | Error | null, segs: SegmentFile[], runId: string): RunMeta | null {
  if (snap && !(snap instanceof Error) && snap.raw.meta?.run_id === runId) return snap.raw.meta;
  const header = segs.find((s) => s.header)?.header?.meta;
  if (header) return header;
  for (const s of segs) {
    for (const f of framesAfter(s, 0, runId)) {
      const m = isRawCommit(f.value) && f.value.run_id === runId ? RunMeta.safeParse(f.value.meta) : null;
      if (m?.success && m.data.run_id === runId) return m.data;
    }
  }
  return null;
}

/** The frames that still check out in a segment after byte `from` (past a damaged one). */
function framesAfter(s: SegmentFile, from: number, runId: string): Frame[] {
  // Either checksum (the run's, a plain one): the header saying which may be the damaged part.
  return scanFrames(s.buf, from, { key: frameKey(runId) });
}

/** The highest commit number a segment's frames claim. */
export function lastCommitIn(s: SegmentFile): number {
  let n = 0;
  for (const f of s.parsed.frames) if (isRawCommit(f.value)) n = Math.max(n, f.value.last);
  return n;
}

/** What the lost frames still show: those after the stop in its segment, and every later segment's. */
export function peekLost(chain: Chain, later: SegmentFile[], runId: string): Peeked {
  const out = emptyPeek();
  const calls = peekCalls(chain.codec);
  const stop = chain.stop;
  const lost = [
    ...(stop?.seg ? framesAfter(stop.seg, stop.frameAt + 1, runId) : []),
    ...later.flatMap((s) => s.parsed.frames),
  ];
  for (const f of lost) if (isRawCommit(f.value)) peekInto(out, peekBody(f.value, runId, calls));
  if (stop || lost.length === 0) out.unreadable++; // the frame that failed, or frames cut off at a boundary: unknown
  return out;
}
