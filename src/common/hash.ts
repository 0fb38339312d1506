// The one sha256 of the project: checksums of store files, blob names, tool input/output hashes.
import * as crypto from 'node:crypto';

/** crypto.hash, the one-shot digest (Node 20.12 on; VS Code before 1.101 ships Node 20.9): no Hash object, a third of the time. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;

/** Hex sha256 of a string (as UTF-8) or of raw bytes. */
export function sha256(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/** Hex sha256 and size of bytes that come in chunks (a file read as a stream: never whole in memory). */
export async function sha256OfChunks(chunks: AsyncIterable<Uint8Array>): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of chunks) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}
