// The disk's limit, measured in the same process and interleaved with the contenders: a 4 KB
// append to an open file followed by fdatasync — one durable barrier, what the store's segment log
// does per durable commit and what no durable write can beat. It goes through the same promisified
// fs calls (libuv pool) as the store's fs layer, so both pay the same per-call overhead. Like the
// store's segment, the file grows with every append (so each fdatasync also persists its new size).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const openP = promisify(fs.open);
const writeP = promisify(fs.write);
const fdatasyncP = promisify(fs.fdatasync);
const closeP = promisify(fs.close);

export class RawAppend {
  private fd: number | undefined;
  private offset = 0;
  private data = crypto.randomBytes(4096);

  constructor(private readonly dir: string) {}

  /** One pwrite of `bytes` (default 4 KB) at the end of the file + fdatasync; returns its duration in ms. */
  async once(bytes = 4096): Promise<number> {
    if (this.fd === undefined) this.fd = await openP(path.join(this.dir, 'append.bin'), 'w+', 0o600);
    if (bytes > this.data.length) this.data = crypto.randomBytes(bytes);
    const t0 = performance.now();
    await writeP(this.fd, this.data, 0, bytes, this.offset);
    await fdatasyncP(this.fd);
    const ms = performance.now() - t0;
    this.offset += bytes;
    return ms;
  }

  async close(): Promise<void> {
    if (this.fd !== undefined) await closeP(this.fd);
    this.fd = undefined;
  }
}
