// A compacted run's snapshot.json, version 5 (version 4's layout, with the run's end in front; a file of
// version 3 or 4 is read and rewritten on its run's next write): the commits 1..N as checksummed frames
// (segment.ts's framing), twice in one file — a deflated spare copy, then the plain copy — so one bad
// sector, a bit flip, a zeroed block, bytes cut out or the file cut short after its spare copy lose
// nothing: each chunk is taken from whichever copy still checks out, and the damage is reported,
// naming the file. (Version 2 was one enveloped JSON document: one bad byte lost the whole run.)
//
//   {"schema_version":5,"kind":"snapshot",…}\n   version line: a reader of version 2 refuses the
//                                               file as newer (and leaves it alone) instead of
//                                               taking it for damage; this reader goes by the frames
//   end frame     {"end":1,"run_id","last":N,"value":{…}} — what a view of the run's newest checkpoints
//                 needs (core/end.ts), read from the file's first bytes without the rest; a cache of
//                 what the commits hold: when it is damaged nothing is lost, the run is read whole
//   spare copy    header frame {"snapshot":5,"copy":"deflate",…}, chunk frames {"i":k,"z":"<base64>"}
//                 (each chunk's JSON, deflated: the spare costs about a sixth of the plain copy)
//   4 KB gap      so one damaged 4 KB block cannot touch both copies
//   plain copy    header frame {"snapshot":5,"copy":"json","run_id","first":1,"last":N,"meta","chunks":K,"ops":M}
//                 chunk frames {"i":0,"ops":[…]} … {"i":K-1,"ops":[…]}, the commit's ops in order, ≈ 16 KB each
// The plain copy comes last so a resume reads it as it is (no inflating); the spare first, so a file
// cut short loses only plain frames, which the spare holds.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import type { RawCommit } from './commit';
import { encodeFrame, frameOfJson, frameText, readFrame, scanFrames } from './segment';

export const SNAPSHOT_VERSION = 5;
/** The oldest framed snapshot this version reads. */
const SNAPSHOT_VERSION_READ = 3;
export const SNAPSHOT_CHUNK_BYTES = 16 * 1024;
const GAP_BYTES = 4096;
const versionLine = (v: number) =>
  `{"schema_version":${v},"kind":"snapshot","sha256":"${'0'.repeat(64)}",` +
  `"body":"framed: a deflated spare copy of the frames, a gap, then the frames"}\n`;
const VERSION_LINE = versionLine(SNAPSHOT_VERSION);
const GAP = Buffer.concat([Buffer.alloc(GAP_BYTES - 1, 0x20), Buffer.from('\n')]);
interface Header {
  snapshot: number;
  copy: 'json' | 'deflate';
  run_id: string;
  first: number;
  last: number;
  witnessed?: true;
  meta: RunMeta;
  chunks: number;
  ops: number;
}

const nat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A header frame of a later version (whatever else it holds): refused as newer, not taken for damage. */
function newerVersion(v: unknown): number | null {
  const n = (v as { snapshot?: unknown } | null)?.snapshot;
  return typeof n === 'number' && n > SNAPSHOT_VERSION ? n : null;
}

function asHeader(v: unknown): Header | null {
  const h = v as Partial<Header> | null;
  if (typeof h !== 'object' || h === null || !nat(h.snapshot) || typeof h.run_id !== 'string') return null;
  if (h.copy !== 'json' && h.copy !== 'deflate') return null;
  if (!nat(h.first) || !nat(h.last) || !nat(h.chunks) || !nat(h.ops) || !RunMeta.safeParse(h.meta).success) return null;
  return h as Header;
}

/** A chunk frame of either copy: its ops (the spare's inflated only when asked). */
function asChunk(v: unknown): { i: number; ops: () => unknown[] | null } | null {
  const c = v as { i?: unknown; ops?: unknown; z?: unknown } | null;
  if (typeof c !== 'object' || c === null || !nat(c.i)) return null;
  if (Array.isArray(c.ops)) {
    const ops = c.ops;
    return { i: c.i, ops: () => ops };
  }
  if (typeof c.z !== 'string') return null;
  const z = c.z;
  return { i: c.i, ops: () => inflated(z) };
}

function inflated(z: string): unknown[] | null {
  try {
    const v = JSON.parse(zlib.inflateRawSync(Buffer.from(z, 'base64')).toString('latin1')) as { ops?: unknown };
    return Array.isArray(v.ops) ? v.ops : null;
  } catch {
    return null; // the frame's checksum held, so only a writer bug lands here: the chunk counts as missing
  }
}

const deflateRaw = promisify(zlib.deflateRaw);

/**
 * The file's bytes for a compacted commit (its ops already encoded): each op serialised once. `end`:
 * the run's end as of its last commit (core/end.ts), written in front. The spare copy's chunks are
 * deflated on zlib's thread pool one at a time: compaction runs while the run works, and a 1000-step
 * run's ≈ 550 chunks took 80–95 ms of the extension host's thread in one go (deflateSync); one at a
 * time leaves the pool's other threads to the step's own writes and fsyncs. The encode takes longer
 * (a pool round trip per chunk) with the thread free meanwhile; two at a time measured no faster.
 */
export async function encodeSnapshot(
  raw: RawCommit,
  chunkBytes = SNAPSHOT_CHUNK_BYTES,
  end?: unknown,
): Promise<Buffer> {
  const plain: Buffer[] = [];
  /** Each plain chunk's JSON as written (non-ASCII escaped): inflating the spare gives back the same text. */
  const texts: Buffer[] = [];
  let part: string[] = [];
  let size = 0;
  const flush = () => {
    const frame = frameOfJson(`{"i":${plain.length},"ops":[${part.join(',')}]}`);
    texts.push(frame.subarray(frame.indexOf(0x09, frame.indexOf(0x09) + 1) + 1, frame.length - 1));
    plain.push(frame);
    part = [];
    size = 0;
  };
  for (const op of raw.ops) {
    const text = JSON.stringify(op);
    if (part.length > 0 && size + text.length > chunkBytes) flush();
    part.push(text);
    size += text.length + 1;
  }
  if (part.length > 0 || plain.length === 0) flush();
  const spare: Buffer[] = [];
  for (const [i, text] of texts.entries())
    spare.push(frameOfJson(`{"i":${i},"z":"${(await deflateRaw(text, { level: 1 })).toString('base64')}"}`));
  const header = (copy: Header['copy']): Header => ({
    snapshot: SNAPSHOT_VERSION,
    copy,
    run_id: raw.run_id,
    first: raw.first,
    last: raw.last,
    ...(raw.witnessed ? { witnessed: true as const } : {}),
    meta: raw.meta!,
    chunks: plain.length,
    ops: raw.ops.length,
  });
  return Buffer.concat([
    Buffer.from(VERSION_LINE, 'latin1'),
    ...(end === undefined ? [] : [encodeFrame({ end: 1, run_id: raw.run_id, last: raw.last, value: end })]),
    encodeFrame(header('deflate')),
    ...spare,
    GAP,
    encodeFrame(header('json')),
    ...plain,
  ]);
}

/** Whether the bytes are a framed snapshot (version 3 on): version 2's envelope holds no raw tab and no such kind. */
export const isFramedSnapshot = (buf: Buffer): boolean =>
  buf.includes(0x09) || buf.subarray(0, 64).includes('"kind":"snapshot"');

export interface ReadSnapshot {
  raw: RawCommit;
  /** What was wrong with the file although every frame was found in one copy or the other (null: nothing). */
  damaged: string | null;
  /** The version it was written in (older than SNAPSHOT_VERSION: rewritten on the run's next write). */
  version: number;
}

/**
 * Reads a framed snapshot: the spare copy's frames checked (checksums only, nothing inflated), the
 * gap, then the plain copy in order; when anything there does not check out, every frame that checks
 * out anywhere, each chunk from the plain copy or else the spare. Throws AgentCheckpointCorruptionError
 * (naming the file and the chunks no copy holds) or, for a newer version, SchemaVersionError.
 */
export function decodeSnapshot(buf: Buffer, file: string, runId: string): ReadSnapshot {
  const bad = (why: string) => new AgentCheckpointCorruptionError(`${file} is corrupt: ${why}`, runId, file);
  const lineEnd = buf.indexOf(0x0a);
  const fast =
    lineEnd >= 0 ? inOrder(buf, lineEnd + 1, file) : ({ ok: false, at: 0, reason: 'no version line' } as const);
  if (fast.ok) {
    checkHeader(fast.header, file, runId, bad);
    const damaged =
      buf.toString('latin1', 0, lineEnd + 1) !== versionLine(fast.header.snapshot)
        ? 'its version line is damaged (the frames are whole)'
        : null;
    return { raw: rawOf(fast.header, fast.chunks), damaged, version: fast.header.snapshot };
  }
  // Frame by frame, from either copy.
  let header: Header | null = null;
  const plain = new Map<number, () => unknown[] | null>();
  const spare = new Map<number, () => unknown[] | null>();
  let newer: number | null = null;
  for (const f of scanFrames(buf, 0)) {
    newer ??= newerVersion(f.value);
    const h = asHeader(f.value);
    if (h) {
      if (h.run_id === runId && (!header || h.copy === 'json')) header = h;
      continue;
    }
    const c = asChunk(f.value);
    const into = (f.value as { z?: unknown }).z === undefined ? plain : spare;
    if (c && !into.has(c.i)) into.set(c.i, c.ops);
  }
  if (newer !== null) throw new SchemaVersionError(file, newer, SNAPSHOT_VERSION);
  const where = `at byte ${fast.at} (${fast.reason})`;
  if (!header) throw bad(`no copy of its header frame checks out (the file fails ${where})`);
  checkHeader(header, file, runId, bad);
  const missing: number[] = [];
  const parts: unknown[][] = [];
  for (let i = 0; i < header.chunks; i++) {
    const ops = plain.get(i)?.() ?? spare.get(i)?.();
    if (ops) parts.push(ops);
    else missing.push(i);
  }
  if (missing.length > 0)
    throw bad(
      `chunk${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${header.chunks} ${missing.length > 1 ? 'are' : 'is'} damaged in both copies (the file fails ${where})`,
    );
  const raw = rawOf(header, parts);
  if (raw.ops.length !== header.ops) throw bad(`its chunks hold ${raw.ops.length} ops, its header says ${header.ops}`);
  return {
    raw,
    damaged: `damaged ${where}; every chunk was read from a copy that checks out`,
    version: header.snapshot,
  };
}

type InOrder = { ok: true; header: Header; chunks: unknown[][] } | { ok: false; at: number; reason: string };

/** The whole file in order from `start`: the spare copy (checksums only), the gap, the plain copy. */
function inOrder(buf: Buffer, start: number, file: string): InOrder {
  const copy = (at: number, kind: Header['copy']) => {
    // The plain copy is parsed from one string (the spare's frames are only checked).
    const text = kind === 'json' ? frameText(buf, at) : undefined;
    const h = readFrame(buf, at, { text });
    if (!h.ok) return { ok: false as const, at, reason: h.reason };
    const newer = newerVersion(h.frame.value);
    if (newer !== null) throw new SchemaVersionError(file, newer, SNAPSHOT_VERSION);
    const header = asHeader(h.frame.value);
    if (!header || header.copy !== kind)
      return { ok: false as const, at, reason: `the frame is not the ${kind} copy's header` };
    const chunks: unknown[][] = [];
    let next = h.frame.end;
    for (let i = 0; i < header.chunks; i++) {
      // The spare's frames: checksums only (the writer put them in order; nothing is inflated unless needed).
      const f = readFrame(buf, next, { parse: kind === 'json', text });
      if (!f.ok) return { ok: false as const, at: next, reason: f.reason };
      if (kind === 'json') {
        const c = (f.frame.value as { i?: unknown }).i === i ? asChunk(f.frame.value) : null;
        if (!c) return { ok: false as const, at: next, reason: `the frame is not chunk ${i}` };
        chunks.push(c.ops()!);
      }
      next = f.frame.end;
    }
    return { ok: true as const, header, chunks, end: next };
  };
  const front = readFrame(buf, start, { parse: false });
  const s = copy(front.ok && isEndFrame(buf, front.frame.start) ? front.frame.end : start, 'deflate');
  if (!s.ok) return s;
  if (buf.length < s.end + GAP_BYTES || GAP.compare(buf, s.end, s.end + GAP_BYTES) !== 0)
    return { ok: false, at: s.end, reason: 'the gap between the copies is damaged' };
  const p = copy(s.end + GAP_BYTES, 'json');
  if (!p.ok) return p;
  if (p.end !== buf.length) return { ok: false, at: p.end, reason: 'bytes follow the last frame' };
  const n = p.chunks.reduce((sum, c) => sum + c.length, 0);
  if (n !== p.header.ops || s.header.chunks !== p.header.chunks)
    return { ok: false, at: p.end, reason: `its chunks hold ${n} ops, its header says ${p.header.ops}` };
  return { ok: true, header: p.header, chunks: p.chunks };
}

function checkHeader(h: Header, file: string, runId: string, bad: (why: string) => Error): void {
  if (h.snapshot > SNAPSHOT_VERSION) throw new SchemaVersionError(file, h.snapshot, SNAPSHOT_VERSION);
  if (h.snapshot < SNAPSHOT_VERSION_READ) throw bad(`its header says version ${h.snapshot}, which was never framed`);
  if (h.run_id !== runId || h.meta.run_id !== runId || h.first !== 1 || h.last < 1)
    throw bad(`it holds commits ${h.first}-${h.last} of run ${h.run_id}`);
}

function rawOf(h: Header, chunks: unknown[][]): RawCommit {
  return {
    run_id: h.run_id,
    first: h.first,
    last: h.last,
    meta: h.meta,
    ...(h.witnessed ? { witnessed: true as const } : {}),
    ops: chunks.length === 1 ? chunks[0]! : chunks.flat(),
  };
}

/** Whether the frame at `at` is an end frame (its JSON starts so; the checksum was checked by the caller). */
function isEndFrame(buf: Buffer, at: number): boolean {
  const body = buf.indexOf(0x09, buf.indexOf(0x09, at) + 1) + 1;
  return buf.toString('latin1', body, body + 8) === '{"end":1';
}

/** Bytes to read from the start of the file to have its end frame whole (the head read so far: `head`); null: none there. */
export function endFrameBytes(head: Buffer): number | null {
  const lineEnd = head.indexOf(0x0a);
  if (lineEnd < 0 || head.toString('latin1', 0, lineEnd + 1) !== VERSION_LINE) return null;
  const m = /^(\d{1,12})\t[0-9a-f]{8}\t\{"end":1/.exec(head.toString('latin1', lineEnd + 1, lineEnd + 40));
  return m ? lineEnd + 1 + m[1]!.length + 10 + Number(m[1]) + 1 : null;
}

/**
 * The end frame at the start of a snapshot of this version, if it is whole and checks out: the commit
 * it describes the run at, and its value (unchecked: the caller checks it against its schemas).
 */
export function readEndFrame(head: Buffer, runId: string): { last: number; value: unknown } | null {
  const lineEnd = head.indexOf(0x0a);
  if (lineEnd < 0 || head.toString('latin1', 0, lineEnd + 1) !== VERSION_LINE) return null;
  const f = readFrame(head, lineEnd + 1);
  if (!f.ok) return null;
  const v = f.frame.value as { end?: unknown; run_id?: unknown; last?: unknown; value?: unknown } | null;
  if (typeof v !== 'object' || v === null || v.end !== 1 || v.run_id !== runId || !nat(v.last) || v.last < 1)
    return null;
  return { last: v.last, value: v.value };
}
