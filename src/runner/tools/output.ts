// Output capping: the model sees at most `cap` bytes; the full text goes to a blob when the store
// offers one, and the note says exactly how much was shown and where the rest is.
import { sha256 } from '../../common/hash';
import type { ToolContext } from './types';

export interface Capped {
  text: string;
  blob: string | null;
  truncated: boolean;
}

/** Cuts to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function sliceBytes(text: string, maxBytes: number, from: 'start' | 'end' = 'start'): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  if (from === 'start') return buf.toString('utf8', 0, headEnd(buf, maxBytes));
  let start = buf.length - maxBytes;
  while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

/** Where the first `maxBytes` of UTF-8 bytes end without splitting a character. */
function headEnd(buf: Uint8Array, maxBytes: number): number {
  let end = maxBytes;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // back off continuation bytes
  return end;
}

export function truncationNote(shown: number, total: number, blob: string | null, blobError?: string): string {
  const where = blob
    ? `; full output in blob ${blob}`
    : blobError
      ? `; the full output could not be kept (${blobError})`
      : '';
  return `[output truncated: ${shown} of ${total} bytes shown${where}]`;
}

/**
 * The blob of a full output (`put` stores it; absent: nowhere to keep it). A storage failure (a full
 * disk) must not turn the tool's result into an error: the tool did its work, so its capped output
 * stands; the failure reaches the loop through putBlob's own wrapper, which pauses the run once the
 * result is recorded.
 */
async function keepFull(put: (() => Promise<string>) | undefined): Promise<{ blob: string | null; error?: string }> {
  if (!put) return { blob: null };
  try {
    return { blob: await put() };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { blob: null, error: typeof code === 'string' ? `storage error ${code}` : 'storage error' };
  }
}

/** Text held as UTF-8 bytes is kept as those bytes, hashed once (never decoded whole to be kept). */
function putBytes(
  buf: Buffer,
  ctx: Pick<ToolContext, 'putBlob' | 'putBlobBytes'>,
): (() => Promise<string>) | undefined {
  const { putBlob, putBlobBytes } = ctx;
  if (putBlobBytes) return () => putBlobBytes(buf, sha256(buf));
  return putBlob && (() => putBlob(buf.toString('utf8')));
}

/**
 * capOutput's `head` for UTF-8 text held as bytes (a file read): the same answer, but only what the
 * model sees is decoded — a file at the read limit is never a string of its own.
 */
export async function capBytes(
  buf: Buffer,
  ctx: Pick<ToolContext, 'outputCap' | 'putBlob' | 'putBlobBytes'>,
): Promise<Capped> {
  const cap = Math.max(0, Math.floor(ctx.outputCap));
  if (buf.length <= cap) return { text: buf.toString('utf8'), blob: null, truncated: false };
  const { blob, error } = await keepFull(putBytes(buf, ctx));
  const end = headEnd(buf, cap);
  const note = truncationNote(end, buf.length, blob, error);
  return { text: `${buf.toString('utf8', 0, end)}\n${note}`, blob, truncated: true };
}

/**
 * `head` keeps the beginning (file reads); `head_tail` keeps both ends (command output, where the
 * summary or the error is usually last).
 */
export async function capOutput(
  text: string,
  ctx: Pick<ToolContext, 'outputCap' | 'putBlob'>,
  mode: 'head' | 'head_tail' = 'head',
): Promise<Capped> {
  const total = Buffer.byteLength(text, 'utf8');
  const cap = Math.max(0, Math.floor(ctx.outputCap));
  if (total <= cap) return { text, blob: null, truncated: false };
  const { blob, error } = await keepFull(ctx.putBlob && (() => ctx.putBlob!(text)));
  if (mode === 'head') {
    const head = sliceBytes(text, cap);
    return { text: `${head}\n${truncationNote(Buffer.byteLength(head), total, blob, error)}`, blob, truncated: true };
  }
  const head = sliceBytes(text, Math.floor(cap / 2));
  const tail = sliceBytes(text, cap - Buffer.byteLength(head), 'end');
  const shown = Buffer.byteLength(head) + Buffer.byteLength(tail);
  return { text: `${head}\n${truncationNote(shown, total, blob, error)}\n${tail}`, blob, truncated: true };
}
