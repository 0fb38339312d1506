// Loading a run from disk. Version 2 (segment.ts): snapshot.json (the compacted commits 1..N, if the
// run was ever compacted), then the frames of its segment file(s) from N+1, in order, no gaps. The
// chain stops at the first frame that does not check out (after one flipped bit in a frame is
// corrected from its checksum: reported, nothing lost, written back by the owner):
//  - a torn tail (an append cut short by a crash, nothing valid after it) was never acknowledged
//    unless the run's witness says so: it is cut off and noted, not reported as corruption;
//  - anything else — a bad frame with valid ones after it, a torn tail the witness had counted, a
//    segment or a snapshot that is bad or missing — lost acknowledged data: reported, the segment
//    copied to quarantine (the bad file moved there), the run falls back to the last good commit.
// Version-1 runs (one file per commit) are read by v1.ts.
import path from 'node:path';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import { corruptionReport, type CorruptionReport } from '../api/types';
import type { LoadOptions, LoadSink, Notice } from '../core/engine';
import { advance, newCodec, peekBody, peekCalls, type Codec } from './codec';
import {
  decodeCommit,
  emptyPeek,
  isRawCommit,
  lostTailReport,
  mergeReports,
  peekInto,
  RawCommit,
  rel,
  Survived,
  witnessOf,
  type LoadCtx,
  witnessFileSource,
  type LoadedFiles,
  type Peeked,
  type WitnessSource,
} from './commit';
import { DurableJsonFile, writeDurably } from './durableFile';
import { isMissing, type FsLayer } from './fsLayer';
import type { Quarantined } from './quarantine';
import {
  frameKey,
  isCopyAt,
  parseSegment,
  parseSegmentNames,
  scanFrames,
  SEGMENT_VERSION,
  SegmentHeader,
  segmentName,
  witnessAreaAt,
  type Frame,
  type ParsedSegment,
} from './segment';
import { damageIn, rebuildSegment } from './segmentCopy';
import { isCompacted, readCompacted } from './compacted';
import { parseFast } from '../core/fastValid';
import { loadV1 } from './v1';
import { decodeSnapshot, isFramedSnapshot, SNAPSHOT_VERSION } from './snapshotFile';
import { readWitnessArea, readWitnessFile, WITNESS_AREA, WITNESS_FILE, type WitnessRead } from './witness';

export const SNAPSHOT_FILE = 'snapshot.json';

/** Where the run's log continues: the segment the next commit is appended to. */
export interface SegmentTail {
  name: string;
  first: number;
  /** Bytes of valid frames: the next frame goes here. */
  size: number;
  /** Its header's version: one older than SEGMENT_VERSION is never appended to (the run is compacted first). */
  version: number;
  /** Where its witness area starts (version 4 on), or null. */
  witnessAt: number | null;
  /** Where the commit frames no copy holds begin (segmentCopy.ts): a copy is written when the run is let go. */
  copiedTo: number;
  /**
   * The file's length as last known: from `size` to here it holds zeros (version 7: room written
   * ahead, runLog.ts reserve), so an append there changes no size and no block. A hint only: an
   * append past it extends the file, as any append does.
   */
  allocated: number;
}

export interface LoadedRun extends LoadedFiles {
  format: 1 | 2;
  /** Version 2: the segment to append to (null: none yet; the first write creates one). */
  tail: SegmentTail | null;
  /**
   * The snapshot is in version 2's form, in version 3's encoding or was read from its second copy, or a
   * segment is in version 2's encoding: the run is compacted before its next write.
   */
  compactFirst: boolean;
}

interface SegmentFile {
  name: string;
  first: number;
  buf: Buffer;
  parsed: ParsedSegment;
  /** The header's complaint, or null when the header is this run's. */
  headerBad: string | null;
  header: SegmentHeader | null;
  /**
   * The file had a damaged frame and was rebuilt from what is still whole (segmentCopy.ts): `buf` and
   * `parsed` are the rebuilt segment; `reason` what was wrong with the file.
   */
  rebuilt: { reason: string } | null;
}

export async function loadRunFiles(
  ctx: LoadCtx,
  runId: string,
  sink: LoadSink,
  opts: LoadOptions,
): Promise<LoadedRun | undefined> {
  const dir = path.join(ctx.root, 'runs', runId);
  let names: string[];
  try {
    names = await ctx.fsl.readdir(dir);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  const segNames = parseSegmentNames(names);
  if (segNames.length === 0 && !names.includes(SNAPSHOT_FILE)) {
    const v1 = names.includes('log') || names.includes('run.json') ? await loadV1(ctx, runId, sink, opts) : undefined;
    if (!v1 && (names.includes(WITNESS_FILE) || opts.expectCommits > 0)) await missingLog(ctx, runId, opts);
    return v1 && { ...v1, format: 1, tail: null, compactFirst: false };
  }
  return loadV2(ctx, runId, sink, opts, segNames);
}

/**
 * The run's folder holds no log file at all, though commits were acknowledged — its witness file (before
 * segment version 4) or the run index says so: its segment (and snapshot, if it was compacted) were
 * deleted. Said with the file that is missing, never "does not exist".
 */
async function missingLog(ctx: LoadCtx, runId: string, opts: LoadOptions): Promise<never> {
  const w = await readWitnessFile(ctx.fsl, path.join(ctx.root, 'runs', runId));
  const file = rel(runId, segmentName(1));
  const says =
    w.kind === 'ok'
      ? `; its witness says ${w.witness.commits} commit(s) had been written.`
      : opts.expectCommits > 0
        ? `; the run index says ${opts.expectCommits} commit(s) had been written.`
        : '.';
  throw new AgentCheckpointCorruptionError(
    `Run ${runId} cannot be opened: ${file} is missing (and no ${SNAPSHOT_FILE} holds its commits)${says}`,
    runId,
    file,
  );
}

/**
 * The witness of a run from the head of its newest segment (version 4 on: one small read), or null
 * when that segment has none (an older version: the witness file holds it) or cannot be read.
 */
export async function readSegmentWitness(fsl: FsLayer, runDir: string): Promise<WitnessRead | null> {
  const names = await fsl.readdir(runDir).catch(() => null);
  const newest = names && parseSegmentNames(names).at(-1);
  if (!newest) return null;
  const file = path.join(runDir, newest.name);
  let head = await fsl.readFrom(file, 0, HEAD_BYTES).catch(() => null);
  // A header longer than that (a long task in its meta): its length says how much to read.
  const len = head && /^(\d{1,12})\t/.exec(head.toString('latin1', 0, 13));
  const need = len ? len[1]!.length + 10 + Number(len[1]) + 1 + WITNESS_AREA : 0;
  if (head && need > head.length && head.length === HEAD_BYTES)
    head = await fsl.readFrom(file, 0, need).catch(() => null);
  const at = head ? witnessAreaAt(head) : null;
  return head && at !== null ? readWitnessArea(head, at) : null;
}

const HEAD_BYTES = 16 * 1024;

/** Where a run's witness is: the area of its newest segment with a good header, or (none of version 4) the witness file. */
async function witnessSource(ctx: LoadCtx, runId: string, segs: SegmentFile[]): Promise<WitnessSource> {
  const seg = [...segs].reverse().find((s) => s.header && s.parsed.witnessAt !== null);
  if (seg)
    return { read: readWitnessArea(seg.buf, seg.parsed.witnessAt!), file: rel(runId, seg.name), inSegment: true };
  return witnessFileSource(ctx, runId);
}

function readSegmentFile(runId: string, name: string, first: number, buf: Buffer): SegmentFile {
  let parsed = parseSegment(buf, { runId });
  let rebuilt: SegmentFile['rebuilt'] = null;
  const damage = damageIn(parsed);
  const fix = damage && rebuildSegment(buf, parsed, runId, damage.at);
  if (fix) {
    rebuilt = { reason: `${rel(runId, name)} is corrupt at byte ${damage.at}: ${damage.reason}` };
    buf = fix.buf;
    parsed = fix.parsed;
  }
  const version = (parsed.frames[0]?.value as { segment?: unknown } | undefined)?.segment;
  // A newer version's segment is not damage: refused, left untouched (as a newer envelope is).
  if (typeof version === 'number' && version > SEGMENT_VERSION)
    throw new SchemaVersionError(rel(runId, name), version, SEGMENT_VERSION);
  // (the header frame's value is this file's alone: the fast path's yes makes it the header)
  const h = parsed.frames[0] ? parseFast(SegmentHeader, parsed.frames[0].value) : null;
  let headerBad: string | null = null;
  if (!h) headerBad = parsed.stop ? `its header frame is bad (${parsed.stop.reason})` : 'it has no header frame';
  else if (!h.success) headerBad = 'its header frame is not a segment header';
  else if (h.data.run_id !== runId || h.data.meta.run_id !== runId) headerBad = `it belongs to run ${h.data.run_id}`;
  else if (h.data.first !== first)
    headerBad = `its header says it starts at commit ${h.data.first}, its name at ${first}`;
  return { name, first, buf, parsed, headerBad, header: h?.success && !headerBad ? h.data : null, rebuilt };
}

/**
 * A segment read whole after damage that lost nothing — one flipped bit per frame, corrected from the
 * checksum (segment.ts, correctOneBit), or damage a copy mends (segmentCopy.ts): said, as a disk that
 * damages data should be. The owner keeps a copy of the file as it was in quarantine and writes back
 * what was read (`writeBack`); `lost` says how nothing was.
 */
async function mendedReport(
  ctx: LoadCtx,
  runId: string,
  seg: SegmentFile,
  opts: LoadOptions,
): Promise<CorruptionReport> {
  const file = rel(runId, seg.name);
  const target = path.join(ctx.root, file);
  const c = seg.parsed.corrected;
  const { reason, lost, writeBack } = seg.rebuilt
    ? {
        reason: seg.rebuilt.reason,
        lost: 'every commit was read from a copy or a frame that is whole; the file is rewritten whole',
        // The rebuilt segment as a new file (temp file, rename): nothing of the damaged one is kept in place.
        writeBack: () => writeDurably(ctx.fsl, target, seg.buf, { mode: 'replace' }),
      }
    : {
        reason: `${file} is corrupt: ${c.length === 1 ? 'a frame' : `${c.length} frames`} failed the checksum by one flipped bit (${c.map((x) => `byte ${x.offset} bit ${x.bit}`).join(', ')})`,
        lost: "each flipped bit was found from its frame's checksum and corrected, and written back",
        writeBack: async () => {
          const fd = await ctx.fsl.openForUpdate(target);
          try {
            for (const x of c) await ctx.fsl.pwrite(fd, seg.buf.subarray(x.offset, x.offset + 1), x.offset);
            await ctx.fsl.fdatasync(fd);
          } finally {
            await ctx.fsl.close(fd);
          }
        },
      };
  let q: Quarantined | null = null;
  if (opts.repair) {
    q = await ctx.quarantineCopy(file, reason, runId);
    await writeBack();
  }
  return corruptionReport({
    run_id: runId,
    file,
    reason,
    quarantined: q ? [q] : [],
    lost: `nothing: ${lost}${opts.repair ? '' : ' (when the run is next resumed)'}`,
  });
}

/** Where the chain stopped on something bad (null: it ran to the end of what is there). */
interface Stop {
  file: string;
  reason: string;
  /** An append cut short at the very end of the last segment. */
  torn: boolean;
  /** The segment it stopped in (its good part stays in use), or null (a snapshot, a gap). */
  seg: SegmentFile | null;
  /** Byte offset in `seg` of the frame that failed (0 with a bad header). */
  frameAt: number;
}

async function loadV2(
  ctx: LoadCtx,
  runId: string,
  sink: LoadSink,
  opts: LoadOptions,
  segNames: { name: string; first: number }[],
): Promise<LoadedRun> {
  const reports: CorruptionReport[] = [];
  const notices: Notice[] = [];
  const segs: SegmentFile[] = [];
  for (const s of segNames)
    segs.push(readSegmentFile(runId, s.name, s.first, await ctx.fsl.readFile(path.join(ctx.root, rel(runId, s.name)))));
  const snapRel = rel(runId, SNAPSHOT_FILE);
  const snap = await readSnapshot(ctx, runId, snapRel);
  const meta = metaOf(snap, segs, runId) ?? (opts.knownMeta?.run_id === runId ? opts.knownMeta : null);
  if (!meta)
    throw new AgentCheckpointCorruptionError(
      `Run ${runId} cannot be opened: no segment header and no snapshot holds its meta.`,
      runId,
      segs[0] ? rel(runId, segs[0].name) : snapRel,
    );
  sink.meta(meta);

  for (const seg of segs)
    if (seg.rebuilt || seg.parsed.corrected.length > 0) reports.push(await mendedReport(ctx, runId, seg, opts));

  const codec = newCodec();
  const survived = new Survived();
  let p = 1;
  let covered = 0;
  let witnessed = false;
  const apply = (raw: RawCommit, file: string, snapshot?: { history: (() => unknown[]) | null }) => {
    // Version 7: the run's state now, its older records when first asked for (compacted.ts).
    const d =
      snapshot && isCompacted(raw.ops)
        ? readCompacted(raw, snapshot.history, codec, meta, file, runId)
        : { ...decodeCommit(raw, codec, meta, file, runId), history: null };
    sink.commit(d.body, file);
    if (d.history) sink.compacted(d.history, file);
    advance(codec, d.delta);
    survived.add(d.body.ops);
    const newest = d.history?.newest.at(-1);
    if (newest) {
      survived.seq = newest.seq;
      survived.step = newest.step;
    }
    witnessed ||= raw.witnessed === true;
    p = raw.last + 1;
  };
  let snapBad = snap instanceof Error ? snap.message : null;
  let compactFirst = false;
  if (snap && !(snap instanceof Error)) {
    try {
      apply(snap.raw, snapRel, snap);
      covered = snap.raw.last;
      // Converted on the next write: a snapshot in version 2's form or in version 3's encoding, or read from its spare copy.
      compactFirst = snap.legacy || snap.damaged !== null || snap.version < SNAPSHOT_VERSION;
      if (snap.damaged !== null) {
        // One copy (or part of it) was bad, the other held every frame: said, kept, rewritten whole.
        const q = opts.repair ? await ctx.quarantineCopy(snapRel, `${snapRel}: ${snap.damaged}`, runId) : null;
        reports.push(
          corruptionReport({
            run_id: runId,
            file: snapRel,
            reason: `${snapRel}: ${snap.damaged}`,
            quarantined: q ? [q] : [],
            lost: `nothing: every record was read from the copy that is whole; the file is rewritten ${opts.repair ? 'now' : 'when the run is next resumed'}`,
          }),
        );
      }
    } catch (err) {
      snapBad = (err as Error).message;
    }
  }
  let stop: Stop | null = null;
  let tail: SegmentTail | null = null;
  const used = new Set<SegmentFile>();
  for (const seg of segs) {
    const file = rel(runId, seg.name);
    if (seg.first > p) {
      // Commits before this segment are missing: the snapshot that held them (bad or gone), or a segment.
      const snapshotGone = p === 1;
      const reason =
        snapBad ??
        (snapshotGone
          ? `${snapRel} is missing: ${file} starts at commit ${seg.first}`
          : `${file} starts at commit ${seg.first}, but the log before it ends at ${p - 1}`);
      stop = { file: snapshotGone ? snapRel : file, reason, torn: false, seg: null, frameAt: 0 };
      break;
    }
    if (seg.headerBad) {
      // A segment being created when the process died: its header never (fully) reached the file.
      const unfinished =
        seg === segs[segs.length - 1] && seg.parsed.frames.length === 0 && (seg.parsed.stop?.torn ?? true);
      stop = {
        file,
        reason: unfinished
          ? `${file} was being created (${seg.buf.length} bytes, no complete header)`
          : `${file} is corrupt: ${seg.headerBad}`,
        torn: unfinished,
        seg,
        frameAt: 0,
      };
      break;
    }
    used.add(seg);
    stop = applyFrames(seg, file, runId, () => p, apply);
    tail = {
      name: seg.name,
      first: seg.first,
      size: stop ? stop.frameAt : seg.parsed.validEnd,
      version: seg.header?.segment ?? SEGMENT_VERSION,
      witnessAt: seg.parsed.witnessAt,
      copiedTo: Math.min(seg.parsed.copiedTo, stop ? stop.frameAt : seg.parsed.validEnd),
      // (a torn tail is cut off at its start when the owner loads the run)
      allocated: stop ? stop.frameAt : seg.buf.length,
    };
    if (stop) {
      stop.torn &&= seg === segs[segs.length - 1];
      break;
    }
  }
  if (!stop && snapBad && segs.length === 0)
    stop = { file: snapRel, reason: snapBad, torn: false, seg: null, frameAt: 0 };
  const src = await witnessSource(ctx, runId, segs);
  const { witness: wit, rewrite } = await witnessOf(ctx, runId, src, {
    repair: opts.repair,
    // A segment of version 4 always holds a witness: with commits written, an empty one is noted.
    witnessedCommits: witnessed || (src.inSegment && p > 1),
    reports,
    notices,
  });
  const expect = Math.max(opts.expectCommits, wit?.commits ?? 0);
  const later = segs.filter((s) => !used.has(s) && s !== stop?.seg);
  if (stop?.torn && expect < p) {
    // A crash mid-append: never acknowledged. Cut off (by the owner) and noted, not an alarm. Or the
    // copy frame a release appends (segmentCopy.ts), cut short or damaged: it held no commit.
    const copy = stop.seg !== null && !stop.seg.headerBad && isCopyAt(stop.seg.buf, stop.frameAt);
    notices.push({
      file: stop.file,
      message: copy
        ? `${stop.reason}: the copy frame at its end (no commit in it) is cut short or damaged${opts.repair ? ', cut off; the next release writes the copy again' : ''}`
        : `${stop.reason}: an append cut short by a crash (never acknowledged)${opts.repair ? ', cut off' : ''}`,
    });
    if (opts.repair && stop.seg?.headerBad) await ctx.fsl.unlink(path.join(ctx.root, stop.file));
    else if (opts.repair) await ctx.fsl.truncate(path.join(ctx.root, stop.file), stop.frameAt);
  } else if (stop || expect >= p || later.length > 0) {
    // No segment after the snapshot: the one that held the lost commits is missing, and said so.
    const file = stop?.file ?? rel(runId, tail ? tail.name : segmentName(p));
    const who = (wit?.commits ?? 0) >= expect ? "the run's witness" : 'the run index';
    const reason =
      stop?.reason ??
      (tail
        ? `${file} ends at commit ${p - 1}, but ${who} says ${expect} commits were written`
        : `${file} is missing: ${snapRel} ends at commit ${p - 1}, but ${who} says ${expect} commits were written`);
    const peeked = peekLostFrames(stop, later, runId, codec);
    const quarantined = opts.repair
      ? await quarantineLost(ctx, runId, { stop, later, snapRel: snapBad ? snapRel : null })
      : [];
    const onDisk = Math.max(p - 1, covered, ...segs.map(lastCommitIn));
    reports.push(lostTailReport({ runId, file, reason, quarantined, survived, witness: wit, onDisk, peeked }));
  } else if (snapBad) {
    // The segments still held every commit (a compaction that never retired them): nothing lost.
    const q = opts.repair ? await ctx.quarantine(snapRel, snapBad, runId) : null;
    reports.push(
      corruptionReport({
        run_id: runId,
        file: snapRel,
        reason: snapBad,
        quarantined: q ? [q] : [],
        lost: 'nothing: the segments still held every commit',
      }),
    );
  }
  if (opts.repair) await retireCovered(ctx, runId, segs, covered, tail);
  for (const r of reports) r.fell_back_to_seq ??= survived.seq > 0 ? survived.seq : null;
  return {
    // A damaged or missing witness is handed on as none, so the owner rewrites it whole.
    result: { report: mergeReports(reports), commits: p - 1, witness: rewrite ? null : wit, notices },
    next: p,
    codec,
    meta,
    covered,
    format: 2,
    tail,
    // A segment in an older encoding (version 2) is never appended to: the run is compacted first.
    compactFirst: compactFirst || (tail !== null && tail.version < SEGMENT_VERSION),
  };
}

/** The snapshot (version 3's framed file with its spare copy, or version 2's envelope); null: there is none. */
async function readSnapshot(
  ctx: LoadCtx,
  runId: string,
  snapRel: string,
): Promise<
  | { raw: RawCommit; history: (() => unknown[]) | null; legacy: boolean; damaged: string | null; version: number }
  | Error
  | null
> {
  const file = path.join(ctx.root, snapRel);
  let buf: Buffer;
  try {
    buf = await ctx.fsl.readFile(file);
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  try {
    if (isFramedSnapshot(buf)) return { ...decodeSnapshot(buf, snapRel, runId), legacy: false };
    const raw = new DurableJsonFile(ctx.fsl, file, 'commit', RawCommit, runId).parse(buf);
    if (raw.run_id !== runId || raw.first !== 1 || raw.last < 1)
      return new AgentCheckpointCorruptionError(
        `${snapRel} is corrupt: it holds commits ${raw.first}-${raw.last} of run ${raw.run_id}`,
        runId,
        snapRel,
      );
    return { raw, history: null, legacy: true, damaged: null, version: 2 };
  } catch (err) {
    if (err instanceof SchemaVersionError || !(err instanceof AgentCheckpointCorruptionError)) throw err;
    return err;
  }
}

/** Applies a segment's commit frames from commit `next()`; returns where it stopped on something bad. */
function applyFrames(
  seg: SegmentFile,
  file: string,
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
      apply(raw, file);
    } catch (err) {
      return { file, reason: `${file} is corrupt: ${(err as Error).message}`, torn: false, seg, frameAt: f.start };
    }
  }
  const s = seg.parsed.stop;
  return s
    ? {
        file,
        reason: `${file} ${s.torn ? 'ends in a torn frame' : 'is corrupt'} at byte ${s.offset}: ${s.reason}`,
        torn: s.torn,
        seg,
        frameAt: s.offset,
      }
    : null;
}

/** The run's meta: the snapshot's, a segment header's, or — headers damaged — a segment's first commit's. */
function metaOf(snap: { raw: RawCommit } | Error | null, segs: SegmentFile[], runId: string): RunMeta | null {
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
function lastCommitIn(s: SegmentFile): number {
  let n = 0;
  for (const f of s.parsed.frames) if (isRawCommit(f.value)) n = Math.max(n, f.value.last);
  return n;
}

/** What the lost frames still show: those after the stop in its segment, and every later segment's. */
function peekLostFrames(stop: Stop | null, later: SegmentFile[], runId: string, codec: Codec): Peeked {
  const out = emptyPeek();
  const calls = peekCalls(codec);
  const lost = [
    ...(stop?.seg ? framesAfter(stop.seg, stop.frameAt + 1, runId) : []),
    ...later.flatMap((s) => s.parsed.frames),
  ];
  for (const f of lost) if (isRawCommit(f.value)) peekInto(out, peekBody(f.value, runId, calls));
  if (stop || lost.length === 0) out.unreadable++; // the frame that failed, or frames cut off at a boundary: unknown
  return out;
}

/** The owner's repair: a segment with a bad frame is copied to quarantine and cut at its last good frame; other bad files move. */
async function quarantineLost(
  ctx: LoadCtx,
  runId: string,
  s: { stop: Stop | null; later: SegmentFile[]; snapRel: string | null },
): Promise<Quarantined[]> {
  const out: Quarantined[] = [];
  const keep = (q: Quarantined | null) => {
    if (q) out.push(q);
  };
  if (s.stop?.seg?.headerBad) keep(await ctx.quarantine(s.stop.file, s.stop.reason, runId));
  else if (s.stop?.seg) {
    keep(await ctx.quarantineCopy(s.stop.file, s.stop.reason, runId));
    await ctx.fsl.truncate(path.join(ctx.root, s.stop.file), s.stop.frameAt);
  }
  if (s.snapRel)
    keep(
      await ctx.quarantine(s.snapRel, s.stop?.file === s.snapRel ? s.stop.reason : `${s.snapRel} is corrupt`, runId),
    );
  for (const seg of s.later)
    keep(
      await ctx.quarantine(
        rel(runId, seg.name),
        `follows ${s.stop?.file ?? 'the end of the chain'}, where the chain broke`,
        runId,
      ),
    );
  return out;
}

/** Segments whose every commit is in the snapshot are leftovers of a finished compaction: removed. */
async function retireCovered(
  ctx: LoadCtx,
  runId: string,
  segs: SegmentFile[],
  covered: number,
  tail: SegmentTail | null,
): Promise<void> {
  if (covered === 0) return;
  for (const s of segs) {
    if (s.name !== tail?.name && lastCommitIn(s) <= covered && !s.parsed.stop && !s.headerBad)
      await ctx.fsl.unlink(path.join(ctx.root, rel(runId, s.name))).catch(() => undefined);
  }
}
