// A run's log: one append-only segment file, runs/<id>/segment-<first commit, 12 digits>.log, in the
// framing of frame.ts. One commit is one frame, written with one append and one fdatasync — no temp
// file, no rename, no directory fsync on the step path (the directory is fsync'd once, when the segment
// is created). Layout (docs/format.md):
//
//   header  = the first frame: {"segment":7,"run_id":…,"first":…,"meta":…} — whose run, from which commit
//   witness = two fixed-size slots right after it (witness.ts): the witness as the segment began
//   commits, each a frame in short keys (frameKeys.ts) whose checksum is continued from the run id's
//   copies  = when the run is let go, a copy of the header and of the commit frames since the last copy
//             (segmentCopy.ts): damage to one frame, or to the header, loses nothing
//   zeros   = room written ahead of the appends (runLog.ts, reserve): a clean end, not a torn tail
//
// Reading stops at the first frame that does not check out (after one flipped bit is corrected). If no
// valid frame follows it, it is a torn tail: an append cut short by a crash, never acknowledged unless
// the run's witness says otherwise. A bad frame with valid ones after it is damage.
import { z } from 'zod';
import { RunMeta } from '../api/schema';
import { isJsonObject } from '../../common/json';
import { correctOneBit, frameKey, frameText, readFrame, scanFrames, type Frame, type FrameKey } from './frame';
import { WITNESS_AREA } from './witness';

/** The segment version of format 1 (docs/format.md): any other is refused, never read as damage. */
export const SEGMENT_VERSION = 7;
const TAB = 0x09;

export const segmentName = (first: number): string => `segment-${String(first).padStart(12, '0')}.log`;

/** Segment files in a run folder, oldest first. */
export function parseSegmentNames(names: readonly string[]): { name: string; first: number }[] {
  const out: { name: string; first: number }[] = [];
  for (const name of names) {
    const m = /^segment-(\d{12})\.log$/.exec(name);
    if (m && Number(m[1]) >= 1) out.push({ name, first: Number(m[1]) });
  }
  return out.sort((a, b) => a.first - b.first);
}

export const SegmentHeader = z.object({
  segment: z.literal(SEGMENT_VERSION),
  run_id: z.string(),
  first: z.number().int().positive(),
  meta: RunMeta,
});
export type SegmentHeader = z.infer<typeof SegmentHeader>;

export interface ParsedSegment {
  frames: Frame[];
  /** Frames that failed their checksum by one flipped bit, corrected in `buf` (byte offsets in it). */
  corrected: { offset: number; bit: number }[];
  /** Where the witness area starts (right after the header frame), or null: no header read. */
  witnessAt: number | null;
  /** Where the valid frames end (the length to keep). */
  validEnd: number;
  /**
   * Copy frames (segmentCopy.ts): not commits, so not in `frames`. Each value is only the
   * range it says it holds, `{ first, count }` (or null); its frames are read only after damage.
   */
  copies: Frame[];
  /** Where the commit frames no copy holds begin: after the last copy frame, or after the witness area. */
  copiedTo: number;
  /** The first frame that did not check out, and why; null: the file ends cleanly (or in zeros). */
  stop: { offset: number; reason: string; torn: boolean } | null;
}

const ZEROS = Buffer.alloc(64 * 1024);

/** Whether every byte of `buf` from `at` on is zero (room written ahead of the appends), compared natively. */
export function zerosFrom(buf: Buffer, at: number): boolean {
  for (let i = at; i < buf.length; i += ZEROS.length) {
    const end = Math.min(buf.length, i + ZEROS.length);
    if (buf.compare(ZEROS, 0, end - i, i, end) !== 0) return false;
  }
  return true;
}

const COPY_START = Buffer.from('{"copy":', 'latin1');

/** The frame at `at` is a copy frame by its first bytes (its checksum not yet checked). */
export function isCopyAt(buf: Buffer, at: number): boolean {
  const t1 = buf.indexOf(TAB, at);
  if (t1 < 0 || t1 - at > 12) return false;
  const bodyAt = t1 + 10;
  return (
    buf.length >= bodyAt + COPY_START.length &&
    buf.compare(COPY_START, 0, COPY_START.length, bodyAt, bodyAt + COPY_START.length) === 0
  );
}

/** A copy frame's first commit and count, from its first bytes (written first: segmentCopy.ts); null: not there. */
function copyRange(buf: Buffer, at: number): { first: number; count: number } | null {
  const m = /^\d{1,12}\t[0-9a-f]{8}\t\{"copy":\{"first":(\d{1,15}),"count":(\d{1,15}),/.exec(
    buf.toString('latin1', at, at + 80),
  );
  return m ? { first: Number(m[1]), count: Number(m[2]) } : null;
}

/** A frame's value is a copy (segmentCopy.ts), not a commit. */
export const isCopyBody = (v: unknown): v is { copy: unknown } => isJsonObject(v) && 'copy' in v;

/** A valid frame somewhere after the one at `at`: then that one was damage, not a torn tail. */
function validFrameAfter(buf: Buffer, at: number, key: FrameKey | null): boolean {
  return scanFrames(buf, at + 1, { first: true, key }).length > 0;
}

/**
 * A segment's frames, its header first. `runId`: the run whose folder holds it (its commit frames'
 * checksums continue from its id; without it, from the id its header names). `headless`: `buf` is the
 * part of a segment after its header (another window's appends, read as they come).
 */
export function parseSegment(
  buf: Buffer,
  o: { runId?: string; headless?: boolean; checksumsOnly?: boolean } = {},
): ParsedSegment {
  const frames: Frame[] = [];
  let witnessAt: number | null = null;
  const headless = o.headless === true;
  let key: FrameKey | null = o.runId !== undefined ? frameKey(o.runId) : null;
  // checksumsOnly (headless, a run's id given): the frames found and checked, their values left
  // undefined — what a copy of them needs, without parsing megabytes of JSON on the host's thread.
  const values = !(o.checksumsOnly && headless && key);
  const text = values ? frameText(buf) : undefined;
  const corrected: ParsedSegment['corrected'] = [];
  const copies: Frame[] = [];
  let copiedTo = 0;
  let at = 0;
  const done = (stop: ParsedSegment['stop'], validEnd = at): ParsedSegment => ({
    frames,
    corrected,
    witnessAt,
    validEnd,
    copies,
    copiedTo,
    stop,
  });
  while (at < buf.length) {
    const isHeader = at === 0 && !headless;
    const fk = isHeader ? null : key;
    const copy = !isHeader && isCopyAt(buf, at);
    let r = readFrame(buf, at, { key: fk, text, parse: values && !copy });
    // Room written ahead: the end. (Before any repair is tried: no flipped bit makes a frame of zeros.)
    if (!r.ok && !isHeader && zerosFrom(buf, at)) return done(null);
    if (!r.ok) {
      // One flipped bit (the commonest silent damage) is found from the checksum and put right.
      const fix = correctOneBit(buf, at, fk);
      if (fix) {
        corrected.push({ offset: fix.offset, bit: fix.bit });
        r = fix.read;
      }
    }
    if (!r.ok) return done({ offset: at, reason: r.reason, torn: !validFrameAfter(buf, at, key) });
    if (copy || isCopyBody(r.frame.value)) {
      copies.push({ start: r.frame.start, end: r.frame.end, value: copyRange(buf, r.frame.start) });
      at = copiedTo = r.frame.end;
      continue;
    }
    if (isHeader) {
      // The header says whose commits follow; the witness area after it is written with it, so the
      // area cut short is a header cut short (a segment being created). It holds no tab: no frame is found in it.
      const runId = (r.frame.value as { run_id?: unknown } | null)?.run_id;
      key ??= typeof runId === 'string' ? frameKey(runId) : null;
      if (isSegmentHeader(r.frame.value) && buf.length < r.frame.end + WITNESS_AREA)
        return done({ offset: 0, reason: 'the witness area after the header frame is cut short', torn: true }, 0);
    }
    frames.push(r.frame);
    at = r.frame.end;
    if (!isHeader || !isSegmentHeader(r.frame.value)) continue;
    witnessAt = at;
    at = copiedTo = at + WITNESS_AREA;
  }
  return done(null);
}

/** Where the witness area of a segment starts, from its first bytes (`head`); null: no whole header in them. */
export function witnessAreaAt(head: Buffer): number | null {
  const h = readFrame(head, 0);
  return h.ok && isSegmentHeader(h.frame.value) ? h.frame.end : null;
}

/** A header frame of a segment of this version (the witness area follows it). */
const isSegmentHeader = (v: unknown): boolean => (v as { segment?: unknown } | null)?.segment === SEGMENT_VERSION;
