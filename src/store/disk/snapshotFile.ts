// A compacted run's snapshot.json (docs/format.md): the commits 1..N as checksummed frames (frame.ts),
// twice in one file — a deflated spare copy, then the plain copy — so one bad sector, a bit flip, a
// zeroed block, bytes cut out or the file cut short after its spare copy lose nothing: each chunk is
// taken from whichever copy still checks out, and the damage is reported, naming the file. Its ops come
// in two parts: the run's state, then its history in chunks of their own, parsed when asked for
// (compacted.ts).
//
//   {"schema_version":7,"kind":"snapshot",…}\n   version line: a reader of another version refuses
//                                               the file (and leaves it alone) instead of taking it
//                                               for damage; this reader goes by the frames
//   end frame     {"end":1,"run_id","last":N,"value":{…}} — what a view of the run's newest checkpoints
//                 needs (core/end.ts), read from the file's first bytes without the rest; a cache of
//                 what the commits hold: when it is damaged nothing is lost, the run is read whole
//   spare copy    header frame {"snapshot":7,"copy":"deflate",…}, chunk frames {"i":k,"z":"<base64>"}
//                 (each chunk's whole JSON, long strings in it, deflated: about a sixth of the plain copy)
//   4 KB gap      so one damaged 4 KB block cannot touch both copies
//   plain copy    header frame {"snapshot":7,"copy":"json","run_id","first":1,"last":N,"meta","chunks":K,"ops":M,"raw":R,
//                 "history":{"chunk":H,"ops":O}} — chunks H..K-1 hold the history's O ops, checked at load
//                 and parsed when first asked for
//                 chunk frames {"i":0,"ops":[…]} … {"i":K-1,"ops":[…],"raw":[[length, …path], …]}, the
//                 commit's ops in order, about 16 KB each; then R raw frames, one for each chunk with a "raw"
//                 list, in chunk order: the body `~k~` and that chunk's long strings, one after another.
// The plain copy comes last so a resume reads it as it is (no inflating); the spare first, so a file
// cut short loses only plain frames, which the spare holds.
//
// Raw strings: a string of at least RAW_MIN characters, none of them a tab or above U+00FF —
// a message's content, a tool's output — is written into its chunk's raw frame as its bytes (latin1), and
// in the chunk's JSON as 0, with its length and path listed under "raw". Reading hands each long string
// out as a slice of the one string the plain copy is read as (frame.ts, frameText), which V8 makes
// without copying: a resume neither scans those bytes for escapes (most of JSON.parse's time on a long
// run's plain copy) nor allocates them again for the collector to copy and promote. That string lives
// as long as the run's strings do, the JSON around them with it. No raw string holds a tab, so no frame start can be
// found inside one by a scan after damage (every body stays free of tabs, as JSON's are). A chunk is read
// from the plain copy only when its raw frame checks out too; else from the spare, which holds it whole.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { isJsonObject } from '../../common/json';
import { RunMeta } from '../api/schema';
import { parseFast } from '../core/fastValid';
import { merged } from '../core/copy';
import type { RawCommit } from './commit';
import { asciiJson, encodeFrame, frameOfJson, frameOfLatin1, frameText, RawBody, readFrame, scanFrames } from './frame';

/** The snapshot version of format 1 (docs/format.md): any other is refused, never read as damage. */
export const SNAPSHOT_VERSION = 7;
export const SNAPSHOT_CHUNK_BYTES = 16 * 1024;
const GAP_BYTES = 4096;
const VERSION_LINE =
  `{"schema_version":${SNAPSHOT_VERSION},"kind":"snapshot","sha256":"${'0'.repeat(64)}",` +
  `"body":"framed: a deflated spare copy of the frames, a gap, then the frames"}\n`;
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
  /** The plain copy's raw frames (absent: none). */
  raw?: number;
  /**
   * The chunks from `chunk` on hold the history (`ops` of the ops; compacted.ts), read when first
   * asked for — the chunks before it are what a run needs to go on. Absent: a run without records.
   */
  history?: { chunk: number; ops: number };
}

const nat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A header frame of another version (whatever else it holds): refused, not taken for damage. */
function otherVersion(v: unknown): number | null {
  const n = (v as { snapshot?: unknown } | null)?.snapshot;
  return typeof n === 'number' && n !== SNAPSHOT_VERSION ? n : null;
}

function asHeader(v: unknown): Header | null {
  const h = v as Partial<Header> | null;
  if (typeof h !== 'object' || h === null || !nat(h.snapshot) || typeof h.run_id !== 'string') return null;
  if (h.copy !== 'json' && h.copy !== 'deflate') return null;
  if (!nat(h.first) || !nat(h.last) || !nat(h.chunks) || !nat(h.ops)) return null;
  if (!parseFast(RunMeta, h.meta).success) return null;
  if (h.raw !== undefined && !(nat(h.raw) && h.raw <= h.chunks)) return null;
  const y = h.history as Partial<Header['history']> | undefined;
  if (y !== undefined && !(nat(y?.chunk) && y.chunk <= h.chunks && nat(y.ops) && y.ops <= h.ops)) return null;
  return h as Header;
}

/**
 * A chunk frame of either copy: its ops (the spare's inflated only when asked), and for a plain chunk
 * the list of its raw strings (their places in `ops` hold 0 until putRaw fills them).
 */
function asChunk(v: unknown): { i: number; ops: () => unknown[] | null; raw?: unknown } | null {
  const c = v as { i?: unknown; ops?: unknown; z?: unknown; raw?: unknown } | null;
  if (typeof c !== 'object' || c === null || !nat(c.i)) return null;
  if (Array.isArray(c.ops)) {
    const ops = c.ops;
    return c.raw === undefined ? { i: c.i, ops: () => ops } : { i: c.i, ops: () => ops, raw: c.raw };
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

/** A string this long or longer is written raw, unless it holds a character in NOT_RAW. */
export const RAW_MIN = 256;
/** A tab (frame starts are found by their tabs) or a character of more than one byte in latin1. */
const NOT_RAW = /[\t\u0100-\uffff]/;
type Path = (string | number)[];

/**
 * `v` with each string that is written raw replaced by 0 — the strings pushed to `out`, their
 * `[length, …path]` to `refs`, in the order JSON.stringify meets them — or `v` itself when it holds
 * none (nothing copied). Stored ops are JSON data: no toJSON, no cycles.
 */
function withoutRaw(v: unknown, path: Path, refs: Path[], out: string[]): unknown {
  if (typeof v === 'string') {
    if (v.length < RAW_MIN || NOT_RAW.test(v)) return v;
    refs.push([v.length, ...path]);
    out.push(v);
    return 0;
  }
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      const w = withoutRaw(v[i], path, refs, out);
      path.pop();
      if (w !== v[i]) (copy ??= v.slice())[i] = w;
    }
    return copy ?? v;
  }
  let copy: Record<string, unknown> | undefined;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    path.push(k);
    const w = withoutRaw(x, path, refs, out);
    path.pop();
    // (merged defines a `__proto__` key as an own property: the assignment then sets that property)
    if (w !== x) (copy ??= merged<Record<string, unknown>>(v))[k] = w;
  }
  return copy ?? v;
}

/**
 * Puts a plain chunk's raw strings back: each a slice of `text` (no copy), from `at` on,
 * where its `[length, …path]` says — a 0 the chunk's JSON holds, in an own property. False when a
 * path does not lead to such a 0 or the lengths do not add up to `end`: the chunk is then not taken
 * from this copy.
 */
function putRaw(ops: unknown[], refs: unknown, text: string, at: number, end: number): boolean {
  if (!Array.isArray(refs) || refs.length === 0) return false;
  for (const ref of refs as unknown[]) {
    if (!Array.isArray(ref) || ref.length < 2 || !nat(ref[0]) || at + ref[0] > end) return false;
    let holder: unknown = ops;
    for (let j = 1; j < ref.length; j++) {
      const k: unknown = ref[j];
      if (
        Array.isArray(holder)
          ? !(nat(k) && k < holder.length)
          : !(isJsonObject(holder) && typeof k === 'string' && Object.hasOwn(holder, k))
      )
        return false;
      const h = holder as Record<string | number, unknown>;
      if (j < ref.length - 1) holder = h[k as string];
      else {
        if (h[k as string] !== 0) return false;
        h[k as string] = text.slice(at, at + ref[0]);
        at += ref[0];
      }
    }
  }
  return at === end;
}

/** A raw frame's body: `~k~` (the chunk it belongs to), then its strings; null: not one. */
function rawOfChunk(buf: Buffer, at: number, end: number): { i: number; from: number } | null {
  const m = /^~(\d{1,9})~/.exec(buf.toString('latin1', at, Math.min(end, at + 12)));
  return m ? { i: Number(m[1]), from: at + m[0].length } : null;
}

/**
 * The file's bytes for a compacted commit (its ops already encoded): each op serialised once. `end`:
 * the run's end as of its last commit (core/end.ts), written in front. The spare copy's chunks are
 * deflated on zlib's thread pool one at a time: compaction runs while the run works, and deflating a
 * long run's chunks in one go (deflateSync) would hold the extension host's thread; one at a time
 * leaves the pool's other threads to the step's own writes and fsyncs, and the thread free meanwhile.
 */
export async function encodeSnapshot(
  raw: RawCommit,
  chunkBytes = SNAPSHOT_CHUNK_BYTES,
  end?: unknown,
  /** Where the history begins in `raw.ops` (compacted.ts): it starts a chunk of its own. */
  historyFrom?: number,
): Promise<Buffer> {
  const plain: Buffer[] = [];
  /** The plain copy's raw frames, in chunk order. */
  const rawFrames: Buffer[] = [];
  /** Each chunk's whole JSON (non-ASCII escaped, its long strings in it): what the spare holds. */
  const texts: Buffer[] = [];
  let part: string[] = [];
  let partOps: unknown[] = [];
  let size = 0;
  const flush = () => {
    const i = plain.length;
    const whole = asciiJson(`{"i":${i},"ops":[${part.join(',')}]}`);
    texts.push(Buffer.from(whole, 'latin1'));
    const refs: Path[] = [];
    const strings: string[] = [];
    let split: string[] | undefined;
    for (const [j, op] of partOps.entries()) {
      const w = withoutRaw(op, [j], refs, strings);
      if (w !== op) (split ??= part.slice())[j] = JSON.stringify(w);
    }
    if (split) {
      plain.push(frameOfJson(`{"i":${i},"ops":[${split.join(',')}],"raw":${JSON.stringify(refs)}}`));
      rawFrames.push(frameOfLatin1(`~${i}~${strings.join('')}`));
    } else plain.push(frameOfLatin1(whole));
    part = [];
    partOps = [];
    size = 0;
  };
  let historyChunk: number | undefined;
  for (const [k, op] of raw.ops.entries()) {
    const text = JSON.stringify(op);
    if (k === historyFrom) {
      if (part.length > 0) flush();
      historyChunk = plain.length;
    } else if (part.length > 0 && size + text.length > chunkBytes) flush();
    part.push(text);
    partOps.push(op);
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
    ...(copy === 'json' ? { raw: rawFrames.length } : {}),
    ...(historyChunk !== undefined ? { history: { chunk: historyChunk, ops: raw.ops.length - historyFrom! } } : {}),
  });
  return Buffer.concat([
    Buffer.from(VERSION_LINE, 'latin1'),
    ...(end === undefined ? [] : [encodeFrame({ end: 1, run_id: raw.run_id, last: raw.last, value: end })]),
    encodeFrame(header('deflate')),
    ...spare,
    GAP,
    encodeFrame(header('json')),
    ...plain,
    ...rawFrames,
  ]);
}

export interface ReadSnapshot {
  /** Its ops before the history (the run's state; compacted.ts). */
  raw: RawCommit;
  /**
   * The history's ops, read from the file's bytes when called (checksums already checked); throws when
   * they do not read back (only a writer bug lands there). null: the file has none.
   */
  history: (() => unknown[]) | null;
  /** What was wrong with the file although every frame was found in one copy or the other (null: nothing). */
  damaged: string | null;
}

/**
 * Reads a framed snapshot: the spare copy's frames checked (checksums only, nothing inflated), the
 * gap, then the plain copy in order; when anything there does not check out, every frame that checks
 * out anywhere, each chunk from the plain copy or else the spare. Throws AgentCheckpointCorruptionError
 * (naming the file and the chunks no copy holds) or, for another version, SchemaVersionError.
 */
export function decodeSnapshot(buf: Buffer, file: string, runId: string): ReadSnapshot {
  const bad = (why: string) => new AgentCheckpointCorruptionError(`${file} is corrupt: ${why}`, runId, file);
  const lineEnd = buf.indexOf(0x0a);
  const fast =
    lineEnd >= 0 ? inOrder(buf, lineEnd + 1, file) : ({ ok: false, at: 0, reason: 'no version line' } as const);
  if (fast.ok) {
    checkHeader(fast.header, file, runId, bad);
    const damaged =
      buf.toString('latin1', 0, lineEnd + 1) !== VERSION_LINE
        ? 'its version line is damaged (the frames are whole)'
        : null;
    return { raw: rawOf(fast.header, fast.chunks), history: fast.history, damaged };
  }
  // Frame by frame, from either copy.
  let header: Header | null = null;
  const plain = new Map<number, () => unknown[] | null>();
  const spare = new Map<number, () => unknown[] | null>();
  let other: number | null = null;
  /** The plain copy's raw frames found, by chunk: where their strings are. */
  const rawBodies = new Map<number, { from: number; end: number }>();
  for (const f of scanFrames(buf, 0, { raw: true })) {
    if (f.value instanceof RawBody) {
      const r = rawOfChunk(buf, f.value.at, f.value.end);
      if (r && !rawBodies.has(r.i)) rawBodies.set(r.i, { from: r.from, end: f.value.end });
      continue;
    }
    other ??= otherVersion(f.value);
    const h = asHeader(f.value);
    if (h) {
      if (h.run_id === runId && (!header || h.copy === 'json')) header = h;
      continue;
    }
    const c = asChunk(f.value);
    const into = (f.value as { z?: unknown }).z === undefined ? plain : spare;
    if (!c || into.has(c.i)) continue;
    const { i, ops, raw } = c;
    // A plain chunk with raw strings: taken only with its raw frame, whole and fitting it.
    into.set(
      i,
      raw === undefined
        ? ops
        : () => {
            const r = rawBodies.get(i);
            const v = ops()!;
            return r && putRaw(v, raw, buf.toString('latin1', r.from, r.end), 0, r.end - r.from) ? v : null;
          },
    );
  }
  if (other !== null) throw new SchemaVersionError(file, other, SNAPSHOT_VERSION);
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
  const h = header.history;
  const eager = h ? parts.slice(0, h.chunk) : parts;
  const later = h ? parts.slice(h.chunk).flat() : [];
  const raw = rawOf(header, eager);
  if (raw.ops.length + later.length !== header.ops || later.length !== (h?.ops ?? 0))
    throw bad(`its chunks hold ${raw.ops.length + later.length} ops, its header says ${header.ops}`);
  return {
    raw,
    history: h ? constantly(later) : null,
    damaged: `damaged ${where}; every chunk was read from a copy that checks out`,
  };
}

/** A function returning `v` (made out here so that it keeps nothing else of its caller, such as the file's buffer). */
const constantly =
  <T>(v: T): (() => T) =>
  () =>
    v;

/**
 * Reads a history's chunks (their checksums were checked at load) from `src`: each body's
 * JSON, its raw strings put back from `raw`. A function of its own so that it keeps only these,
 * never the file's buffer. Throws when a chunk does not read back (only a writer bug lands there).
 */
function historyReader(
  src: { s: string; from: number },
  lazy: readonly { from: number; end: number }[],
  first: number,
  bodies: ReadonlyMap<number, { from: number; end: number }>,
  raw: { s: string; from: number },
): () => unknown[] {
  return () => {
    const ops: unknown[] = [];
    for (const [k, body] of lazy.entries()) {
      const i = first + k;
      let c: ReturnType<typeof asChunk> = null;
      try {
        const v: unknown = JSON.parse(src.s.slice(body.from - src.from, body.end - src.from));
        c = (v as { i?: unknown } | null)?.i === i ? asChunk(v) : null;
      } catch {
        c = null;
      }
      const part = c?.ops();
      if (!c || !part) throw new Error(`its history chunk ${i} does not read back`);
      const b = bodies.get(i);
      if (
        (c.raw === undefined) !== (b === undefined) ||
        (b && !putRaw(part, c.raw, raw.s, b.from - raw.from, b.end - raw.from))
      )
        throw new Error(`the raw strings of its history chunk ${i} do not fit it`);
      for (const op of part) ops.push(op);
    }
    return ops;
  };
}

type InOrder =
  | { ok: true; header: Header; chunks: unknown[][]; history: (() => unknown[]) | null }
  | { ok: false; at: number; reason: string };

/** The whole file in order from `start`: the spare copy (checksums only), the gap, the plain copy. */
function inOrder(buf: Buffer, start: number, file: string): InOrder {
  const copy = (at: number, kind: Header['copy']) => {
    // The plain copy is parsed from one string (the spare's frames are only checked).
    const text = kind === 'json' ? frameText(buf, at) : undefined;
    const h = readFrame(buf, at, { text });
    if (!h.ok) return { ok: false as const, at, reason: h.reason };
    const other = otherVersion(h.frame.value);
    if (other !== null) throw new SchemaVersionError(file, other, SNAPSHOT_VERSION);
    const header = asHeader(h.frame.value);
    if (!header || header.copy !== kind)
      return { ok: false as const, at, reason: `the frame is not the ${kind} copy's header` };
    const chunks: unknown[][] = [];
    /** The plain chunks with raw strings, in order: their raw frames follow the last chunk. */
    const withRaw: { i: number; ops: unknown[]; refs: unknown }[] = [];
    /** The history's chunk bodies, [from, end) in `buf` (checked, not parsed: compacted.ts reads them when asked). */
    const lazy: { from: number; end: number }[] = [];
    const historyChunk = kind === 'json' ? (header.history?.chunk ?? header.chunks) : header.chunks;
    let next = h.frame.end;
    for (let i = 0; i < header.chunks; i++) {
      // The spare's frames and the history's: checksums only (nothing is inflated or parsed unless needed).
      const parse = kind === 'json' && i < historyChunk;
      const f = readFrame(buf, next, { parse, text });
      if (!f.ok) return { ok: false as const, at: next, reason: f.reason };
      if (parse) {
        const c = (f.frame.value as { i?: unknown }).i === i ? asChunk(f.frame.value) : null;
        if (!c) return { ok: false as const, at: next, reason: `the frame is not chunk ${i}` };
        chunks.push(c.ops()!);
        if (c.raw !== undefined) withRaw.push({ i, ops: chunks[i]!, refs: c.raw });
      } else if (kind === 'json') lazy.push({ from: buf.indexOf(0x09, next) + 10, end: f.frame.end - 1 });
      next = f.frame.end;
    }
    let history: (() => unknown[]) | null = null;
    if (kind === 'json') {
      const rawFrames = header.raw ?? 0;
      if (lazy.length === 0 && withRaw.length !== rawFrames)
        return {
          ok: false as const,
          at: next,
          reason: `${withRaw.length} of its chunks have raw strings, its header says ${rawFrames}`,
        };
      // The raw frames: each long string a slice of the copy's one string (none copied; it is kept as
      // long as they are — the plain copy's text, where a string of their own would be fresh memory).
      const start = next;
      const bodies = new Map<number, { from: number; end: number }>();
      for (let k = 0; k < rawFrames; k++) {
        const f = readFrame(buf, next, { raw: true });
        if (!f.ok) return { ok: false as const, at: next, reason: f.reason };
        const body = f.frame.value instanceof RawBody ? f.frame.value : null;
        const r = body && rawOfChunk(buf, body.at, body.end);
        const want = lazy.length === 0 ? withRaw[k]!.i : null;
        if (!r || (want !== null && r.i !== want) || r.i >= header.chunks || bodies.has(r.i))
          return {
            ok: false as const,
            at: next,
            reason: `the frame is not ${want === null ? 'a' : `chunk ${want}'s`} raw strings frame`,
          };
        bodies.set(r.i, { from: r.from, end: body!.end });
        next = f.frame.end;
      }
      const t = text ?? { s: buf.toString('latin1', start, next), from: start };
      for (const w of withRaw) {
        const b = bodies.get(w.i);
        if (!b || !putRaw(w.ops, w.refs, t.s, b.from - t.from, b.end - t.from))
          return { ok: false as const, at: start, reason: `chunk ${w.i}'s raw strings do not fit it` };
      }
      if (lazy.length > 0) {
        const eagerRaw = withRaw.length;
        const lazyRaw = [...bodies.keys()].filter((i) => i >= historyChunk).length;
        if (eagerRaw + lazyRaw !== rawFrames)
          return { ok: false as const, at: start, reason: `its raw strings frames are not its chunks'` };
        // Kept for later as text, never as `buf`: the plain copy's string when its strings keep it
        // anyway, else the history's bytes alone (the file's buffer goes once the load is done).
        const from = lazy[0]!.from;
        const src =
          text && withRaw.length > 0 ? text : { s: buf.toString('latin1', from, lazy[lazy.length - 1]!.end), from };
        history = historyReader(src, lazy, historyChunk, bodies, t);
      }
    }
    return { ok: true as const, header, chunks, history, end: next };
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
  const eager = p.header.ops - (p.history ? p.header.history!.ops : 0);
  if (n !== eager || s.header.chunks !== p.header.chunks)
    return { ok: false, at: p.end, reason: `its chunks hold ${n} ops, its header says ${eager}` };
  return { ok: true, header: p.header, chunks: p.chunks, history: p.history };
}

function checkHeader(h: Header, file: string, runId: string, bad: (why: string) => Error): void {
  if (h.snapshot !== SNAPSHOT_VERSION) throw new SchemaVersionError(file, h.snapshot, SNAPSHOT_VERSION);
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
