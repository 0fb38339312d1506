// The one sha256 of the project: checksums of store files, blob names, tool input/output hashes.
import * as crypto from 'node:crypto';
import { createReadStream } from 'node:fs';

/** crypto.hash, the one-shot digest (Node 20.12 on; VS Code before 1.101 ships Node 20.9): no Hash object, a third of the time. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }).hash;

/** Hex sha256 of a string (as UTF-8) or of raw bytes. */
export function sha256(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}

/** Hex sha256 and size of a file's bytes, read as a stream (never whole in memory). */
export async function sha256OfFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}
