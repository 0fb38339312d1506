// The real fs layer's writes (disk/fsLayer.ts): small ones on the calling thread, large ones through
// libuv's pool, and either way every byte at its place and every error a rejected promise — never a
// synchronous throw, which a caller that does not await at once would miss.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { nodeFs } from '../../../src/store';
import * as h from './helpers';

describe('store: the real fs layer', () => {
  const tmp = h.suiteTmp();

  it('writes a small and a large buffer whole, at the position given or at the end', async () => {
    const file = path.join(tmp('aw-fsl-'), 'f');
    const fd = await nodeFs.openForUpdate(file);
    try {
      const small = Buffer.from('0123456789');
      const large = Buffer.alloc(200 * 1024, 'x'); // over the 64 KB written on the calling thread
      await nodeFs.pwrite(fd, large, 0);
      await nodeFs.pwrite(fd, small, 5);
      await nodeFs.fdatasync(fd);
      const got = fs.readFileSync(file);
      assert.equal(got.length, large.length);
      assert.equal(got.subarray(5, 15).toString(), '0123456789');
      assert.equal(got.subarray(0, 5).toString(), 'xxxxx');
      assert.equal(
        got.subarray(15).every((b) => b === 0x78),
        true,
      );
    } finally {
      await nodeFs.close(fd);
    }
    const appended = path.join(path.dirname(file), 'g');
    const fd2 = await nodeFs.createExclusive(appended);
    try {
      await nodeFs.write(fd2, Buffer.from('ab'));
      await nodeFs.write(fd2, Buffer.alloc(100 * 1024, 'c'));
      await nodeFs.write(fd2, Buffer.from('d'));
    } finally {
      await nodeFs.close(fd2);
    }
    const text = fs.readFileSync(appended, 'latin1');
    assert.equal(text.length, 3 + 100 * 1024);
    assert.equal(text.slice(0, 3), 'abc');
    assert.equal(text.at(-1), 'd');
  });

  it('reports a failed write or sync as a rejected promise with its code', async () => {
    const dir = tmp('aw-fsl-');
    const fd = await nodeFs.openForUpdate(path.join(dir, 'f'));
    await nodeFs.close(fd); // a closed descriptor: EBADF
    const calls: [string, () => Promise<void>][] = [
      ['pwrite small', () => nodeFs.pwrite(fd, Buffer.from('x'), 0)],
      ['pwrite large', () => nodeFs.pwrite(fd, Buffer.alloc(100 * 1024), 0)],
      ['write small', () => nodeFs.write(fd, Buffer.from('x'))],
      ['fdatasync', () => nodeFs.fdatasync(fd)],
    ];
    for (const [what, call] of calls) {
      let p: Promise<void> | undefined;
      assert.doesNotThrow(() => {
        p = call();
      }, `${what} throws synchronously`);
      await assert.rejects(p!, (err: NodeJS.ErrnoException) => err.code === 'EBADF', what);
    }
  });
});
