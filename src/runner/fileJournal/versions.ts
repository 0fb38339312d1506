// File versions for the file journal: a file's bytes as a content-addressed blob that round-trips
// exactly. Blobs are text: bytes that are valid UTF-8 (CRLF, a BOM, any text) are stored as that
// text, so the blob name is the sha256 of the file's bytes and identical content is stored once;
// anything else (binary, invalid UTF-8) is stored as base64. A kept version goes to the store as
// bytes (the text's own UTF-8, or base64 made slice by slice) with its hash: a file at the cap is
// never decoded to a string, nor hashed again as one, on the host's main thread.
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { Breather } from '../../common/breather';
import { sha256, sha256OfChunks } from '../../common/hash';
import type { FileContentVersion, FileVersion } from '../../store/api/schema';
import { chunks, closeFile, NotRegularFile, openRegular, readWhole, TooLarge } from '../tools/regularFile';

/** Larger files are compared by hash but not kept (a version without a blob cannot be restored). */
export const DEFAULT_MAX_KEPT_BYTES = 16 * 1024 * 1024;

export const ABSENT: FileVersion = { kind: 'absent' };
export const unknownVersion = (reason: string): FileVersion => ({ kind: 'unknown', reason });

/**
 * Stores a blob and returns its hash (the store's putBlob for the run): text, or the UTF-8 bytes of
 * the text with their sha256 when the caller has taken it.
 */
export type PutBlob = (content: string | Uint8Array, sha256?: string) => Promise<string>;

/** How bytes are kept: as their text when they are valid UTF-8 (which decodes and encodes back exactly), else base64. */
const encodingOf = (buf: Buffer): 'utf8' | 'base64' => (isUtf8(buf) ? 'utf8' : 'base64');

export function encodeBytes(buf: Buffer): { text: string; encoding: 'utf8' | 'base64' } {
  const encoding = encodingOf(buf);
  return { text: buf.toString(encoding), encoding };
}

export function decodeBlob(text: string, encoding: 'utf8' | 'base64'): Buffer {
  return encoding === 'utf8' ? Buffer.from(text, 'utf8') : Buffer.from(text, 'base64');
}

/** A version of these bytes; the content is kept (put as a blob) unless it is over `maxKeptBytes`. */
export async function versionOf(
  buf: Buffer,
  put: PutBlob | null,
  maxKeptBytes = DEFAULT_MAX_KEPT_BYTES,
  mode?: number,
): Promise<FileContentVersion> {
  const encoding = encodingOf(buf);
  const hash = sha256(buf);
  let blob: string | null = null;
  if (put && buf.length <= maxKeptBytes) {
    const kept = encoding === 'utf8' ? { bytes: buf, sha256: hash } : await base64Of(buf);
    blob = await put(kept.bytes, kept.sha256);
  }
  return { kind: 'file', sha256: hash, size: buf.length, blob, encoding, ...(mode === undefined ? {} : { mode }) };
}

/** Base64 of these bytes, as ASCII bytes with their sha256: made a slice at a time, with turns for the event loop. */
async function base64Of(buf: Buffer): Promise<{ bytes: Buffer; sha256: string }> {
  const out = Buffer.allocUnsafe(Math.ceil(buf.length / 3) * 4);
  const hash = createHash('sha256');
  const breather = new Breather();
  let o = 0;
  for (let i = 0; i < buf.length; i += BASE64_SLICE) {
    const n = out.write(buf.toString('base64', i, Math.min(buf.length, i + BASE64_SLICE)), o, 'latin1');
    hash.update(out.subarray(o, o + n));
    o += n;
    await breather.tick();
  }
  return { bytes: out.subarray(0, o), sha256: hash.digest('hex') };
}

/** A multiple of 3 bytes: base64 of the slices, joined, is base64 of the whole. */
const BASE64_SLICE = 3 * 128 * 1024;

/** Files not kept are still read whole up to this size (one read is cheaper than a stream); larger ones are hashed as a stream. */
const READ_WHOLE_BYTES = 256 * 1024;
/** Larger files are not read at all: hashing one would take seconds per version, and it could never be restored. */
export const MAX_HASHED_BYTES = 256 * 1024 * 1024;

/**
 * The file at `abs` now: absent, its content (kept when `put` is given and it is within the cap), or
 * unknown when it cannot be read (a directory, no permission). A file that will not be kept and is
 * large is hashed as a stream, never read whole. The bytes come from the descriptor fstat judged
 * (regularFile.ts): a FIFO swapped in after the lstat is refused, not waited on. Never throws for
 * the file's own state.
 */
export async function readVersion(
  abs: string,
  put: PutBlob | null,
  maxKeptBytes = DEFAULT_MAX_KEPT_BYTES,
): Promise<FileVersion> {
  let st;
  try {
    st = await fs.lstat(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return ABSENT;
    return unknownVersion(`it could not be read (${code ?? String(err)})`);
  }
  if (st.isDirectory()) return unknownVersion('it is a folder');
  if (st.isSymbolicLink()) return unknownVersion('it is a symbolic link');
  if (!st.isFile()) return unknownVersion('it is not a regular file');
  let file;
  try {
    file = await openRegular(abs);
  } catch (err) {
    if (err instanceof NotRegularFile) return unknownVersion('it is not a regular file');
    return unknownVersion(`it could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  try {
    const mode = file.st.mode & 0o7777;
    const kept = put !== null && file.st.size <= maxKeptBytes;
    if (file.st.size > MAX_HASHED_BYTES)
      return unknownVersion(`it has ${file.st.size} bytes, more than the file journal reads (${MAX_HASHED_BYTES})`);
    if (!kept && file.st.size > READ_WHOLE_BYTES)
      return {
        kind: 'file',
        ...(await sha256OfChunks(chunks(file, undefined, undefined, true))),
        blob: null,
        encoding: 'base64',
        mode,
      };
    const limit = kept ? maxKeptBytes : READ_WHOLE_BYTES;
    return await versionOf(await readWhole(file, limit), put, maxKeptBytes, mode);
  } catch (err) {
    if (err instanceof TooLarge) return unknownVersion('it grew while it was read');
    return unknownVersion(`it could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  } finally {
    await closeFile(file);
  }
}

/** Same content (or both absent). Unknown versions are never the same as anything. */
export function sameVersion(a: FileVersion, b: FileVersion): boolean {
  if (a.kind === 'absent' || b.kind === 'absent') return a.kind === b.kind;
  if (a.kind === 'unknown' || b.kind === 'unknown') return false;
  return a.sha256 === b.sha256 && a.size === b.size;
}

/** A version that a restore can write back: absent, or content whose blob was kept. */
export function isRestorable(v: FileVersion): boolean {
  return v.kind === 'absent' || (v.kind === 'file' && v.blob !== null);
}
