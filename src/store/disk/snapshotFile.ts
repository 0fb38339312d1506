// A compacted run's snapshot.json, version 3: the commits 1..N as checksummed frames (segment.ts's
// framing), written twice in one file, so one bad sector, a bit flip, a truncation or a zeroed block
// loses nothing — each frame is taken from whichever copy still checks out — and the damage is
// reported, naming the file. (Version 2 was one enveloped JSON document: one bad byte lost the run.)
//
//   {"schema_version":3,"kind":"snapshot",…}\n   version line: a reader of version 2 refuses the
//                                               file as newer (and leaves it alone) instead of
//                                               taking it for damage; this reader goes by the frames
//   header frame  {"snapshot":3,"run_id","first":1,"last":N,"meta","chunks":K,"ops":M}
//   chunk frames  {"i":0,"ops":[…]} … {"i":K-1,"ops":[…]}   the commit's ops in order, ≈ 16 KB each
//   4 KB gap      so one damaged 4 KB block cannot touch the same frame in both copies
//   the same header and chunk frames again, byte for byte
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { RunMeta } from '../api/schema';
import type { RawCommit } from './commit';
import { encodeFrame, frameOfJson, readFrame, scanFrames, type Frame } from './segment';

export const SNAPSHOT_VERSION = 3;
export const SNAPSHOT_CHUNK_BYTES = 16 * 1024;
const GAP_BYTES = 4096;
const VERSION_LINE =
  `{"schema_version":${SNAPSHOT_VERSION},"kind":"snapshot","sha256":"${'0'.repeat(64)}",` +
  `"body":"framed: a header and chunk frames, then a gap, then the same frames again"}\n`;
const GAP = Buffer.concat([Buffer.alloc(GAP_BYTES - 1, 0x20), Buffer.from('\n')]);

interface Header {
  snapshot: number;
  run_id: string;
  first: number;
  last: number;
  witnessed?: true;
  meta: RunMeta;
  chunks: number;
  ops: number;
}

const nat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function asHeader(v: unknown): Header | null {
  const h = v as Partial<Header> | null;
  if (typeof h !== 'object' || h === null || !nat(h.snapshot) || typeof h.run_id !== 'string') return null;
  if (!nat(h.first) || !nat(h.last) || !nat(h.chunks) || !nat(h.ops) || !RunMeta.safeParse(h.meta).success) return null;
  return h as Header;
}

function asChunk(v: unknown): { i: number; ops: unknown[] } | null {
  const c = v as { i?: unknown; ops?: unknown } | null;
  return typeof c === 'object' && c !== null && nat(c.i) && Array.isArray(c.ops) ? { i: c.i, ops: c.ops } : null;
}

/** The file's bytes for a compacted commit (its ops already encoded): each op serialised once. */
export function encodeSnapshot(raw: RawCommit, chunkBytes = SNAPSHOT_CHUNK_BYTES): Buffer {
  const chunks: Buffer[] = [];
  let part: string[] = [];
  let size = 0;
  const flush = () => {
    chunks.push(frameOfJson(`{"i":${chunks.length},"ops":[${part.join(',')}]}`));
    part = [];
    size = 0;
  };
  for (const op of raw.ops) {
    const text = JSON.stringify(op);
    if (part.length > 0 && size + text.length > chunkBytes) flush();
    part.push(text);
    size += text.length + 1;
  }
  if (part.length > 0 || chunks.length === 0) flush();
  const header: Header = {
    snapshot: SNAPSHOT_VERSION,
    run_id: raw.run_id,
    first: raw.first,
    last: raw.last,
    ...(raw.witnessed ? { witnessed: true as const } : {}),
    meta: raw.meta!,
    chunks: chunks.length,
    ops: raw.ops.length,
  };
  const copy = Buffer.concat([encodeFrame(header), ...chunks]);
  return Buffer.concat([Buffer.from(VERSION_LINE, 'latin1'), copy, GAP, copy]);
}

/** Whether the bytes are a framed snapshot (version 3 on): version 2's envelope holds no raw tab and no such kind. */
export const isFramedSnapshot = (buf: Buffer): boolean =>
  buf.includes(0x09) || buf.subarray(0, 64).includes('"kind":"snapshot"');

export interface ReadSnapshot {
  raw: RawCommit;
  /** What was wrong with the file although every frame was found in one copy or the other (null: nothing). */
  damaged: string | null;
}

/**
 * Reads a framed snapshot: the first copy in order when it checks out and the second copy is the same
 * bytes (one comparison); otherwise every frame that checks out anywhere, each chunk from either copy.
 * Throws AgentCheckpointCorruptionError (naming the file and the chunks no copy holds) or, for a newer
 * version, SchemaVersionError.
 */
export function decodeSnapshot(buf: Buffer, file: string, runId: string): ReadSnapshot {
  const bad = (why: string) => new AgentCheckpointCorruptionError(`${file} is corrupt: ${why}`, runId, file);
  const lineEnd = buf.indexOf(0x0a);
  const first =
    lineEnd >= 0 ? inOrder(buf, lineEnd + 1, file) : ({ ok: false, at: 0, reason: 'no version line' } as const);
  if (first.ok) {
    checkHeader(first.header, file, runId, bad);
    const { start, end } = first;
    const second = end + GAP_BYTES;
    const same =
      buf.length === second + (end - start) &&
      buf.compare(buf, start, end, second, buf.length) === 0 &&
      GAP.compare(buf, end, second) === 0;
    const damaged = !same
      ? `its second copy or the gap before it ${buf.length < second + (end - start) ? 'is cut short' : 'differs from what was written'} (the first copy is whole)`
      : buf.toString('latin1', 0, start) !== VERSION_LINE
        ? 'its version line is damaged (the frames are whole)'
        : null;
    return { raw: rawOf(first.header, first.chunks), damaged };
  }
  // Frame by frame, from either copy.
  let header: Header | null = null;
  const chunks = new Map<number, unknown[]>();
  let newer: number | null = null;
  for (const f of scanFrames(buf, 0)) {
    const h = asHeader(f.value);
    if (h) {
      if (h.snapshot > SNAPSHOT_VERSION) newer = h.snapshot;
      else if (!header && h.run_id === runId) header = h;
      continue;
    }
    const c = asChunk(f.value);
    if (c && !chunks.has(c.i)) chunks.set(c.i, c.ops);
  }
  if (newer !== null) throw new SchemaVersionError(file, newer, SNAPSHOT_VERSION);
  const where = `at byte ${first.at} (${first.reason})`;
  if (!header) throw bad(`no copy of its header frame checks out (the first copy fails ${where})`);
  checkHeader(header, file, runId, bad);
  const missing: number[] = [];
  const parts: unknown[][] = [];
  for (let i = 0; i < header.chunks; i++) {
    const c = chunks.get(i);
    if (c) parts.push(c);
    else missing.push(i);
  }
  if (missing.length > 0)
    throw bad(
      `chunk${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${header.chunks} ${missing.length > 1 ? 'are' : 'is'} damaged in both copies (the first copy fails ${where})`,
    );
  const raw = rawOf(header, parts);
  if (raw.ops.length !== header.ops) throw bad(`its chunks hold ${raw.ops.length} ops, its header says ${header.ops}`);
  return { raw, damaged: `damaged ${where}; every frame was read from its other copy` };
}

type InOrder =
  | { ok: true; header: Header; chunks: unknown[][]; start: number; end: number }
  | { ok: false; at: number; reason: string };

/** The first copy, frame after frame from `start`. */
function inOrder(buf: Buffer, start: number, file: string): InOrder {
  const next = (at: number): Frame | { at: number; reason: string } => {
    const r = readFrame(buf, at);
    return r.ok ? r.frame : { at, reason: r.reason };
  };
  const h = next(start);
  if (!('value' in h)) return { ok: false, ...h };
  const header = asHeader(h.value);
  if (!header) return { ok: false, at: start, reason: 'its first frame is not a snapshot header' };
  if (header.snapshot > SNAPSHOT_VERSION) throw new SchemaVersionError(file, header.snapshot, SNAPSHOT_VERSION);
  const chunks: unknown[][] = [];
  let at = h.end;
  for (let i = 0; i < header.chunks; i++) {
    const f = next(at);
    if (!('value' in f)) return { ok: false, ...f };
    const c = asChunk(f.value);
    if (!c || c.i !== i) return { ok: false, at, reason: `the frame is not chunk ${i}` };
    chunks.push(c.ops);
    at = f.end;
  }
  const n = chunks.reduce((s, c) => s + c.length, 0);
  if (n !== header.ops) return { ok: false, at, reason: `its chunks hold ${n} ops, its header says ${header.ops}` };
  return { ok: true, header, chunks, start, end: at };
}

function checkHeader(h: Header, file: string, runId: string, bad: (why: string) => Error): void {
  if (h.snapshot > SNAPSHOT_VERSION) throw new SchemaVersionError(file, h.snapshot, SNAPSHOT_VERSION);
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
