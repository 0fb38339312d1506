// The disk's limit, measured in the same process and interleaved with the contenders: one
// fsync'd 4 KB write + rename + folder fsync (what one durable commit of a small file cannot beat).
// It goes through the same promisified fs calls (libuv pool) as the store's fs layer, so both pay
// the same per-call overhead.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const openP = promisify(fs.open);
const writeP = promisify(fs.write);
const fsyncP = promisify(fs.fsync);
const closeP = promisify(fs.close);

export class RawDurableWrite {
  private n = 0;
  private readonly data = crypto.randomBytes(4096);

  constructor(private readonly dir: string) {}

  /** One write+fsync+close+rename+dir-fsync; returns its duration in ms. */
  async once(): Promise<number> {
    const target = path.join(this.dir, `f${this.n++ % 16}.bin`);
    const tmp = `${target}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    const t0 = performance.now();
    const fd = await openP(tmp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600);
    await writeP(fd, this.data, 0, this.data.length);
    await fsyncP(fd);
    await closeP(fd);
    await fs.promises.rename(tmp, target);
    const dfd = await openP(this.dir, 'r');
    await fsyncP(dfd);
    await closeP(dfd);
    return performance.now() - t0;
  }
}
