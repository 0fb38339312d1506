// The durable lowdb adapter. lowdb's own JSONFile (steno) writes a fixed temp name and renames
// without fsync, so a power cut can leave an empty or NUL-filled file and a read of a broken file
// throws a bare SyntaxError. Here: a unique temp file in the same directory → write → fsync →
// rename (never over an existing write-once file) → fsync of the directory; the content is wrapped in an
// envelope with the schema version and a sha256 of the exact body text; a read verifies all of it
// and never turns a file that exists into null or empty data.
import { isAscii } from 'node:buffer';
import crypto from 'node:crypto';
import { sha256 } from '../../common/hash';
import path from 'node:path';
import type { Adapter } from 'lowdb';
import type { z } from 'zod';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../api/errors';
import { errCode, isMissing, type FsLayer } from './fsLayer';
import { migrate, MigrationGapError, MIGRATIONS, type Migration } from '../core/migrations';
import { parseFast } from '../core/fastValid';
import { STORE_SCHEMA_VERSION } from '../api/schema';

export type FileKind = 'index' | 'index_head' | 'lock';

const HEADER = /^\{"schema_version":(\d{1,6}),"kind":"([a-z_]{1,20})","sha256":"([0-9a-f]{64})","body":/;

/**
 * Serialises once; the checksum covers exactly the body text that is written. Non-ASCII characters
 * are written as \\u escapes so the file is pure ASCII: a reader then decodes it as one-byte text,
 * several times faster than UTF-8 for a multi-megabyte log (one "é" otherwise makes it all two-byte).
 */
export function encodeEnvelope(kind: FileKind, body: unknown): string {
  const bodyText = JSON.stringify(body).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `{"schema_version":${STORE_SCHEMA_VERSION},"kind":"${kind}","sha256":"${sha256(bodyText)}","body":${bodyText}}\n`;
}

/**
 * Verifies and unwraps an envelope, migrating an older body through `chain` (migrations.ts). A version
 * it has no way to read → SchemaVersionError; anything wrong → corruption. Works on the bytes: the
 * checksum is taken over the body's bytes in place and the body is decoded once.
 */
export function decodeEnvelope(
  data: Buffer | string,
  file: string,
  kind: FileKind,
  runId: string | null,
  chain: Readonly<Record<number, Migration>> = MIGRATIONS,
): unknown {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const bad = (why: string, cause?: unknown) =>
    new AgentCheckpointCorruptionError(
      `${file} is corrupt: ${why}`,
      runId,
      file,
      cause === undefined ? undefined : { cause },
    );
  const m = HEADER.exec(buf.toString('latin1', 0, Math.min(buf.length, 160))); // the header is ASCII
  if (!m) {
    const version = versionOfForeignJson(buf.toString('utf8'));
    if (version !== null && version > STORE_SCHEMA_VERSION)
      throw new SchemaVersionError(file, version, STORE_SCHEMA_VERSION);
    throw bad(
      buf.length === 0
        ? 'the file is empty'
        : 'not a store envelope (truncated, overwritten or not written by this store)',
    );
  }
  const version = Number(m[1]);
  if (version > STORE_SCHEMA_VERSION) throw new SchemaVersionError(file, version, STORE_SCHEMA_VERSION);
  let end = buf.length - 1;
  while (end >= 0 && (buf[end] === 0x0a || buf[end] === 0x0d || buf[end] === 0x20 || buf[end] === 0x09)) end--;
  if (end < m[0].length || buf[end] !== 0x7d) throw bad('truncated (the envelope does not close)');
  const body = buf.subarray(m[0].length, end);
  if (sha256(body) !== m[3]) throw bad('checksum mismatch (the content changed after it was written)');
  if (m[2] !== kind) throw bad(`expected a ${kind} file, found kind "${m[2]}"`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(isAscii(body) ? body.toString('latin1') : body.toString('utf8'));
  } catch (err) {
    throw bad('the body is not JSON', err);
  }
  try {
    return migrate(kind, version, parsed, STORE_SCHEMA_VERSION, chain);
  } catch (err) {
    if (err instanceof MigrationGapError) throw new SchemaVersionError(file, version, STORE_SCHEMA_VERSION);
    throw bad(`cannot migrate from schema_version ${version}`, err);
  }
}

function versionOfForeignJson(text: string): number | null {
  try {
    const v: unknown = JSON.parse(text);
    const n = typeof v === 'object' && v !== null ? (v as { schema_version?: unknown }).schema_version : undefined;
    return typeof n === 'number' && Number.isInteger(n) ? n : null;
  } catch {
    return null;
  }
}

export interface WriteOptions {
  /**
   * 'replace' renames over the target. 'create' refuses (EEXIST) when the target exists: used for
   * write-once files inside a run that only the lock holder writes (checked before each commit), so a
   * check followed by rename suffices — it costs one metadata operation less than link + unlink.
   */
  mode: 'replace' | 'create';
  /** Backoff (ms) between retries of a rename that failed with EPERM or EBUSY. */
  retryDelaysMs?: readonly number[];
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [10, 25, 50, 100, 200];
const TRANSIENT = new Set(['EPERM', 'EBUSY']);

/** Thrown when the file was published (renamed/linked) but the directory fsync failed. */
export class UnsyncedPublishError extends Error {
  constructor(cause: unknown) {
    super(`directory fsync failed after the file was published: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
  get code(): string | undefined {
    return errCode(this.cause);
  }
}

async function retryTransient(fn: () => Promise<void>, delays: readonly number[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      // Windows (virus scanners, indexers) holds files briefly: EPERM/EBUSY usually clear in ms.
      const delay = delays[attempt];
      if (!TRANSIENT.has(errCode(err) ?? '') || delay === undefined) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** temp (unique, same dir) → write → fsync → close → rename → fsync dir. */
export async function writeDurably(
  fsl: FsLayer,
  target: string,
  data: string | Buffer,
  opts: WriteOptions,
): Promise<void> {
  if (opts.mode === 'create' && (await exists(fsl, target)))
    throw Object.assign(new Error(`EEXIST: ${target} already exists`), { code: 'EEXIST', path: target });
  await publish(fsl, await stageDurably(fsl, target, data), target, opts.retryDelaysMs);
}

/**
 * The first half of writeDurably: `data` in a unique temp file beside `target`, fsync'd and closed;
 * its path is returned for publish() (or to be removed). A crash leaves a temp file the next owner sweeps.
 */
export async function stageDurably(fsl: FsLayer, target: string, data: string | Buffer): Promise<string> {
  const tmp = tempBeside(target);
  const fd = await fsl.createExclusive(tmp);
  try {
    try {
      await fsl.write(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      await fsl.fsync(fd);
    } finally {
      await fsl.close(fd);
    }
  } catch (err) {
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  }
  return tmp;
}

/** A unique temp file's path beside `target` (one a crash leaves is swept by the next owner). */
function tempBeside(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`,
  );
}

/**
 * `data` in place of `target` without fsync (temp file, rename): for a cache that is used only while
 * it fits what it describes (index_head.json, a run's resume point). After a power loss it may be
 * missing, short or stale; the rename never leaves it half written over the old one.
 */
export async function replaceUnsynced(fsl: FsLayer, target: string, data: Buffer): Promise<void> {
  const tmp = tempBeside(target);
  const fd = await fsl.createExclusive(tmp);
  try {
    await fsl.write(fd, data);
  } finally {
    await fsl.close(fd);
  }
  await fsl.rename(tmp, target).catch(async (err: unknown) => {
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  });
}

/** The second half: a staged (or otherwise fsync'd) temp file renamed over `target`, then its directory fsync'd. */
export async function publish(
  fsl: FsLayer,
  tmp: string,
  target: string,
  retryDelaysMs: readonly number[] = DEFAULT_RETRY_DELAYS_MS,
): Promise<void> {
  try {
    await retryTransient(() => fsl.rename(tmp, target), retryDelaysMs);
  } catch (err) {
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  }
  try {
    await fsyncDir(fsl, path.dirname(target));
  } catch (err) {
    throw new UnsyncedPublishError(err);
  }
}

async function exists(fsl: FsLayer, p: string): Promise<boolean> {
  try {
    await fsl.stat(p);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

export async function fsyncDir(fsl: FsLayer, dir: string): Promise<void> {
  if (process.platform === 'win32') return; // directories cannot be fsync'd there; NTFS journals renames
  const fd = await fsl.openDir(dir);
  try {
    await fsl.fsync(fd);
  } finally {
    await fsl.close(fd);
  }
}

/** A lowdb Adapter<T> over one enveloped, checksummed, zod-validated, durably written JSON file. */
export class DurableJsonFile<T> implements Adapter<T> {
  constructor(
    private readonly fsl: FsLayer,
    readonly file: string,
    private readonly kind: FileKind,
    private readonly schema: z.ZodType<T>,
    private readonly runId: string | null = null,
    private readonly retryDelaysMs?: readonly number[],
  ) {}

  /** null only when the file does not exist; a file that exists is valid data or an error. */
  async read(): Promise<T | null> {
    let data: Buffer;
    try {
      data = await this.fsl.readFile(this.file);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    return this.parse(data);
  }

  parse(data: Buffer | string): T {
    const body = decodeEnvelope(data, this.file, this.kind, this.runId);
    // The fast path first (the body is fresh from JSON.parse: nobody else holds it). zod's first parse in
    // a process compiles code of its own, and the index is read at every activation of the extension.
    const r = parseFast(this.schema, body);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid';
      throw new AgentCheckpointCorruptionError(
        `${this.file} is corrupt: does not match its schema (${where})`,
        this.runId,
        this.file,
      );
    }
    return r.data;
  }

  /** Replaces the file atomically (lowdb's Low.write calls this). */
  async write(data: T): Promise<void> {
    await writeDurably(this.fsl, this.file, encodeEnvelope(this.kind, data), {
      mode: 'replace',
      retryDelaysMs: this.retryDelaysMs,
    });
  }

  /** Creates the file; EEXIST if it already exists (write-once files never overwrite each other). */
  async create(data: T): Promise<number> {
    const text = encodeEnvelope(this.kind, data);
    await writeDurably(this.fsl, this.file, text, { mode: 'create', retryDelaysMs: this.retryDelaysMs });
    return Buffer.byteLength(text);
  }
}
