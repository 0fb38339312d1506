// An FsLayer that fails on command: inject(op, code, {times, match}) makes the next matching calls
// throw a Node-style error with that code. fd-based calls (write, fsync, close) match on the path
// the fd was opened for, so "fsync of the log directory" and "fsync of a commit" are different.
import { nodeFs, type FsLayer } from '../../../src/store/disk/fsLayer';

export type Op = keyof FsLayer;

interface Rule {
  op: Op;
  code: string;
  times: number;
  match?: RegExp;
  /** Never settle instead of failing (a hung disk or network share). */
  hang?: boolean;
  /** write/pwrite: half the bytes reach the file before the error (a disk that filled up mid-write). */
  partial?: boolean;
}

export class FaultyFs implements FsLayer {
  private rules: Rule[] = [];
  private readonly fdPath = new Map<number, string>();
  /** How many faults fired, per op. */
  readonly fired: Partial<Record<Op, number>> = {};
  /** Bytes passed to write() (for the write-amplification numbers). */
  bytesWritten = 0;
  /** Every path read with readFile, in order. */
  readonly reads: string[] = [];

  constructor(private readonly inner: FsLayer = nodeFs) {}

  private capacity: number | undefined;
  private used = 0;

  /** Like a nearly full disk: writes fail with ENOSPC once `bytes` more have been written (undefined: no limit). */
  setCapacity(bytes: number | undefined): void {
    this.capacity = bytes;
    this.used = 0;
  }

  private spend(n: number, p: string): void {
    if (this.capacity === undefined) return;
    if (this.used + n > this.capacity)
      throw Object.assign(new Error(`ENOSPC: no space left on device, write ${p}`), {
        code: 'ENOSPC',
        syscall: 'write',
        path: p,
      });
    this.used += n;
  }

  inject(op: Op, code: string, opts: { times?: number; match?: RegExp; hang?: boolean; partial?: boolean } = {}): this {
    this.rules.push({
      op,
      code,
      times: opts.times ?? Infinity,
      match: opts.match,
      hang: opts.hang,
      partial: opts.partial,
    });
    return this;
  }

  clear(): void {
    this.rules = [];
  }

  private check(op: Op, p: string, partially?: () => Promise<void>): void | Promise<never> {
    const rule = this.rules.find(
      (r) => r.op === op && r.times > 0 && (!r.match || r.match.test(p.split('\\').join('/'))),
    );
    if (!rule) return;
    if (rule.partial && partially) {
      rule.times--;
      this.fired[op] = (this.fired[op] ?? 0) + 1;
      return partially().then(() => {
        throw Object.assign(new Error(`${rule.code}: injected fault after a partial ${op} ${p}`), {
          code: rule.code,
          syscall: op,
          path: p,
        });
      });
    }
    rule.times--;
    this.fired[op] = (this.fired[op] ?? 0) + 1;
    if (rule.hang) return new Promise<never>(() => undefined);
    throw Object.assign(new Error(`${rule.code}: injected fault on ${op} ${p}`), {
      code: rule.code,
      syscall: op,
      path: p,
    });
  }

  async readFile(p: string) {
    await this.check('readFile', p);
    this.reads.push(p.split('\\').join('/'));
    return this.inner.readFile(p);
  }
  async readdir(p: string) {
    await this.check('readdir', p);
    return this.inner.readdir(p);
  }
  async mkdir(p: string, o: { recursive: boolean }) {
    await this.check('mkdir', p);
    return this.inner.mkdir(p, o);
  }
  async createExclusive(p: string) {
    await this.check('createExclusive', p);
    const fd = await this.inner.createExclusive(p);
    this.fdPath.set(fd, p);
    return fd;
  }
  async openDir(p: string) {
    await this.check('openDir', p);
    const fd = await this.inner.openDir(p);
    this.fdPath.set(fd, p);
    return fd;
  }
  async openForUpdate(p: string) {
    await this.check('openForUpdate', p);
    const fd = await this.inner.openForUpdate(p);
    this.fdPath.set(fd, p);
    return fd;
  }
  async pwrite(fd: number, data: Buffer, position: number) {
    await this.check('pwrite', this.fdPath.get(fd) ?? '', () =>
      this.inner.pwrite(fd, data.subarray(0, data.length >> 1), position),
    );
    this.spend(data.length, this.fdPath.get(fd) ?? '');
    await this.inner.pwrite(fd, data, position);
    this.bytesWritten += data.length;
  }
  async fdatasync(fd: number) {
    await this.check('fdatasync', this.fdPath.get(fd) ?? '');
    return this.inner.fdatasync(fd);
  }
  async write(fd: number, data: Buffer) {
    await this.check('write', this.fdPath.get(fd) ?? '', () =>
      this.inner.write(fd, data.subarray(0, data.length >> 1)),
    );
    this.spend(data.length, this.fdPath.get(fd) ?? '');
    await this.inner.write(fd, data);
    this.bytesWritten += data.length;
  }
  async fsync(fd: number) {
    await this.check('fsync', this.fdPath.get(fd) ?? '');
    return this.inner.fsync(fd);
  }
  async close(fd: number) {
    const p = this.fdPath.get(fd) ?? '';
    this.fdPath.delete(fd);
    await this.inner.close(fd);
    await this.check('close', p);
  }
  async rename(a: string, b: string) {
    await this.check('rename', b);
    return this.inner.rename(a, b);
  }
  async link(a: string, b: string) {
    await this.check('link', b);
    return this.inner.link(a, b);
  }
  async unlink(p: string) {
    await this.check('unlink', p);
    return this.inner.unlink(p);
  }
  async truncate(p: string, length: number) {
    await this.check('truncate', p);
    return this.inner.truncate(p, length);
  }
  async readFrom(p: string, position: number, length?: number) {
    await this.check('readFrom', p);
    return this.inner.readFrom(p, position, length);
  }
  async rmrf(p: string) {
    await this.check('rmrf', p);
    return this.inner.rmrf(p);
  }
  async stat(p: string) {
    await this.check('stat', p);
    return this.inner.stat(p);
  }
  async utimes(p: string, t: number) {
    await this.check('utimes', p);
    return this.inner.utimes(p, t);
  }
}

/** The real file system, with `before(call, args)` run ahead of every call (crash points, call traces). */
export function watchedFs(before: (call: Op, args: unknown[]) => void): FsLayer {
  return Object.fromEntries(
    Object.entries(nodeFs).map(([call, fn]) => [
      call,
      async (...args: unknown[]) => {
        before(call as Op, args);
        return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as unknown as FsLayer;
}
