// The framing every file of a run shares (a segment's commits, a snapshot's chunks, the witness
// file's header): one frame a line,
//
//   frame = <length of body, decimal> \t <crc32 of body, 8 hex> \t <body> \n
//
// the body JSON with every character from U+007F on escaped (one byte a character), or a snapshot's raw
// strings (`~` first). The line framing lets a reader find the next frame after damage (only frame
// starts hold a tab: JSON escapes its tabs); the checksum catches torn and flipped bytes, and a frame
// that fails it by one flipped bit is read corrected (correctOneBit). A commit frame's checksum is
// continued from its run id's (FrameKey): a frame copied from another run's log fails like damage.
import { isJsonObject } from '../../common/json';
import { crc32, flippedBit } from './crc';
import { longBody } from './frameKeys';

const TAB = 0x09;
const NL = 0x0a;
/** `~`: the first byte of a raw body (no JSON text starts with it). */
const RAW_MARK = 0x7e;

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** JSON with non-ASCII escaped (the file stays one-byte text, as the envelopes do), framed. */
export function encodeFrame(value: unknown): Buffer {
  return frameOfJson(JSON.stringify(value));
}

/** A commit frame of a run's segment: its checksum continued from the run id's. */
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

type FrameRead = { ok: true; frame: Frame } | { ok: false; reason: string; short: boolean };

/**
 * How a run's commit frames are checked and read: the checksum continued from the run id's, a frame in
 * short keys read back as its commit body. A frame from another run's log fails the checksum as a
 * damaged one does.
 */
export interface FrameKey {
  runId: string;
  seed: number;
}

export const frameKey = (runId: string): FrameKey => ({ runId, seed: crc32(Buffer.from(runId, 'utf8')) });

/**
 * `buf` from byte `from` on as one string (frames are ASCII): frame bodies are parsed from slices of
 * it instead of a string each — one allocation for a file, not thousands of short-lived ones for the
 * garbage collector to sweep on every resume.
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
  /** A commit frame of that run: its checksum is continued from the run id's. */
  key?: FrameKey | null;
  /** The checksum may also be a plain one (a header) — for "does anything valid follow?", never to read a commit. */
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
  // The length read from its bytes as digits (no string, no pattern: a resume reads thousands of frames).
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

/** Bytes of a frame's header at most: 12 length digits, a tab, 8 hex digits, a tab. */
const HEADER_MAX = 22;

/**
 * The frame at `at`, which failed, read again with one bit of it flipped back — found from its
 * checksum (crc.ts, flippedBit), or in its header or final newline by trying each bit — when exactly
 * one bit makes the whole frame check out and parse. `buf` is changed in place; null (and `buf` as it
 * was): not one bit.
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
    else if (/^[0-9a-f]{8}$/.test(buf.toString('latin1', h.crcAt, h.crcAt + 8))) {
      const bodyBit = flippedBit(body, written, key?.seed ?? 0);
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
