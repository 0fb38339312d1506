// Copy frames: damage to one frame of a segment loses nothing once a copy holds it.
//
// A commit frame is written against the ones before it (codec.ts: a result as its intent's difference,
// a list as the items added), so a frame that is gone takes every later one with it. When a run is
// let go (its lease released, or the store closed), its holder appends one copy frame to the segment:
//
//   {"copy":{"first":F,"count":K,"head":H,"bytes":B,"z":"<base64 of deflate-raw>"}}
//
// checksummed like a commit frame (from the run id's crc32), holding the segment's header frame (H
// bytes) and the K commit frames F … F+K−1 written since the last copy, byte for byte (B bytes in all),
// read back and checked before they are copied. It is not a commit: the loader skips it (parseSegment
// keeps it apart from the frames) and the witness does not count it.
//
// When a frame before a copy fails (other than by one flipped bit, which segment.ts corrects), the
// loader rebuilds the segment (rebuildSegment): the good bytes before the damage (the header and
// witness area from a copy when the header was hit), then each next commit from whichever place
// still holds it whole — a valid frame anywhere after the damage, or any copy — and a fresh copy of
// what follows the last copy kept. It is taken only when it holds every commit any valid frame or
// copy names, with no gap; otherwise the loader falls back as before (the frames from the damage on
// are lost, reported). A damaged copy loses nothing either: the frames it copied are still there.
//
// What a copy does not cover: frames appended since the run was last let go (a run that is working,
// or that crashed), which are in one place only until the next release; and a file cut short, whose
// lost end held the copies too.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { isRawCommit } from './commit';
import { encodeCommitFrame, frameKey, readFrame, scanFrames, type Frame, type FrameKey } from './frame';
import { isCopyBody, parseSegment, type ParsedSegment } from './segment';
import { blankArea, readWitnessArea, WITNESS_AREA } from './witness';

interface CopyBody {
  first: number;
  count: number;
  head: number;
  bytes: number;
  z: string;
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * The copy frame for a whole segment `buf` (parsed as `parsed`, read whole): its header frame and the
 * commit frames after its last copy; null when there are none (or the segment is not whole).
 */
export function copyFrameFor(buf: Buffer, parsed: ParsedSegment, key: FrameKey): Buffer | null {
  if (parsed.stop || parsed.frames.length < 2) return null;
  const header = buf.subarray(parsed.frames[0]!.start, parsed.frames[0]!.end);
  return copyFrame(
    header,
    buf,
    parsed.frames.slice(1).filter((f) => f.start >= parsed.copiedTo),
    key,
  );
}

/** The copy frame of `header` (a header frame's bytes) and the commit frames `fresh` of `buf`, in order; null: none. */
export function copyFrame(header: Buffer, buf: Buffer, fresh: readonly Frame[], key: FrameKey): Buffer | null {
  const all = copied(header, buf, fresh);
  return all && copyFrameOf(all, zlib.deflateRawSync(all.bytes), key);
}

/** The same, deflated on libuv's pool: a long run's tail is megabytes, too long for the host's thread. */
export async function copyFrameAsync(
  header: Buffer,
  buf: Buffer,
  fresh: readonly Frame[],
  key: FrameKey,
): Promise<Buffer | null> {
  const all = copied(header, buf, fresh);
  return all && copyFrameOf(all, await deflateRaw(all.bytes), key);
}

const deflateRaw = promisify(zlib.deflateRaw);

function copied(
  header: Buffer,
  buf: Buffer,
  fresh: readonly Frame[],
): { bytes: Buffer; first: number; count: number; head: number } | null {
  const first = fresh[0]?.value;
  if (!isRawCommit(first)) return null;
  const bytes = Buffer.concat([header, buf.subarray(fresh[0]!.start, fresh.at(-1)!.end)]);
  return { bytes, first: first.first, count: fresh.length, head: header.length };
}

function copyFrameOf(all: NonNullable<ReturnType<typeof copied>>, z: Buffer, key: FrameKey): Buffer {
  const body: { copy: CopyBody } = {
    copy: { first: all.first, count: all.count, head: all.head, bytes: all.bytes.length, z: z.toString('base64') },
  };
  return encodeCommitFrame(body, key);
}

/** What a copy frame holds, checked frame by frame; null when it does not read whole. */
export function readCopy(
  buf: Buffer,
  at: number,
  key: FrameKey,
): { header: Buffer; frames: Map<number, Buffer> } | null {
  const r = readFrame(buf, at, { key });
  if (!r.ok || !isCopyBody(r.frame.value)) return null;
  const c = r.frame.value.copy as Partial<CopyBody> | null;
  if (!c || ![c.first, c.count, c.head, c.bytes].every(isCount) || typeof c.z !== 'string') return null;
  let all: Buffer;
  try {
    all = zlib.inflateRawSync(Buffer.from(c.z, 'base64'), { maxOutputLength: c.bytes! + 1 });
  } catch {
    return null;
  }
  if (all.length !== c.bytes) return null;
  const header = all.subarray(0, c.head);
  const h = readFrame(header, 0);
  if (!h.ok || h.frame.end !== header.length) return null;
  const frames = new Map<number, Buffer>();
  let p = c.head!;
  for (let n = c.first!; n < c.first! + c.count!; n++) {
    const f = readFrame(all, p, { key });
    if (!f.ok || !isRawCommit(f.frame.value) || f.frame.value.first !== n || f.frame.value.last !== n) return null;
    frames.set(n, all.subarray(f.frame.start, f.frame.end));
    p = f.frame.end;
  }
  return p === all.length ? { header, frames } : null;
}

/**
 * Where a segment (as parsed) shows damage a copy may mend, and what: a frame that does not check out
 * with a valid one after it (a torn tail has none), a commit out of order (a frame cut out), or a copy
 * naming a commit no frame holds (the last frames cut out). Null: none.
 */
export function damageIn(parsed: ParsedSegment): { at: number; reason: string } | null {
  if (parsed.stop) return parsed.stop.torn ? null : { at: parsed.stop.offset, reason: parsed.stop.reason };
  const first = (parsed.frames[0]?.value as { first?: unknown } | undefined)?.first;
  if (typeof first !== 'number') return null;
  let next = first;
  for (const f of parsed.frames.slice(1)) {
    if (!isRawCommit(f.value) || f.value.first !== next || f.value.last !== next)
      return { at: f.start, reason: `the frame at byte ${f.start} is not commit ${next}` };
    next++;
  }
  let at = -1;
  let named = 0;
  for (const c of parsed.copies) {
    const last = copyLast(c.value);
    if (last >= next && (at < 0 || c.start < at)) at = c.start;
    named = Math.max(named, last);
  }
  return at < 0 ? null : { at, reason: `a copy holds commits up to ${named}, but the frames end at ${next - 1}` };
}

/** The last commit a copy frame's value (segment.ts: its first and count only) says it holds; 0: unknown. */
function copyLast(v: unknown): number {
  const c = v as { first?: unknown; count?: unknown } | undefined;
  return isCount(c?.first) && isCount(c?.count) && c.count > 0 ? c.first + c.count - 1 : 0;
}

/**
 * The segment `buf` of run `runId` rebuilt past the damage at byte `at` (damageIn) from what is still
 * whole (see the top of this file), parsed; null when that cannot hold every commit.
 */
export function rebuildSegment(
  buf: Buffer,
  parsed: ParsedSegment,
  runId: string,
  at: number,
): { buf: Buffer; parsed: ParsedSegment } | null {
  const key = frameKey(runId);
  const pool = new Map<number, Buffer>();
  let header: Buffer | null = null;
  let named = 0;
  const offer = (n: number, bytes: Buffer) => {
    named = Math.max(named, n);
    if (!pool.has(n)) pool.set(n, bytes);
  };
  // Valid frames from the damage on first (they are the file's own), then every copy's.
  const after = scanFrames(buf, at, { key });
  for (const f of after)
    if (isRawCommit(f.value) && f.value.run_id === runId && f.value.first === f.value.last)
      offer(f.value.first, buf.subarray(f.start, f.end));
  const copyAt = new Set([
    ...parsed.copies.map((f) => f.start),
    ...after.filter((f) => isCopyBody(f.value)).map((f) => f.start),
  ]);
  for (const c of copyAt) {
    const read = readCopy(buf, c, key);
    if (!read) continue;
    header ??= read.header;
    for (const [n, bytes] of read.frames) offer(n, bytes);
  }
  const before = parsed.frames.filter((f) => f.end <= at);
  let prefix: Buffer;
  let next: number;
  if (before.length > 0) {
    prefix = buf.subarray(0, at);
    const last = before.at(-1)!.value;
    const first = (before[0]!.value as { first?: unknown }).first;
    next = before.length > 1 && isRawCommit(last) ? last.last + 1 : typeof first === 'number' ? first : NaN;
  } else {
    if (!header) return null;
    // The header from a copy; the witness area where it was, if it still reads (damage in place), else blank.
    const inPlace = buf.length >= header.length + WITNESS_AREA && readWitnessArea(buf, header.length).kind === 'ok';
    const witness = inPlace ? buf.subarray(header.length, header.length + WITNESS_AREA) : blankArea();
    prefix = Buffer.concat([header, witness]);
    const first = (readFrame(header, 0) as { ok: true; frame: { value: { first?: unknown } } }).frame.value.first;
    next = typeof first === 'number' ? first : NaN;
  }
  if (!Number.isSafeInteger(next) || !pool.has(next)) return null;
  const parts = [prefix];
  for (; pool.has(next); next++) parts.push(pool.get(next)!);
  if (named >= next) return null; // a commit nothing holds whole is missing: a gap, not a rebuild
  let out = Buffer.concat(parts);
  let reparsed = parseSegment(out, { runId });
  if (reparsed.stop || reparsed.corrected.length > 0) return null;
  const copy = copyFrameFor(out, reparsed, key);
  if (copy) {
    out = Buffer.concat([out, copy]);
    reparsed = parseSegment(out, { runId });
    if (reparsed.stop) return null;
  }
  return damageIn(reparsed) ? null : { buf: out, parsed: reparsed };
}
