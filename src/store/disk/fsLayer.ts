// The few file-system calls the disk backend makes, behind one interface so tests can inject
// ENOSPC / EACCES / EIO / EPERM / EBUSY at any step (test/unit/store/faults.test.ts). vscode-free.
import fs from 'node:fs';
import { promisify } from 'node:util';

export interface FsStat {
  size: number;
  /** Allocated bytes (st_blocks × 512): what the file really costs on disk. */
  allocated: number;
  mtimeMs: number;
  /** The inode and its change time: together they tell one file from another at the same path. */
  ino: number;
  ctimeMs: number;
  isDirectory: boolean;
}

export interface FsLayer {
  /** Throws ENOENT for a missing file (callers distinguish missing from corrupt). */
  readFile(path: string): Promise<Buffer>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, opts: { recursive: boolean }): Promise<void>;
  /** Creates a new file exclusively (O_CREAT|O_EXCL|O_WRONLY); returns the fd. */
  createExclusive(path: string): Promise<number>;
  /** Opens a directory read-only so it can be fsync'd. */
  openDir(path: string): Promise<number>;
  /** Opens (creating if missing) a file for in-place writes at given offsets; returns the fd. */
  openForUpdate(path: string): Promise<number>;
  write(fd: number, data: Buffer): Promise<void>;
  /** Writes `data` at byte offset `position` (no append, no truncation). */
  pwrite(fd: number, data: Buffer, position: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  /** fdatasync: the file's data (and the metadata needed to read it back) reach the disk. */
  fdatasync(fd: number): Promise<void>;
  close(fd: number): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Hard link: fails with EEXIST instead of replacing (write-once files, the owner lock). */
  link(existing: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Cuts a file to `length` bytes (a torn or damaged tail of a segment). */
  truncate(path: string, length: number): Promise<void>;
  /** The bytes of a file from `position` to its end, or at most `length` of them (a follower reading what was appended; the head of a snapshot). */
  readFrom(path: string, position: number, length?: number): Promise<Buffer>;
  rmrf(path: string): Promise<void>;
  stat(path: string): Promise<FsStat>;
  utimes(path: string, timeMs: number): Promise<void>;
}

const openP = promisify(fs.open);
const writeP = promisify(fs.write);
const fsyncP = promisify(fs.fsync);
const closeP = promisify(fs.close);

/** Writes up to this size are made on the calling thread (see nodeFs.write). */
const SYNC_WRITE_MAX = 64 * 1024;
const DONE: Promise<void> = Promise.resolve();

/** Writes all of `data` at `position` (null: the file's offset) on the calling thread. */
function writeAllSync(fd: number, data: Buffer, position: number | null): Promise<void> {
  try {
    let off = 0;
    while (off < data.length)
      off += fs.writeSync(fd, data, off, data.length - off, position === null ? null : position + off);
    return DONE;
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

async function writeAllPooled(fd: number, data: Buffer, position: number | null): Promise<void> {
  let off = 0;
  while (off < data.length)
    off += (await writeP(fd, data, off, data.length - off, position === null ? null : position + off)).bytesWritten;
}

/** The real file system. */
export const nodeFs: FsLayer = {
  // Reads are synchronous underneath on purpose: a run's log is a burst of small files, and a sync read
  // costs a fraction of a trip through the libuv pool.
  async readFile(p) {
    return fs.readFileSync(p);
  },
  async readdir(p) {
    return fs.readdirSync(p);
  },
  // So is mkdir: every open of the store makes sure of runs/ and quarantine/ (there already, as a rule),
  // and through the pool those two waited longer than the rest of the open.
  async mkdir(p, opts) {
    fs.mkdirSync(p, opts);
  },
  createExclusive: (p) => openP(p, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600),
  openDir: (p) => openP(p, 'r'),
  openForUpdate: (p) => openP(p, fs.constants.O_CREAT | fs.constants.O_RDWR, 0o600),
  // Writes of up to SYNC_WRITE_MAX bytes too: they only reach the page cache (fdatasync, which waits
  // for the disk, stays on the pool), and a trip through the pool costs more than the write — a step's
  // barrier makes two (its frame, then the witness slot). Larger writes (a compaction's snapshot, a big
  // blob) stay off the host's thread.
  // (Plain functions, not async ones: a barrier makes two of these calls; errors still reject.)
  write: (fd, data) => (data.length <= SYNC_WRITE_MAX ? writeAllSync(fd, data, null) : writeAllPooled(fd, data, null)),
  pwrite: (fd, data, position) =>
    data.length <= SYNC_WRITE_MAX ? writeAllSync(fd, data, position) : writeAllPooled(fd, data, position),
  fsync: (fd) => fsyncP(fd),
  // The barrier's wait, on the pool: a callback of its own, not promisify's generic wrapper.
  fdatasync: (fd) => new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve()))),
  close: (fd) => closeP(fd),
  rename: (a, b) => fs.promises.rename(a, b),
  link: (a, b) => fs.promises.link(a, b),
  unlink: (p) => fs.promises.unlink(p),
  async truncate(p, length) {
    const fd = fs.openSync(p, 'r+');
    try {
      fs.ftruncateSync(fd, length);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  async readFrom(p, position, length) {
    const fd = fs.openSync(p, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.allocUnsafe(Math.max(0, Math.min(size - position, length ?? Infinity)));
      let off = 0;
      while (off < buf.length) {
        const n = fs.readSync(fd, buf, off, buf.length - off, position + off);
        if (n === 0) break;
        off += n;
      }
      return buf.subarray(0, off);
    } finally {
      fs.closeSync(fd);
    }
  },
  rmrf: (p) => fs.promises.rm(p, { recursive: true, force: true }),
  async stat(p) {
    const s = fs.statSync(p);
    return {
      size: s.size,
      allocated: s.blocks * 512,
      mtimeMs: s.mtimeMs,
      ino: s.ino,
      ctimeMs: s.ctimeMs,
      isDirectory: s.isDirectory(),
    };
  },
  async utimes(p, t) {
    await fs.promises.utimes(p, t / 1000, t / 1000);
  },
};

export function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

export const isMissing = (err: unknown): boolean => errCode(err) === 'ENOENT';

/** Logical and allocated bytes, and the number of files, of a folder tree (missing: zeros). */
export async function treeUsage(
  fsl: FsLayer,
  dir: string,
): Promise<{ size: number; allocated: number; files: number }> {
  const out = { size: 0, allocated: 0, files: 0 };
  let names: string[];
  try {
    names = await fsl.readdir(dir);
  } catch (err) {
    if (isMissing(err)) return out;
    throw err;
  }
  for (const n of names) {
    const st = await fsl.stat(`${dir}/${n}`).catch(() => undefined);
    if (!st) continue;
    const sub = st.isDirectory
      ? await treeUsage(fsl, `${dir}/${n}`)
      : { size: st.size, allocated: st.allocated, files: 1 };
    out.size += sub.size;
    out.allocated += sub.allocated;
    out.files += sub.files;
  }
  return out;
}
