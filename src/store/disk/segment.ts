// A run's log: one append-only segment file, runs/<id>/segment-<first commit, 12 digits>.log.
// One commit is one framed line, written with one append and one fdatasync — no temp file, no rename,
// no directory fsync on the step path (the directory is fsync'd once, when the segment is created).
//
//   frame   = <length of json, decimal> \t <crc32 of json, 8 hex> \t <json> \n
//   header  = the first frame: {"segment":5,"run_id":…,"first":…,"meta":…} — whose run, from which commit
//   witness = (version 4 on) two fixed-size slots right after the header, rewritten in place after
//             acknowledged commits (witness.ts); then the commit frames
//
// Version 3 writes the commits in the compact encoding (codec.ts: a result as the difference from its
// intent, the run context's changed keys only, implied fields left out); version 4 keeps the run's
// tail witness in the segment (it was a file of its own) and leaves out each frame's `witnessed` (a
// version-4 segment always has a witness); version 5 writes each commit frame in short keys, without
// its run id, and starts its checksum from the run id's instead (frameKeys.ts) — the header frame is as
// before; version 6 may hold copy frames (segmentCopy.ts): when a run is let go, a deflated copy of its
// header frame and of the commit frames written since the last copy is appended, so damage to one
// frame (or to the header) loses nothing; version 7 may end in zeros after its last frame — room the
// writer filled ahead of its appends (runLog.ts, reserve), so that a commit's fdatasync writes its data
// and no change to the file's size or blocks — which is a clean end, not a torn tail. Older segments
// are read as they are (the decoder takes every encoding) and converted (compacted) before the run's
// next write, so an older version never meets a newer frame in a file it takes for its own.
//
// A frame that fails its checksum by one flipped bit is read corrected (correctOneBit: found from the
// checksum, or by trying the header's bits), and the loader reports it. Reading stops at the first
// frame that still does not check out. If no valid frame follows it, it is a
// torn tail: an append cut short by a crash, never acknowledged (unless the run's witness says
// otherwise), so it is cut off. A bad frame with valid ones after it is damage: corruption.
import zlib from 'node:zlib';
import { z } from 'zod';
import { RunMeta } from '../api/schema';
import { isJsonObject } from '../../common/json';
import { longBody } from './frameKeys';
import { WITNESS_AREA } from './witness';

export const SEGMENT_VERSION = 7;
/** The first version with the witness area after the header frame. */
export const SEGMENT_WITH_WITNESS = 4;
/** The first version whose commit frames are in short keys, their checksums started from the run id's. */
export const SEGMENT_SHORT = 5;
/** The first version that may hold copy frames (segmentCopy.ts). */
export const SEGMENT_WITH_COPIES = 6;
/** The first version that may end in zero bytes after its last frame (room written ahead: runLog.ts). */
export const SEGMENT_WITH_ROOM = 7;
/** The oldest segment version this one reads (and converts when it writes the run). */
export const SEGMENT_VERSION_READ = 2;
const TAB = 0x09;
const NL = 0x0a;
/** `~`: the first byte of a raw body (no JSON text starts with it). */
const RAW_MARK = 0x7e;

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
  segment: z.number().int().min(SEGMENT_VERSION_READ).max(SEGMENT_VERSION),
  run_id: z.string(),
  first: z.number().int().positive(),
  meta: RunMeta,
});
export type SegmentHeader = z.infer<typeof SegmentHeader>;

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** CRC-32 (IEEE, reflected) of each byte value. */
let table: Int32Array | undefined;
function crcTable(): Int32Array {
  if (!table) {
    table = new Int32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[i] = c;
    }
  }
  return table;
}

/** Table-driven CRC-32 (IEEE), for hosts whose Node predates zlib.crc32 (VS Code before 1.101 ships Node 20.9). */
function crc32Js(buf: Uint8Array, seed = 0): number {
  const table = crcTable();
  let crc = ~seed;
  for (let i = 0; i < buf.length; i++) crc = table[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** crc32 of `buf`, continued from `seed` (the crc32 of what comes before it; 0: nothing). */
export const crc32: (buf: Uint8Array, seed?: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (b, seed = 0) => zlib.crc32(b, seed) : crc32Js;
export { crc32Js as crc32Portable };

/** JSON with non-ASCII escaped (the file stays one-byte text, as the envelopes do), framed. */
export function encodeFrame(value: unknown): Buffer {
  return frameOfJson(JSON.stringify(value));
}

/** A commit frame of a run's segment (version 5 on): its checksum started from the run id's. */
export function encodeCommitFrame(body: unknown, key: FrameKey): Buffer {
  return frameOfJson(JSON.stringify(body), key.seed);
}

/** The same, for JSON text already serialised (a snapshot's chunks are built from each op's text). */
export function frameOfJson(text: string, seed = 0): Buffer {
  return frameOfLatin1(asciiJson(text), seed);
}

/** JSON text with every character from U+007F on written as a `\\uXXXX` escape: one byte a character. */
export function asciiJson(text: string): string {
  // Most commits are ASCII already: found out by two native scans (a text whose UTF-8 is as long as
  // it holds nothing from U+0080 on; then U+007F alone), instead of a replace that copies the text.
  return Buffer.byteLength(text, 'utf8') === text.length && !text.includes('\u007f')
    ? text
    : text.replace(NON_ASCII_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A frame whose body is `body`'s characters as one byte each, as they are (nothing escaped): every
 * character must be at most U+00FF, and none a tab — a frame's body never holds one, so a scan for
 * frame starts (scanFrames) cannot find one inside it. JSON made ASCII (frameOfJson), or a snapshot's
 * raw strings (snapshotFile.ts).
 */
export function frameOfLatin1(body: string, seed = 0): Buffer {
  // One buffer: the header's room (length ≤ 12 digits, tab, 8 hex, tab), the body, the newline.
  const len = body.length;
  const head = `${len}\t00000000\t`;
  const frame = Buffer.allocUnsafe(head.length + len + 1);
  const bodyAt = head.length;
  frame.write(body, bodyAt, len, 'latin1');
  frame[bodyAt + len] = NL;
  frame.write(`${len}\t${hex8(crc32(frame.subarray(bodyAt, bodyAt + len), seed))}\t`, 0, bodyAt, 'latin1');
  return frame;
}

const NON_ASCII_ALL = /[\u007f-\uffff]/g;

export interface Frame {
  /** Byte offsets of the frame in the file: [start, end). */
  start: number;
  end: number;
  value: unknown;
}

export interface ParsedSegment {
  frames: Frame[];
  /** Frames that failed their checksum by one flipped bit, corrected in `buf` (byte offsets in it). */
  corrected: { offset: number; bit: number }[];
  /** Where the witness area starts (right after the header frame; version 4 on), or null: none. */
  witnessAt: number | null;
  /** Where the valid frames end (the length to keep). */
  validEnd: number;
  /**
   * Copy frames (segmentCopy.ts; version 6 on): not commits, so not in `frames`. Each value is only the
   * range it says it holds, `{ first, count }` (or null); its frames are read only after damage.
   */
  copies: Frame[];
  /** Where the commit frames no copy holds begin: after the last copy frame, or after the witness area. */
  copiedTo: number;
  /** The first frame that did not check out, and why; null: the file ends cleanly (in zeros, version 7 on). */
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

type FrameRead = { ok: true; frame: Frame } | { ok: false; reason: string; short: boolean };

/**
 * How a run's commit frames are checked and read (segment version 5 on): the checksum continued from
 * the run id's, a frame in short keys read back as its commit body. A frame from another run's log
 * fails the checksum as a damaged one does.
 */
export interface FrameKey {
  runId: string;
  seed: number;
}

export const frameKey = (runId: string): FrameKey => ({ runId, seed: crc32(Buffer.from(runId, 'utf8')) });

/**
 * `buf` from byte `from` on as one string (frames are ASCII): frame bodies are parsed from slices of
 * it instead of a string each — one allocation for a file, not thousands of short-lived ones for the
 * garbage collector to sweep on every resume (≈ 30 % of a 1000-step snapshot's parse).
 */
export interface FrameText {
  s: string;
  from: number;
}

/** Past this, frames are read a string each (a string has a length limit; no run's file should come near it). */
const MAX_FRAME_TEXT = 256 * 1024 * 1024;

export const frameText = (buf: Buffer, from = 0): FrameText | undefined =>
  buf.length - from <= MAX_FRAME_TEXT ? { s: buf.toString('latin1', from), from } : undefined;

/** How readFrame reads a frame. */
export interface ReadFrameOptions {
  /** false: the framing and checksum only (the value left undefined). Default true. */
  parse?: boolean;
  /** A commit frame of that run (version 5): its checksum is continued from the run id's. */
  key?: FrameKey | null;
  /**
   * The checksum may also be a plain one (a header, an older frame) — for "does anything valid
   * follow?", never to read a commit.
   */
  either?: boolean;
  /** `buf` as text (frameText), to parse the body from. */
  text?: FrameText | undefined;
  /** A body that starts with `~` (a snapshot's raw strings) is read as a RawBody instead of as JSON. */
  raw?: boolean;
}

/** A frame body that is not JSON: a snapshot's raw strings (snapshotFile.ts), its bytes [at, end) in the buffer. */
export class RawBody {
  constructor(
    readonly at: number,
    readonly end: number,
  ) {}
}

/**
 * The checksum written at `at` — eight lowercase hex digits, as hex8 writes them — as a number, or -1
 * when they are not (no checksum equals it: a mismatch, as comparing the texts was).
 */
function hex8At(buf: Buffer, at: number): number {
  let n = 0;
  for (let k = at; k < at + 8; k++) {
    const c = buf[k]!;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/** The frame at byte `at` of `buf`, checked (length, checksum, end) and, unless told not to, parsed. */
export function readFrame(buf: Buffer, at: number, o: ReadFrameOptions = {}): FrameRead {
  const { parse = true, key = null, either = false, text, raw = false } = o;
  const t1 = buf.indexOf(TAB, at);
  if (t1 < 0 || t1 - at > 12)
    return { ok: false, reason: 'the frame header is cut short or unreadable', short: t1 < 0 };
  // The length read from its bytes as digits (no string, no pattern: a resume reads ≈ 1,600 frames).
  let len = 0;
  for (let i = at; i < t1; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) return { ok: false, reason: 'the frame length is not a number', short: false };
    len = len * 10 + (c - 0x30);
  }
  if (t1 === at) return { ok: false, reason: 'the frame length is not a number', short: false };
  const crcAt = t1 + 1;
  if (buf.length < crcAt + 9) return { ok: false, reason: 'the frame header is cut short', short: true };
  if (buf[crcAt + 8] !== TAB) return { ok: false, reason: 'the frame checksum is unreadable', short: false };
  const bodyAt = crcAt + 9;
  const end = bodyAt + len + 1;
  if (end > buf.length)
    return { ok: false, reason: `the frame is cut short (${buf.length - bodyAt} of ${len + 1} bytes)`, short: true };
  if (buf[end - 1] !== NL) return { ok: false, reason: 'the frame does not end where its length says', short: false };
  const body = buf.subarray(bodyAt, end - 1);
  const written = hex8At(buf, crcAt);
  const keyed = key != null && crc32(body, key.seed) === written;
  if (!keyed && (key != null && !either ? true : crc32(body) !== written))
    return { ok: false, reason: 'checksum mismatch', short: false };
  if (parse && raw && buf[bodyAt] === RAW_MARK)
    return { ok: true, frame: { start: at, end, value: new RawBody(bodyAt, end - 1) } };
  let value: unknown;
  try {
    value = !parse
      ? undefined
      : JSON.parse(
          text && bodyAt >= text.from ? text.s.slice(bodyAt - text.from, end - 1 - text.from) : body.toString('latin1'),
        );
  } catch {
    return { ok: false, reason: 'the frame is not JSON', short: false };
  }
  if (keyed && isJsonObject(value) && 'o' in value) {
    try {
      value = longBody(value, key.runId);
    } catch {
      // Checksummed but not a commit in the short form: left as it is, for the reader to refuse.
    }
  }
  return { ok: true, frame: { start: at, end, value } };
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

/** A frame header: only frame starts look like this (JSON escapes its tabs). */
const FRAME_START = /\d{1,12}\t[0-9a-f]{8}\t/g;

/**
 * The frames that still check out anywhere after byte `from` (a damaged frame's own length cannot be
 * trusted to find the next one): every place that looks like a frame header is tried.
 */
export function scanFrames(
  buf: Buffer,
  from: number,
  opts: { first?: boolean; key?: FrameKey | null; raw?: boolean } = {},
): Frame[] {
  const text: FrameText = { s: buf.toString('latin1'), from: 0 };
  const out: Frame[] = [];
  FRAME_START.lastIndex = from;
  for (let m = FRAME_START.exec(text.s); m; m = FRAME_START.exec(text.s)) {
    const r = readFrame(buf, m.index, { key: opts.key ?? null, either: true, text, raw: opts.raw ?? false });
    if (!r.ok) {
      FRAME_START.lastIndex = m.index + 1;
      continue;
    }
    out.push(r.frame);
    if (opts.first) break;
    FRAME_START.lastIndex = r.frame.end;
  }
  return out;
}

/** A valid frame somewhere after the one at `at`: then that one was damage, not a torn tail. */
function validFrameAfter(buf: Buffer, at: number, key: FrameKey | null): boolean {
  return scanFrames(buf, at + 1, { first: true, key }).length > 0;
}

/**
 * A segment's frames, its header first. `runId`: the run whose folder holds it (its commit frames'
 * checksums start from its id; without it, from the id its header names). `version`: `buf` is the
 * part of a segment of that version after its header (another window's appends, read as they come).
 */
export function parseSegment(buf: Buffer, o: { runId?: string; version?: number } = {}): ParsedSegment {
  const frames: Frame[] = [];
  let witnessAt: number | null = null;
  const headless = o.version !== undefined;
  let key: FrameKey | null =
    o.runId !== undefined && (!headless || o.version! >= SEGMENT_SHORT) ? frameKey(o.runId) : null;
  const text = frameText(buf);
  const corrected: ParsedSegment['corrected'] = [];
  const copies: Frame[] = [];
  let copiedTo = 0;
  let at = 0;
  /** The segment's version: the header's, or the caller's for a part read without it. */
  let version = o.version ?? 0;
  while (at < buf.length) {
    const fk = at === 0 && !headless ? null : key;
    const copy = (at > 0 || headless) && isCopyAt(buf, at);
    let r = readFrame(buf, at, { key: fk, text, parse: !copy });
    // Room written ahead (version 7): the end. (Before any repair is tried: no flipped bit makes a frame of zeros.)
    if (!r.ok && version >= SEGMENT_WITH_ROOM && (at > 0 || headless) && zerosFrom(buf, at))
      return { frames, corrected, witnessAt, validEnd: at, copies, copiedTo, stop: null };
    if (!r.ok) {
      // One flipped bit (the commonest silent damage) is found from the checksum and put right.
      const fix = correctOneBit(buf, at, fk);
      if (fix) {
        corrected.push({ offset: fix.offset, bit: fix.bit });
        r = fix.read;
      }
    }
    if (!r.ok) {
      const torn = !validFrameAfter(buf, at, key);
      return {
        frames,
        corrected,
        witnessAt,
        validEnd: at,
        copies,
        copiedTo,
        stop: { offset: at, reason: r.reason, torn },
      };
    }
    if (copy || isCopyBody(r.frame.value)) {
      copies.push({ start: r.frame.start, end: r.frame.end, value: copyRange(buf, r.frame.start) });
      at = copiedTo = r.frame.end;
      continue;
    }
    if (at === 0 && !headless) {
      // The header says whose commits follow, and in which form.
      const h = r.frame.value as { segment?: unknown; run_id?: unknown } | null;
      version = typeof h?.segment === 'number' ? h.segment : 0;
      const runId = o.runId ?? (typeof h?.run_id === 'string' ? h.run_id : undefined);
      key = version >= SEGMENT_SHORT && runId !== undefined ? frameKey(runId) : null;
    }
    if (at === 0 && !headless && hasWitnessArea(r.frame.value)) {
      // The header and the witness area after it are written as one: the area cut short is a header
      // cut short (a segment being created). The area holds no frames (no tab in it, so none is found).
      if (buf.length < r.frame.end + WITNESS_AREA)
        return {
          frames,
          corrected,
          witnessAt,
          validEnd: 0,
          copies,
          copiedTo,
          stop: { offset: 0, reason: 'the witness area after the header frame is cut short', torn: true },
        };
      witnessAt = r.frame.end;
      frames.push(r.frame);
      at = copiedTo = r.frame.end + WITNESS_AREA;
      continue;
    }
    frames.push(r.frame);
    at = r.frame.end;
    if (frames.length === 1 && !headless) copiedTo = at;
  }
  return { frames, corrected, witnessAt, validEnd: at, copies, copiedTo, stop: null };
}

/** Bytes of a frame's header at most: 12 length digits, a tab, 8 hex digits, a tab. */
const HEADER_MAX = 22;

/**
 * The frame at `at`, which failed, read again with one bit of it flipped back — found from its
 * checksum (CRC-32 is linear: a flipped bit at a given distance from the end changes it by a value
 * of its own), or in its header or final newline by trying each bit — when exactly one bit makes the
 * whole frame check out and parse. `buf` is changed in place; null (and `buf` as it was): not one bit.
 */
export function correctOneBit(
  buf: Buffer,
  at: number,
  key: FrameKey | null,
): { offset: number; bit: number; read: Extract<FrameRead, { ok: true }> } | null {
  const fits = (o: number, bit: number) => {
    buf[o] = buf[o]! ^ (1 << bit);
    const ok = readFrame(buf, at, { parse: false, key }).ok;
    buf[o] = buf[o]! ^ (1 << bit);
    return ok;
  };
  const found: { offset: number; bit: number }[] = [];
  // The header and the newline: each bit tried (the length, the tabs, the checksum's digits).
  const nl = buf.indexOf(NL, at);
  const headEnd = Math.min(at + HEADER_MAX, nl < 0 ? buf.length : nl, buf.length);
  for (let o = at; o < headEnd; o++) for (let bit = 0; bit < 8; bit++) if (fits(o, bit)) found.push({ offset: o, bit });
  // The body: from the checksum the header holds, where one flipped bit would explain the difference.
  const h = headerAt(buf, at);
  if (h && found.length === 0) {
    const body = buf.subarray(h.bodyAt, h.end - 1);
    const written = parseInt(buf.toString('latin1', h.crcAt, h.crcAt + 8), 16);
    if (buf[h.end - 1] !== NL && isOneBit(buf[h.end - 1]! ^ NL))
      found.push({ offset: h.end - 1, bit: Math.log2(buf[h.end - 1]! ^ NL) });
    else if (/^[0-9a-f]{8}$/.test(buf.toString('latin1', h.crcAt, h.crcAt + 8)))
      for (const seed of key ? [key.seed] : [0]) {
        const bodyBit = bitFromSyndrome((crc32(body, seed) ^ written) >>> 0, body.length);
        if (bodyBit) found.push({ offset: h.bodyAt + bodyBit.byte, bit: bodyBit.bit });
      }
  }
  if (found.length !== 1) return null;
  const { offset, bit } = found[0]!;
  buf[offset] = buf[offset]! ^ (1 << bit);
  const read = readFrame(buf, at, { key });
  if (read.ok) return { offset, bit, read };
  buf[offset] = buf[offset]! ^ (1 << bit);
  return null;
}

const isOneBit = (x: number) => x !== 0 && (x & (x - 1)) === 0;

/** A frame header's positions when its length and framing read (the checksum not checked). */
function headerAt(buf: Buffer, at: number): { crcAt: number; bodyAt: number; end: number } | null {
  const t1 = buf.indexOf(TAB, at);
  if (t1 < 0 || t1 - at > 12 || !/^\d{1,12}$/.test(buf.toString('latin1', at, t1))) return null;
  const crcAt = t1 + 1;
  const bodyAt = crcAt + 9;
  const end = bodyAt + Number(buf.toString('latin1', at, t1)) + 1;
  return buf[crcAt + 8] === TAB && end <= buf.length ? { crcAt, bodyAt, end } : null;
}

/** Past this a body is not searched for a flipped bit (8 steps a byte: ≈ 0.5 s at the cap). */
const MAX_CORRECTED_BODY = 16 * 1024 * 1024;

/**
 * The one bit of an `n`-byte body whose flip changes its CRC-32 by `syndrome`, or null (none, or more
 * than one could: then nothing is guessed). Bit b of byte j changes it by table[1 << b] carried
 * through the n − 1 − j bytes after it as zeros; the eight bits are carried along together, from the end.
 */
function bitFromSyndrome(syndrome: number, n: number): { byte: number; bit: number } | null {
  if (syndrome === 0 || n > MAX_CORRECTED_BODY) return null;
  const t = crcTable();
  const v = Array.from({ length: 8 }, (_, b) => t[1 << b]! >>> 0);
  let hit: { byte: number; bit: number } | null = null;
  for (let k = 0; k < n; k++) {
    for (let b = 0; b < 8; b++) {
      if (v[b] === syndrome) {
        if (hit) return null;
        hit = { byte: n - 1 - k, bit: b };
      }
      v[b] = (t[v[b]! & 0xff]! ^ (v[b]! >>> 8)) >>> 0;
    }
  }
  return hit;
}

/**
 * Where the witness area of a segment starts, from its first bytes (`head`): after a good header frame
 * of a version that keeps one; null: none there (an older version, or the header is not whole in `head`).
 */
export function witnessAreaAt(head: Buffer): number | null {
  const h = readFrame(head, 0);
  return h.ok && hasWitnessArea(h.frame.value) ? h.frame.end : null;
}

/** A header frame of a version that keeps the witness after it. */
function hasWitnessArea(header: unknown): boolean {
  const v = (header as { segment?: unknown } | null)?.segment;
  return typeof v === 'number' && v >= SEGMENT_WITH_WITNESS && v <= SEGMENT_VERSION;
}
