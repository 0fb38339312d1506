// Reading workspace files within bounds. A workspace can hold a FIFO, a socket, a device or a huge
// file under any name: open() of a FIFO waits for a writer (forever, holding a thread of libuv's
// pool — and Cancel cannot end it), and reading a huge file whole fills the host's memory. So a file
// is opened without blocking and without following a symlink at its end, judged by fstat of the
// opened descriptor (what is read is what was judged), and read in chunks, each one a bounded
// buffer, that stop on Cancel.
import { closeSync, constants, fstatSync, openSync, promises as fs, readSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** What one read asks for: a range of a file of one giant line holds at most its cap plus this. */
export const CHUNK_BYTES = 1024 * 1024;

// O_NONBLOCK: a FIFO opens at once (and is then refused); O_NOFOLLOW: a symlink swapped in at the
// end of a resolved path is not followed. Neither exists on Windows, which has no FIFOs in the tree.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** Not a regular file; `what` completes "… is <what>". */
export class NotRegularFile extends Error {
  override readonly name = 'NotRegularFile';
  constructor(readonly what: string) {
    super(`is ${what}, not a regular file`);
  }
}

/** The file grew past the limit while it was read (its size was checked before). */
export class TooLarge extends Error {
  override readonly name = 'TooLarge';
  constructor(readonly limit: number) {
    super(`is over ${limit} bytes`);
  }
}

export class ReadCancelled extends Error {
  override readonly name = 'ReadCancelled';
  constructor() {
    super('Cancelled while reading the file.');
  }
}

export interface OpenFile {
  fh: FileHandle;
  /** fstat of the opened descriptor. */
  st: Stats;
}

export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'a special file';
}

/** Opens `abs` for reading if it is a regular file; anything else is closed again and refused (NotRegularFile). */
export async function openRegular(abs: string): Promise<OpenFile> {
  let fh: FileHandle;
  try {
    fh = await fs.open(abs, OPEN_FLAGS);
  } catch (e) {
    // O_NOFOLLOW on a symlink: ELOOP on Linux and macOS, EMLINK on FreeBSD.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new NotRegularFile('a symbolic link');
    throw e;
  }
  try {
    const st = await fh.stat();
    if (st.isFile()) return { fh, st };
    throw new NotRegularFile(kindOf(st));
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/**
 * Closes the file. After Cancel a read may still be in flight (a hung network disk), and close waits
 * for it: then it closes in the background.
 */
export async function closeFile(file: OpenFile, signal?: AbortSignal): Promise<void> {
  const closing = file.fh.close().catch(() => undefined);
  if (!signal?.aborted) await closing;
}

/** One read at `position`; Cancel ends the wait at once. */
async function readAt(fh: FileHandle, buf: Buffer, position: number, signal?: AbortSignal): Promise<number> {
  if (!signal) return (await fh.read(buf, 0, buf.length, position)).bytesRead;
  if (signal.aborted) throw new ReadCancelled();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new ReadCancelled());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return (await Promise.race([fh.read(buf, 0, buf.length, position), aborted])).bytesRead;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The file's bytes from the start, chunk by chunk, until its end or Cancel. Each chunk is a fresh
 * buffer; with `reuse`, one buffer is read into again and again (the caller copies what it keeps),
 * so streaming a huge file leaves no garbage behind.
 */
export async function* chunks(
  file: OpenFile,
  signal?: AbortSignal,
  size = CHUNK_BYTES,
  reuse = false,
): AsyncGenerator<Buffer> {
  const shared = reuse ? Buffer.allocUnsafe(size) : null;
  for (let position = 0; ;) {
    const buf = shared ?? Buffer.allocUnsafe(size);
    const n = await readAt(file.fh, buf, position, signal);
    if (n === 0) return;
    position += n;
    if (shared) yield shared.subarray(0, n);
    else yield n === size ? buf : Buffer.from(buf.subarray(0, n)); // a short read keeps no oversized buffer
  }
}

/** The whole file, at most `maxBytes` (TooLarge if it has more, even when it grew after fstat). */
export async function readWhole(file: OpenFile, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const size = Math.max(1, Math.min(CHUNK_BYTES, file.st.size + 1)); // a small file in one read (and one to see its end)
  const parts: Buffer[] = [];
  let total = 0;
  for await (const chunk of chunks(file, signal, size)) {
    total += chunk.length;
    if (total > maxBytes) throw new TooLarge(maxBytes);
    parts.push(chunk);
  }
  return Buffer.concat(parts, total);
}

/** The first `maxBytes` of the file (fewer if it is shorter). */
export async function readHead(file: OpenFile, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const buf = Buffer.alloc(Math.max(0, Math.min(maxBytes, file.st.size)));
  let got = 0;
  while (got < buf.length) {
    const n = await readAt(file.fh, buf.subarray(got), got, signal);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/**
 * The same, synchronously, for the few small files the workspace scan fingerprints on its thread:
 * the whole regular file when it has at most `maxBytes`, else null (not regular, bigger, unreadable).
 */
export function readSmallRegularSync(abs: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(abs, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.allocUnsafe(st.size + 1); // one byte more: a file that grew shows
    let got = 0;
    for (let n = -1; n !== 0 && got < buf.length; got += n) n = readSync(fd, buf, got, buf.length - got, got);
    return got > st.size ? null : buf.subarray(0, got);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
