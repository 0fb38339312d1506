// File versions for the file journal: a file's bytes as a content-addressed blob that round-trips
// exactly. Blobs are strings: bytes that are UTF-8 and survive decode → encode unchanged (CRLF, a
// BOM, any text) are stored as that text, so the blob name is the sha256 of the file's bytes and
// identical content is stored once; anything else (binary, invalid UTF-8) is stored as base64.
import { promises as fs } from 'node:fs';
import { sha256, sha256OfFile } from '../../common/hash';
import type { FileContentVersion, FileVersion } from '../../store/api/schema';

/** Larger files are compared by hash but not kept (a version without a blob cannot be restored). */
export const DEFAULT_MAX_KEPT_BYTES = 16 * 1024 * 1024;

export const ABSENT: FileVersion = { kind: 'absent' };
export const unknownVersion = (reason: string): FileVersion => ({ kind: 'unknown', reason });

/** Stores a blob and returns its hash (the store's putBlob for the run). */
export type PutBlob = (content: string) => Promise<string>;

export function encodeBytes(buf: Buffer): { text: string; encoding: 'utf8' | 'base64' } {
  const text = buf.toString('utf8');
  // Invalid UTF-8 decodes to U+FFFD, so only an exact round trip proves the bytes are this text.
  if (Buffer.byteLength(text, 'utf8') === buf.length && Buffer.from(text, 'utf8').equals(buf))
    return { text, encoding: 'utf8' };
  return { text: buf.toString('base64'), encoding: 'base64' };
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
  const { text, encoding } = encodeBytes(buf);
  const hash = sha256(buf);
  const blob = put && buf.length <= maxKeptBytes ? await put(text) : null;
  return { kind: 'file', sha256: hash, size: buf.length, blob, encoding, ...(mode === undefined ? {} : { mode }) };
}

/** Files not kept are still read whole up to this size (one read is cheaper than a stream); larger ones are hashed as a stream. */
const READ_WHOLE_BYTES = 256 * 1024;

/**
 * The file at `abs` now: absent, its content (kept when `put` is given and it is within the cap), or
 * unknown when it cannot be read (a directory, no permission). A file that will not be kept and is
 * large is hashed as a stream, never read whole. Never throws for the file's own state.
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
  const mode = st.mode & 0o7777;
  const kept = put !== null && st.size <= maxKeptBytes;
  try {
    if (!kept && st.size > READ_WHOLE_BYTES)
      return { kind: 'file', ...(await sha256OfFile(abs)), blob: null, encoding: 'base64', mode };
    return await versionOf(await fs.readFile(abs), put, maxKeptBytes, mode);
  } catch (err) {
    return unknownVersion(`it could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
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
