// The one sha256 of the project: checksums of store files, blob names, tool input/output hashes.
import { createHash } from 'node:crypto';

/** Hex sha256 of a string (as UTF-8) or of raw bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
