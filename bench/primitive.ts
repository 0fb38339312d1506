// The disk's limit, measured in the same process and interleaved with the contenders: a 4 KB
// append to an open file followed by fdatasync — one durable barrier, what the store's segment log
// does per durable commit and what no durable write can beat. It makes its write and its fdatasync
// through the store's own fs layer (src/store/disk/fsLayer.ts: a write of up to 64 KB on the calling
// thread, fdatasync on libuv's pool), so the two pay the same per-call overhead by construction.
// Like the store's segment, the file grows with every append (so each fdatasync also persists its
// new size).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { nodeFs } from '../src/store/disk/fsLayer';

export class RawAppend {
  private fd: number | undefined;
  private offset = 0;
  private data = crypto.randomBytes(4096);

  constructor(private readonly dir: string) {}

  /** One pwrite of `bytes` (default 4 KB) at the end of the file + fdatasync; returns its duration in ms. */
  async once(bytes = 4096): Promise<number> {
    this.fd ??= fs.openSync(path.join(this.dir, 'append.bin'), 'w+', 0o600);
    if (bytes > this.data.length) this.data = crypto.randomBytes(bytes);
    const data = this.data.subarray(0, bytes);
    const t0 = performance.now();
    await nodeFs.pwrite(this.fd, data, this.offset);
    await nodeFs.fdatasync(this.fd);
    const ms = performance.now() - t0;
    this.offset += bytes;
    return ms;
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
