// One owner per run across processes: runs/<id>/owner.lock.
//  - created by link() of a complete, fsync'd temp file: atomic, never half-written, EEXIST if held;
//  - never rewritten: the heartbeat is the file's mtime (utimes), so a slow owner can never
//    overwrite the lock of the window that took over from it;
//  - stale when its pid is dead on this host, or its heartbeat is older than staleMs; a lock of the
//    same owner in this very process is a leftover its release could not remove, taken over at once;
//  - takeover renames the stale file to a unique name, checks it moved the file it judged stale
//    (else puts it back and backs off), then links its own;
//  - the owner re-reads the file before every commit and on every heartbeat: not ours → lost. Before
//    a commit a stat is enough when the path holds the very file last read and found ours,
//    untouched since (same inode, same change time): a takeover links a new file, and renaming
//    ours away or touching it changes its change time.
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { DurableJsonFile, encodeEnvelope, fsyncDir } from './durableFile';
import { AgentCheckpointCorruptionError, RunLockedError, RunNotOwnedError } from '../api/errors';
import { errCode, isMissing, type FsLayer } from './fsLayer';
import { LockBody } from '../core/storedSchema';
import type { EngineLock } from '../core/engine';
import type { OwnerInfo } from '../api/types';

export interface LockOptions {
  heartbeatMs: number;
  staleMs: number;
  hostname: string;
  now: () => number;
}

export const defaultLockOptions = (): LockOptions => ({
  heartbeatMs: 5_000,
  staleMs: 30_000,
  hostname: os.hostname(),
  now: Date.now,
});

export interface LockHooks {
  /** A corrupt or vanished lock file (moved to quarantine / re-created). */
  corrupt(file: string, reason: string): Promise<void>;
}

type Seen =
  | { kind: 'none' }
  | { kind: 'corrupt'; mtimeMs: number; reason: string }
  | { kind: 'ok'; body: LockBody; text: string; mtimeMs: number; ino: number; ctimeMs: number };

async function readLock(fsl: FsLayer, file: string): Promise<Seen> {
  let text: string;
  let st: Awaited<ReturnType<FsLayer['stat']>>;
  try {
    st = await fsl.stat(file);
    text = (await fsl.readFile(file)).toString('utf8');
  } catch (err) {
    if (isMissing(err)) return { kind: 'none' };
    throw err;
  }
  const { mtimeMs, ino, ctimeMs } = st;
  try {
    const body = new DurableJsonFile(fsl, file, 'lock', LockBody).parse(text);
    return { kind: 'ok', body, text, mtimeMs, ino, ctimeMs };
  } catch (err) {
    if (err instanceof AgentCheckpointCorruptionError) return { kind: 'corrupt', mtimeMs, reason: err.message };
    throw err;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM'; // exists, owned by another user
  }
}

function isStale(seen: Extract<Seen, { kind: 'ok' }>, o: LockOptions): boolean {
  if (seen.body.hostname === o.hostname && !pidAlive(seen.body.pid)) return true;
  return o.now() - Math.max(seen.body.heartbeat_ms, seen.mtimeMs) > o.staleMs;
}

/**
 * Our own lock that our release could not remove (a read-only remount, a full disk): same owner,
 * same live process. The store only asks for a run it does not hold, so this lock is nobody's.
 */
function isOwnLeftover(b: LockBody, owner: OwnerInfo, o: LockOptions): boolean {
  return b.owner_id === owner.owner_id && b.pid === process.pid && b.hostname === o.hostname;
}

const holderOf = (b: LockBody): OwnerInfo => ({
  owner_id: b.owner_id,
  label: b.label,
  pid: b.pid,
  hostname: b.hostname,
});
const unknownHolder = { label: 'an unknown window (its owner.lock is unreadable)', pid: 0, hostname: 'unknown' };

/** The live holder, or undefined when the lock is absent, stale or unreadable-and-old. */
export async function lockHolder(fsl: FsLayer, file: string, o: LockOptions): Promise<OwnerInfo | undefined> {
  const seen = await readLock(fsl, file);
  if (seen.kind === 'ok') return isStale(seen, o) ? undefined : holderOf(seen.body);
  if (seen.kind === 'corrupt' && o.now() - seen.mtimeMs <= o.staleMs) return { owner_id: 'unknown', ...unknownHolder };
  return undefined;
}

export class FileLock implements EngineLock {
  lost = false;
  /** The lock file last read and found ours (its inode and change time), for the stat-only check before a commit. */
  private known: { ino: number; ctimeMs: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  /** When this lock was last known touched by its owner (acquired, or a heartbeat that touched it). */
  private touchedMs: number;

  private constructor(
    private readonly fsl: FsLayer,
    readonly file: string,
    private readonly text: string,
    private readonly o: LockOptions,
    private readonly hooks: LockHooks,
  ) {
    this.touchedMs = o.now();
  }

  static async acquire(
    fsl: FsLayer,
    runDir: string,
    runId: string,
    owner: OwnerInfo,
    o: LockOptions,
    hooks: LockHooks,
  ): Promise<FileLock> {
    const file = path.join(runDir, 'owner.lock');
    const now = o.now();
    const body: LockBody = {
      owner_id: owner.owner_id,
      pid: owner.pid,
      hostname: owner.hostname,
      label: owner.label,
      acquired_ms: now,
      heartbeat_ms: now,
    };
    const text = encodeEnvelope('lock', body);
    const tmp = await writeTemp(fsl, file, text);
    try {
      let holder: OwnerInfo | typeof unknownHolder = unknownHolder;
      for (let attempt = 0; attempt < 6; attempt++) {
        try {
          await fsl.link(tmp, file);
          await fsyncDir(fsl, runDir);
          const lock = new FileLock(fsl, file, text, o, hooks);
          lock.start();
          return lock;
        } catch (err) {
          if (errCode(err) !== 'EEXIST') throw err;
        }
        const seen = await readLock(fsl, file);
        if (seen.kind === 'none') continue; // released (or mid-takeover) just now: try again
        if (seen.kind === 'corrupt') {
          if (o.now() - seen.mtimeMs <= o.staleMs) throw new RunLockedError(runId, unknownHolder);
          await hooks.corrupt(file, seen.reason); // old and unreadable: nobody keeps it alive
          continue;
        }
        holder = holderOf(seen.body);
        if (!isStale(seen, o) && !isOwnLeftover(seen.body, owner, o)) throw new RunLockedError(runId, holder);
        await takeOver(fsl, file, seen);
      }
      throw new RunLockedError(runId, holder);
    } finally {
      await fsl.unlink(tmp).catch(() => undefined);
    }
  }

  private start(): void {
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => (this.beating = null));
    }, this.o.heartbeatMs);
    this.timer.unref();
  }

  /** Heartbeat: still ours → touch it; gone → re-create it; someone else's → lost. */
  async beat(): Promise<void> {
    if (this.lost) return;
    try {
      const seen = await readLock(this.fsl, this.file);
      if (seen.kind === 'ok') {
        if (seen.text !== this.text) return this.markLost();
        const now = this.o.now();
        await this.fsl.utimes(this.file, now);
        this.touchedMs = now;
        return;
      }
      if (seen.kind === 'corrupt') await this.hooks.corrupt(this.file, seen.reason);
      else await this.hooks.corrupt(this.file, 'owner.lock vanished while the run was held');
      await this.relink();
    } catch {
      // an I/O error on a heartbeat is retried on the next one; writes verify the lock themselves
    }
  }

  private async relink(): Promise<void> {
    const tmp = await writeTemp(this.fsl, this.file, this.text);
    try {
      await this.fsl.link(tmp, this.file);
    } catch (err) {
      if (errCode(err) === 'EEXIST')
        this.markLost(); // someone took it in between
      else throw err;
    } finally {
      await this.fsl.unlink(tmp).catch(() => undefined);
    }
  }

  /** Before every commit: the file must still be the one we created. */
  async verify(runId: string): Promise<void> {
    if (this.lost) throw new RunNotOwnedError(runId);
    const known = this.known;
    if (known) {
      // The path still holds the file last read and found ours, untouched since: ours.
      const st = await this.fsl.stat(this.file).catch(() => null);
      if (st && st.ino === known.ino && st.ctimeMs === known.ctimeMs) return;
    }
    const seen = await readLock(this.fsl, this.file);
    this.known = null;
    if (seen.kind === 'ok' && seen.text !== this.text) {
      this.markLost();
      throw new RunNotOwnedError(runId);
    }
    // The stat before the read saw this file: the path only ever goes from ours to another's.
    if (seen.kind === 'ok') this.known = { ino: seen.ino, ctimeMs: seen.ctimeMs };
    // missing or corrupt: still ours as far as anyone can tell; the heartbeat restores it
  }

  /**
   * Before a side effect starts: the lock is ours right now. A heartbeat overdue by half the stale
   * limit (the process was stopped or starved) is made first, so a window that finds the lock stale
   * from here on sees it fresh, or this one sees it taken; the usual case costs the verify's stat.
   */
  async prove(runId: string): Promise<void> {
    if (this.lost) throw new RunNotOwnedError(runId);
    if (this.o.now() - this.touchedMs > this.o.staleMs / 2) {
      this.beating ??= this.beat().finally(() => (this.beating = null));
      await this.beating;
    }
    await this.verify(runId);
  }

  private markLost(): void {
    this.lost = true;
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async release(): Promise<void> {
    this.stop();
    if (this.lost) return;
    this.lost = true;
    const seen = await readLock(this.fsl, this.file).catch(() => ({ kind: 'none' }) as const);
    if (seen.kind === 'ok' && seen.text === this.text) await this.fsl.unlink(this.file).catch(() => undefined);
  }
}

/** A complete, fsync'd temp file beside `file`, ready to be linked into place. */
async function writeTemp(fsl: FsLayer, file: string, text: string): Promise<string> {
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`,
  );
  const fd = await fsl.createExclusive(tmp);
  try {
    await fsl.write(fd, Buffer.from(text));
    await fsl.fsync(fd);
  } catch (err) {
    await fsl.close(fd).catch(() => undefined);
    await fsl.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsl.close(fd);
  return tmp;
}

/**
 * Moves the stale lock aside; if what moved is not the lock we judged stale, or its owner touched it
 * since (it came back from a stop and proves its lease before a side effect), puts it back.
 */
async function takeOver(fsl: FsLayer, file: string, stale: Extract<Seen, { kind: 'ok' }>): Promise<void> {
  const aside = `${file}.stale-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await fsl.rename(file, aside);
  } catch (err) {
    if (isMissing(err)) return; // someone else moved it first
    throw err;
  }
  const moved = (await fsl.readFile(aside)).toString('utf8');
  // Touched after it was judged: its owner is alive (a leftover of our own, judged by its owner, is not touched).
  const touched = moved === stale.text && (await fsl.stat(aside)).mtimeMs > stale.mtimeMs;
  if (moved !== stale.text || touched) await fsl.link(aside, file).catch(() => undefined); // a live lock: restore it (EEXIST: a third window won)
  await fsl.unlink(aside).catch(() => undefined);
}
