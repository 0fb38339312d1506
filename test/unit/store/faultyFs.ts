// An FsLayer that fails on command: inject(op, code, {times, match}) makes the next matching calls
// throw a Node-style error with that code. fd-based calls (write, fsync, close) match on the path
// the fd was opened for, so "fsync of the log directory" and "fsync of a commit" are different.
import { nodeFs, type FsLayer } from '../../../src/store/fsLayer';

export type Op = keyof FsLayer;

interface Rule {
  op: Op;
  code: string;
  times: number;
  match?: RegExp;
}

export class FaultyFs implements FsLayer {
  private rules: Rule[] = [];
  private readonly fdPath = new Map<number, string>();
  /** How many faults fired, per op. */
  readonly fired: Partial<Record<Op, number>> = {};
  /** Bytes passed to write() (for the write-amplification numbers). */
  bytesWritten = 0;

  constructor(private readonly inner: FsLayer = nodeFs) {}

  inject(op: Op, code: string, opts: { times?: number; match?: RegExp } = {}): this {
    this.rules.push({ op, code, times: opts.times ?? Infinity, match: opts.match });
    return this;
  }

  clear(): void {
    this.rules = [];
  }

  private check(op: Op, p: string): void {
    const rule = this.rules.find((r) => r.op === op && r.times > 0 && (!r.match || r.match.test(p.split('\\').join('/'))));
    if (!rule) return;
    rule.times--;
    this.fired[op] = (this.fired[op] ?? 0) + 1;
    throw Object.assign(new Error(`${rule.code}: injected fault on ${op} ${p}`), { code: rule.code, syscall: op, path: p });
  }

  async readFile(p: string) {
    this.check('readFile', p);
    return this.inner.readFile(p);
  }
  async readdir(p: string) {
    this.check('readdir', p);
    return this.inner.readdir(p);
  }
  async mkdir(p: string, o: { recursive: boolean }) {
    this.check('mkdir', p);
    return this.inner.mkdir(p, o);
  }
  async createExclusive(p: string) {
    this.check('createExclusive', p);
    const fd = await this.inner.createExclusive(p);
    this.fdPath.set(fd, p);
    return fd;
  }
  async openDir(p: string) {
    this.check('openDir', p);
    const fd = await this.inner.openDir(p);
    this.fdPath.set(fd, p);
    return fd;
  }
  async write(fd: number, data: Buffer) {
    this.check('write', this.fdPath.get(fd) ?? '');
    await this.inner.write(fd, data);
    this.bytesWritten += data.length;
  }
  async fsync(fd: number) {
    this.check('fsync', this.fdPath.get(fd) ?? '');
    return this.inner.fsync(fd);
  }
  async close(fd: number) {
    const p = this.fdPath.get(fd) ?? '';
    this.fdPath.delete(fd);
    await this.inner.close(fd);
    this.check('close', p);
  }
  async rename(a: string, b: string) {
    this.check('rename', b);
    return this.inner.rename(a, b);
  }
  async link(a: string, b: string) {
    this.check('link', b);
    return this.inner.link(a, b);
  }
  async unlink(p: string) {
    this.check('unlink', p);
    return this.inner.unlink(p);
  }
  async rmrf(p: string) {
    this.check('rmrf', p);
    return this.inner.rmrf(p);
  }
  async stat(p: string) {
    this.check('stat', p);
    return this.inner.stat(p);
  }
  async utimes(p: string, t: number) {
    this.check('utimes', p);
    return this.inner.utimes(p, t);
  }
}
