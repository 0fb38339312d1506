// The file tools work on UTF-8 text only. Decoding anything else as UTF-8 turns each bad byte into
// U+FFFD: read_file would show mangled text, and edit_file would write the mangled text back,
// destroying every non-ASCII character of a Latin-1 or UTF-16 file. So a file's bytes are checked
// first, and a file that is not UTF-8 text is refused with what it looks like instead.
import { isUtf8 } from 'node:buffer';

export type TextReading = { text: string } | { notText: string };

const UTF16_BOM = 'is UTF-16 text (it starts with a UTF-16 byte order mark), not UTF-8';

/** Why a file starting with these bytes is not UTF-8 whatever follows, or null. */
export function utf16Bom(start: Buffer): string | null {
  return (start[0] === 0xff && start[1] === 0xfe) || (start[0] === 0xfe && start[1] === 0xff) ? UTF16_BOM : null;
}

/**
 * `notText` completes a sentence starting with the file's name: `"a.txt" is not valid UTF-8 …`.
 * `firstLine`: the line `buf` starts at (a line range's bytes).
 */
export function readUtf8(buf: Buffer, firstLine = 1): TextReading {
  const notText = notUtf8Text(buf, firstLine);
  return notText === null ? { text: buf.toString('utf8') } : { notText };
}

/**
 * Why these bytes are not UTF-8 text (as readUtf8 says it), or null — without decoding them: every
 * pass is native or a plain loop over the bytes, so a file at the read limit is judged in
 * milliseconds.
 */
export function notUtf8Text(buf: Buffer, firstLine = 1): string | null {
  const bom = firstLine === 1 ? utf16Bom(buf) : null;
  if (bom) return bom;
  if (buf.includes(0)) {
    return looksLikeUtf16(buf)
      ? 'looks like UTF-16 text without a byte order mark (every other byte is 0), not UTF-8'
      : `looks like a binary file (${buf.length} bytes, some of them 0)`;
  }
  if (isUtf8(buf)) return null;
  const at = firstInvalid(buf);
  const line = firstLine + newlinesBefore(buf, at);
  return (
    `is not valid UTF-8 (byte 0x${(buf[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')} on line ${line}` +
    ' is not part of a UTF-8 character; the file may be Latin-1, Windows-1252 or another legacy encoding)'
  );
}

function newlinesBefore(buf: Buffer, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (buf[i] === 0x0a) n++;
  return n;
}

/** Mostly ASCII in UTF-16: the 0 bytes sit on one parity (high bytes of little- or big-endian units). */
function looksLikeUtf16(buf: Buffer): boolean {
  const sample = buf.subarray(0, 4096);
  let even = 0;
  let odd = 0;
  for (let i = 0; i < sample.length; i++) {
    if (sample[i] !== 0) continue;
    if (i % 2 === 0) even++;
    else odd++;
  }
  const units = Math.floor(sample.length / 2);
  return units >= 4 && Math.max(even, odd) > units * 0.4 && Math.min(even, odd) < units * 0.05;
}

/** The slices the search for the first bad byte checks natively, before it walks one of them. */
const SLICE_BYTES = 16 * 1024;

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence. */
function firstInvalid(buf: Buffer): number {
  for (let at = 0; at < buf.length;) {
    const end = Math.min(buf.length, at + SLICE_BYTES);
    // A character cut at the slice's end is checked with the next slice.
    const slice = end < buf.length ? wholeCharacters(buf.subarray(at, end)) : buf.subarray(at, end);
    if (slice.length === 0 || !isUtf8(slice)) return at + invalidIn(buf.subarray(at, Math.min(buf.length, end + 4)));
    at += slice.length;
  }
  return buf.length;
}

/** The same, one character at a time (over one slice). */
function invalidIn(buf: Buffer): number {
  for (let i = 0; i < buf.length;) {
    const b = buf[i] as number;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0) return i;
    const end = i + len;
    if (end > buf.length) return i;
    if (!isUtf8(buf.subarray(i, end))) return i;
    i = end;
  }
  return buf.length;
}

/** A chunk without a UTF-8 character cut in half at its end. */
export function wholeCharacters(chunk: Buffer): Buffer {
  for (let k = 1; k <= 3 && k <= chunk.length; k++) {
    const b = chunk[chunk.length - k] as number;
    if (b < 0x80) break;
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return need > k ? chunk.subarray(0, chunk.length - k) : chunk;
    }
  }
  return chunk;
}
