// CRC-32 (IEEE, reflected) — every frame's checksum — and the one flipped bit that explains a checksum's
// difference. zlib's crc32 where the Node version has it (20.15 / 22.2 on); a table where it does not
// (VS Code before 1.101 ships Node 20.9).
import zlib from 'node:zlib';

/** CRC-32 of each byte value. */
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

/** Table-driven CRC-32, for hosts whose Node has no zlib.crc32. */
function crc32Js(buf: Uint8Array, seed = 0): number {
  const t = crcTable();
  let crc = ~seed;
  for (let i = 0; i < buf.length; i++) crc = t[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** crc32 of `buf`, continued from `seed` (the crc32 of what comes before it; 0: nothing). */
export const crc32: (buf: Uint8Array, seed?: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function' ? (b, seed = 0) => zlib.crc32(b, seed) : crc32Js;
export { crc32Js as crc32Portable };

/** Past this a body is not searched for a flipped bit (8 steps a byte: the search must not hold the thread long). */
const MAX_CORRECTED_BODY = 16 * 1024 * 1024;

/**
 * The one bit of `body` whose flip makes its crc32 (continued from `seed`) equal `written`, or null
 * (none, or more than one could: then nothing is guessed). CRC-32 is linear: bit b of byte j changes
 * the checksum by table[1 << b] carried through the n − 1 − j bytes after it as zeros, so the
 * difference between the two checksums names the bit. The eight bits are carried along together,
 * from the end.
 */
export function flippedBit(body: Uint8Array, written: number, seed = 0): { byte: number; bit: number } | null {
  const syndrome = (crc32(body, seed) ^ written) >>> 0;
  const n = body.length;
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
