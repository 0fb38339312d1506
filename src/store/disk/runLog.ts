// One run's log on disk, as its holder writes it and another window follows it (format: segment.ts and
// docs/format.md, loading: load.ts). A commit is one frame appended at the segment's known end and
// fdatasync'd; a failed append is cut off before the next one, so a half-written frame never sits
// before a good one. After each barrier the run's witness file gets the new count (witness.ts).
import path from 'node:path';
import type { LoadSink } from '../core/engine';
import type { CommitOp } from '../core/storedSchema';
import { advance, encodeOps, type Codec } from './codec';
import { decodeCommit, isRawCommit, type RawCommit, rel } from './commit';
import { compactBeside, type LogPort } from './besideCompaction';
import { fsyncDir, publish, writeDurably } from './durableFile';
import type { FsLayer } from './fsLayer';
import { SNAPSHOT_FILE, type SegmentTail } from './load';
import { stageSnapshot } from './snapshotStage';
import { shortJson } from './frameKeys';
import { copyFrameAsync } from './segmentCopy';
import { encodeFrame, frameKey, frameOfJson, type FrameKey, readFrame } from './frame';
import { parseSegment, parseSegmentNames, SEGMENT_VERSION, segmentName, type SegmentHeader } from './segment';
import { areaOf, encodeSlot, SLOT, WITNESS_AREA, WITNESS_FILE, witnessFile, type TailWitness } from './witness';
import type { RunLogState } from './runLogState';
import type { PointPosition } from './resumePoint';

export type { RunLogState } from './runLogState';

/** Room a segment is given ahead of its appends (reserve), and the room left below which more is written. */
export const ROOM = 128 * 1024;
/** A log this large is compacted in a worker thread: below it, the worker's start costs more than it saves. */
export const OFF_THREAD_FROM = 1024 * 1024;
const ROOM_LOW = 32 * 1024;

export class RunLog {
  private fd: number | null = null;
  /** The witness file's descriptor (opened on its first slot write). */
  private wfd: number | null = null;
  /** An append failed part-way: the segment's end is unknown until it is cut back to `tail.size`. */
  private dirty = false;
  /** Witness writes in order; closing the file waits for them (its descriptor is never reused under one). */
  private witnessChain: Promise<void> = Promise.resolve();
  /** No witness write is in flight (witnessChain has settled): the next may be written at once. */
  private witnessIdle = true;
  /** A witness's slot encoded ahead (prepareWitness), for writeWitness with that very object. */
  private preparedSlot: { w: TailWitness; slot: Buffer } | null = null;
  /** A compaction is replacing the segment. */
  private compacting = false;
  /** The ops of each commit appended while a compaction runs beside the appends (compactBeside). */
  private since: (readonly CommitOp[])[] | null = null;
  /** That compaction, settled (never rejects): a compaction asked for meanwhile waits for it. */
  private besideJob: Promise<void> | null = null;
  private opening: Promise<number> | null = null;
  /** What a follower last saw of the snapshot (a compaction by the holder means: reload). */
  private snapshotStamp: number | null = null;
  /** What this run's commit frames' checksums continue from. */
  private key: FrameKey | null = null;
  /** The run's newest resume point (resumePoint.ts): its segment, where it stands, its file's size. */
  private point: { segment: string; offset: number; bytes: number } | null = null;
  /** The snapshot's size in bytes, as last measured (0: none, or not measured yet). */
  private snapshotBytes = 0;

  constructor(
    private readonly fsl: FsLayer,
    private readonly root: string,
    readonly runId: string,
    readonly s: RunLogState,
    private readonly retryDelaysMs?: readonly number[],
    /** Log bytes from which a compaction's snapshot is made in a worker thread (snapshotStage.ts). */
    private readonly offThreadFrom = OFF_THREAD_FROM,
  ) {}

  private file(...parts: string[]): string {
    return path.join(this.root, rel(this.runId, ...parts));
  }

  /**
   * A new segment holding only its header and its witness area (the newest witness known, or blank),
   * fsync'd, its directory fsync'd (unless `syncDir` is false: the caller does it): the only directory
   * fsync a segment costs.
   */
  private async newSegment(first: number, syncDir = true): Promise<SegmentTail> {
    const name = segmentName(first);
    const header: SegmentHeader = { segment: SEGMENT_VERSION, run_id: this.runId, first, meta: this.s.meta };
    const frame = encodeFrame(header);
    await this.createSynced(name, Buffer.concat([frame, areaOf(this.s.witness)]));
    if (syncDir) await fsyncDir(this.fsl, this.file());
    const size = frame.length + WITNESS_AREA;
    return { name, first, size, witnessAt: frame.length, copiedTo: size, allocated: size };
  }

  /** A file of the run created with `bytes`, fsync'd (never over an existing one). */
  private async createSynced(name: string, bytes: Buffer): Promise<void> {
    const fd = await this.fsl.createExclusive(this.file(name));
    try {
      await this.fsl.write(fd, bytes);
      await this.fsl.fsync(fd);
    } finally {
      await this.fsl.close(fd);
    }
  }

  /** A new run: its first segment (the meta in its header) and its witness file, one directory fsync for both. */
  async create(): Promise<void> {
    const w = witnessFile(this.s.meta, this.s.witness);
    const [seg, wit] = await Promise.allSettled([this.newSegment(1, false), this.createSynced(WITNESS_FILE, w.bytes)]);
    if (seg.status === 'rejected') throw seg.reason;
    if (wit.status === 'rejected') throw wit.reason;
    await fsyncDir(this.fsl, this.file());
    this.s.tail = seg.value;
    this.s.witnessAt = w.areaAt;
  }

  /** Appends the next commit: one write at the segment's end, and (`sync`) one fdatasync — the barrier. */
  async append(
    ops: readonly CommitOp[],
    sync = true,
    owned: Promise<void> = Promise.resolve(),
    meanwhile?: () => void,
  ): Promise<void> {
    owned.catch(() => undefined); // (awaited below, before anything is written; this only keeps an early throw from leaving it unhandled)
    const n = this.s.next;
    // (No segment yet: the one created below starts with this commit.)
    const { frame, next } = this.commitFrame(n, ops, this.s.codec, !this.s.tail || n === this.s.tail.first);
    await owned;
    const tail = (this.s.tail ??= await this.newSegment(n));
    if (this.dirty) {
      await this.fsl.truncate(this.file(tail.name), tail.size);
      this.dirty = false;
      tail.allocated = tail.size;
    }
    const fd = this.fd ?? (await this.segmentFd(tail));
    try {
      await this.fsl.pwrite(fd, frame, tail.size);
      if (sync) {
        // The barrier waits on the thread pool: meanwhile the caller's thread does what comes after it.
        const synced = this.fsl.fdatasync(fd);
        meanwhile?.();
        await synced;
      }
    } catch (err) {
      this.dirty = true; // not acknowledged: whatever reached the file is cut off before the next append
      throw err;
    }
    tail.size += frame.length;
    tail.allocated = Math.max(tail.allocated, tail.size);
    this.s.next = n + 1;
    advance(this.s.codec, next);
    this.since?.push(ops);
  }

  /**
   * Commit `n`'s frame, its ops encoded against `codec` (not moved: `next` moves it once the commit is
   * accepted). `first`: the first commit of a segment repeats the meta, so a damaged header does not
   * make the run unopenable.
   */
  private commitFrame(n: number, ops: readonly CommitOp[], codec: Codec, first: boolean) {
    const enc = encodeOps(ops, codec, this.s.meta);
    const meta = first ? this.s.meta : undefined;
    // In short keys (frameKeys.ts); long if it holds a key of its own that reads as a short one.
    const text =
      shortJson(n, meta, enc.ops) ??
      JSON.stringify({
        run_id: this.runId,
        first: n,
        last: n,
        ...(meta ? { meta } : {}),
        ops: enc.ops,
      } satisfies Omit<RawCommit, 'witnessed'>);
    return { frame: frameOfJson(text, (this.key ??= frameKey(this.runId)).seed), next: enc.next };
  }

  /**
   * Whether the segment's room written ahead is running out (below ROOM_LOW past its last frame):
   * reserve() then writes more. Only with nothing half-written in the segment.
   */
  needsRoom(): boolean {
    const tail = this.s.tail;
    return tail !== null && !this.dirty && !this.compacting && tail.allocated - tail.size < ROOM_LOW;
  }

  /**
   * Room ahead of the appends: zeros written past the segment's end (to ROOM bytes past its last
   * frame) and fdatasync'd, off the step's path (the store calls it while the runner waits for the
   * model). An fdatasync after an append that grows the file must also make the new size (and on
   * ext4 its newly allocated blocks) durable — a journal commit beside the data; after an append
   * into blocks that are already written and counted, it writes the data alone. That is what databases do with their
   * write-ahead logs (PostgreSQL fills each WAL segment with zeros before use). A reader takes zeros
   * after the last frame as the segment's end (segment.ts). It costs each byte of the log
   * a second write (its zeros first), and at most ROOM bytes of zeros a working run's segment; a
   * run let go has its room cut off (trimRoom). A failure here loses nothing: the appends then
   * extend the file themselves, as without it.
   */
  async reserve(): Promise<void> {
    if (!this.needsRoom()) return;
    const tail = this.s.tail!;
    // (past what is there: needsRoom said less than ROOM_LOW is left)
    const to = Math.ceil((tail.size + ROOM) / 4096) * 4096;
    const from = tail.allocated;
    const fd = await this.segmentFd(tail);
    try {
      await this.fsl.pwrite(fd, Buffer.alloc(to - from), from);
      await this.fsl.fdatasync(fd);
    } catch {
      return; // (zeros past the end, whole or not, are still the segment's end)
    }
    if (this.s.tail === tail && !this.dirty) tail.allocated = Math.max(tail.allocated, to);
  }

  /** When the run is let go: the room written ahead is cut off (a finished or paused run keeps no zeros). */
  async trimRoom(): Promise<void> {
    const tail = this.s.tail;
    if (!tail || this.dirty || tail.allocated <= tail.size) return;
    await this.fsl.truncate(this.file(tail.name), tail.size);
    tail.allocated = tail.size;
  }

  /**
   * When the run is let go: a copy of the segment's header and of the commit frames written since the
   * last copy (segmentCopy.ts), appended as one frame and fdatasync'd, so damage to any one of them
   * loses nothing. They are read back and checked first (a frame that no longer checks out is never
   * copied: the next load finds it). Nothing to copy, or an append that failed: nothing written. A failure is returned to the caller, which lets the run go anyway (the log is
   * whole either way; only the copy is missing).
   */
  async writeCopy(): Promise<boolean> {
    const tail = this.s.tail;
    if (!tail || this.dirty || this.compacting || tail.size <= tail.copiedTo || tail.witnessAt === null) return false;
    const fd = await this.segmentFd(tail);
    // Only what the copy holds is read: the header frame (it ends where the witness area starts) and
    // the frames after the last copy.
    const file = this.file(tail.name);
    const header = await this.fsl.readFrom(file, 0, tail.witnessAt);
    const fresh = await this.fsl.readFrom(file, tail.copiedTo, tail.size - tail.copiedTo);
    const h = readFrame(header, 0, { parse: false });
    const parsed = parseSegment(fresh, { runId: this.runId, headless: true, checksumsOnly: true });
    if (!h.ok || h.frame.end !== header.length) return false;
    if (parsed.stop || parsed.corrected.length > 0 || parsed.validEnd !== fresh.length || parsed.copies.length > 0)
      return false;
    // (The copy names its first commit: that frame's value is the only one read.)
    const key = (this.key ??= frameKey(this.runId));
    const [f0, ...rest] = parsed.frames;
    const first = f0 && readFrame(fresh, f0.start, { key });
    if (!first?.ok) return false;
    const frame = await copyFrameAsync(header, fresh, [first.frame, ...rest], key);
    if (!frame) return false;
    try {
      await this.fsl.pwrite(fd, frame, tail.size);
      await this.fsl.fdatasync(fd);
    } catch (err) {
      this.dirty = true; // cut off before the next append, as a failed commit is
      throw err;
    }
    tail.size += frame.length;
    tail.copiedTo = tail.size;
    tail.allocated = Math.max(tail.allocated, tail.size);
    return true;
  }

  /** fdatasync of the segment written last: what write-behind appends wrote becomes durable. */
  async sync(): Promise<void> {
    if (this.fd !== null) await this.fsl.fdatasync(this.fd);
  }

  /** The segment's descriptor, opened once however many writes ask for it at the same time. */
  private async segmentFd(tail: SegmentTail): Promise<number> {
    if (this.fd !== null) return this.fd;
    this.opening ??= this.fsl.openForUpdate(this.file(tail.name)).then(
      (fd) => {
        this.opening = null;
        return (this.fd = fd);
      },
      (err: unknown) => {
        this.opening = null;
        throw err;
      },
    );
    return this.opening;
  }

  /** Encodes the slot writeWitness(w) will write, ahead (while the commit's barrier is in flight). */
  prepareWitness(w: TailWitness): void {
    try {
      this.preparedSlot = { w, slot: encodeSlot(w) };
    } catch {
      this.preparedSlot = null; // (writeWitness meets the same error, and swallows it there)
    }
  }

  /**
   * The witness after an acknowledged commit, in the run's witness file (witness.ts): one slot in place,
   * no fsync of its own (a power loss before the kernel writes it back, or the run's release syncs it,
   * leaves it behind: claiming less, never more). `reset`, or a file missing or bad at load: the file
   * written whole, and the segment's area with it. Never fails its caller: a witness that lags only
   * weakens detection.
   */
  writeWitness(w: TailWitness, opts: { reset: boolean }): Promise<void> {
    const prepared = this.preparedSlot?.w === w && !opts.reset ? this.preparedSlot.slot : null;
    this.preparedSlot = null;
    this.s.witness = w;
    const at = this.s.witnessAt;
    if (prepared && this.witnessIdle && this.wfd !== null && at !== null) {
      // The usual case, after a barrier: nothing queued before it and the file open — the slot is
      // written now, without the chain's turns between the barrier and its caller.
      return this.chainWitness(this.fsl.pwrite(this.wfd, prepared, at + (w.commits % 2) * SLOT));
    }
    const run = async () => {
      const slotsAt = this.s.witnessAt;
      if (opts.reset || slotsAt === null) return this.rewriteWitness(w);
      this.wfd ??= await this.fsl.openForUpdate(this.file(WITNESS_FILE));
      await this.fsl.pwrite(this.wfd, prepared ?? encodeSlot(w), slotsAt + (w.commits % 2) * SLOT);
    };
    return this.chainWitness(this.witnessChain.then(run));
  }

  /** The witness file written whole (temp file, rename), and the segment's witness area with it. */
  private async rewriteWitness(w: TailWitness): Promise<void> {
    await this.closeWitnessFd();
    const f = witnessFile(this.s.meta, w);
    await writeDurably(this.fsl, this.file(WITNESS_FILE), f.bytes, {
      mode: 'replace',
      retryDelaysMs: this.retryDelaysMs,
    });
    this.s.witnessAt = f.areaAt;
    const tail = this.s.tail;
    if (tail?.witnessAt != null && !this.compacting)
      await this.fsl.pwrite(await this.segmentFd(tail), areaOf(w), tail.witnessAt);
  }

  /** When the run is let go: its witness file made durable (its slots are written without a sync of their own). */
  async syncWitness(): Promise<void> {
    await this.witnessChain;
    if (this.wfd !== null) await this.fsl.fdatasync(this.wfd).catch(() => undefined);
  }

  /** `next` becomes the last witness write in order; its failure is swallowed (a lagging witness only weakens detection). */
  private chainWitness(next: Promise<void>): Promise<void> {
    const done = next.catch(() => undefined);
    this.witnessChain = done;
    this.witnessIdle = false;
    void done.then(() => {
      if (this.witnessChain === done) this.witnessIdle = true;
    });
    return done;
  }

  /**
   * The whole log as snapshot.json (framed, with a deflated spare copy: snapshotFile.ts; temp file →
   * fsync → rename → fsync of the folder), read back, then a fresh segment for what comes next, then
   * the old files go. A crash at any point leaves a readable run: the loader takes the snapshot and
   * skips the frames it covers; leftovers go at the next load.
   * `end`: the run's end as of its last commit (core/end.ts), written in front of the snapshot for views to read alone.
   */
  async compact(ops: readonly CommitOp[], end?: unknown): Promise<void> {
    await this.besideJob; // (one compaction at a time: a later one covers more)
    this.compacting = true;
    try {
      await this.compactLog(ops, end);
    } finally {
      this.compacting = false;
    }
  }

  /**
   * The log as it is now (`ops`: the run as of its last commit) compacted while appends go on to the
   * live segment: the snapshot is staged and checked, and a new segment built under a temp name with
   * the commits appended since, re-encoded to follow the snapshot, all beside the appends. Then, in
   * `critical` (no append in flight), the commits since are added, the new segment renamed into place
   * (the loader skips a segment a later one supersedes: segment.ts), then the snapshot, each rename
   * made durable before the next, and appends go on to the new segment. Only then do the old files go.
   * The length is taken when this is called, before anything awaits.
   */
  compactBeside(
    ops: readonly CommitOp[],
    end: unknown,
    critical: (fn: () => Promise<void>) => Promise<void>,
    owned: () => Promise<void>,
  ): Promise<void> {
    const last = this.s.next - 1;
    const tail = this.s.tail;
    // (Nothing appended since the last compaction, or one under way: nothing to do beside the appends.)
    if (this.compacting || !tail || tail.first > last) return Promise.resolve();
    this.compacting = true;
    this.since = [];
    const job = compactBeside(this.port(), last, tail, ops, end, critical, owned).finally(() => {
      this.compacting = false;
      this.since = null;
    });
    this.besideJob = job.catch(() => undefined);
    return job;
  }

  /** What a compaction beside the appends reads and changes of the log (besideCompaction.ts). */
  private port(): LogPort {
    return {
      fsl: this.fsl,
      runId: this.runId,
      s: this.s,
      retryDelaysMs: this.retryDelaysMs,
      file: (...parts) => this.file(...parts),
      takeSince: () => this.since?.splice(0) ?? [],
      offThreadFrom: this.offThreadFrom,
      commitFrame: (n, ops, codec, first) => this.commitFrame(n, ops, codec, first),
      adopt: async (fresh, fd, codec, covered) => {
        const old = this.fd;
        this.fd = fd;
        this.dirty = false; // (a failed append's bytes were in the old segment)
        this.s.tail = fresh;
        this.s.codec = codec;
        this.s.covered = covered;
        this.s.compactFirst = false;
        void this.measureSnapshot();
        if (old !== null) await this.fsl.close(old).catch(() => undefined);
      },
    };
  }

  private async compactLog(ops: readonly CommitOp[], end?: unknown): Promise<void> {
    const last = this.s.next - 1;
    const meta = this.s.meta;
    if (last >= 1) {
      const file = this.file(SNAPSHOT_FILE);
      const tail = this.s.tail;
      const offThread = {
        files: { dir: this.file(), tail: tail && { name: tail.name, size: tail.size } },
        from: this.offThreadFrom,
        background: false, // (the run is being let go, or its next write waits for this)
      };
      const staged = await stageSnapshot(this.fsl, file, this.runId, meta, ops, last, end, offThread);
      await publish(this.fsl, staged.tmp, file, this.retryDelaysMs);
      this.s.codec = staged.codec;
    }
    await this.closeFd();
    const old = parseSegmentNames(await this.fsl.readdir(this.file()));
    const fresh = await this.newSegment(last + 1).catch(async (err: unknown): Promise<SegmentTail> => {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      // Compacted at this length before: that segment holds no commit the log has (it would be longer).
      const name = segmentName(last + 1);
      const buf = await this.fsl.readFile(this.file(name));
      const parsed = parseSegment(buf);
      if (parsed.witnessAt !== null && !parsed.stop && parsed.corrected.length === 0) {
        const size = parsed.validEnd; // (room written ahead after it: zeros)
        return {
          name,
          first: last + 1,
          size,
          witnessAt: parsed.witnessAt,
          copiedTo: size,
          allocated: buf.length,
        };
      }
      await this.fsl.unlink(this.file(name)); // a torn header (no commit in it): made again
      return this.newSegment(last + 1);
    });
    for (const s of old) if (s.name !== fresh.name) await this.fsl.unlink(this.file(s.name));
    await fsyncDir(this.fsl, this.file());
    this.s.tail = fresh;
    this.s.covered = last;
    this.s.compactFirst = false;
    await this.measureSnapshot();
  }

  /**
   * Another window's progress: the frames appended since we last read. A half-written last frame
   * (the holder mid-append) waits for the next call; anything else unexpected means: reload.
   */
  async follow(sink: LoadSink): Promise<number | 'reload'> {
    const tail = this.s.tail;
    if (!tail) return 'reload';
    const names = await this.fsl.readdir(this.file()).catch(() => null);
    if (!names) return 'reload';
    const segs = parseSegmentNames(names);
    if (segs[segs.length - 1]?.name !== tail.name) return 'reload'; // compacted, or the holder moved on
    const stamp = names.includes(SNAPSHOT_FILE)
      ? ((await this.fsl.stat(this.file(SNAPSHOT_FILE)).catch(() => null))?.mtimeMs ?? -1)
      : null;
    if (this.snapshotStamp !== null && stamp !== this.snapshotStamp) return 'reload';
    this.snapshotStamp = stamp;
    const buf = await this.fsl.readFrom(this.file(tail.name), tail.size).catch(() => null);
    if (!buf) return 'reload';
    const parsed = parseSegment(buf, { runId: this.runId, headless: true });
    if (parsed.stop && !parsed.stop.torn) return 'reload'; // a full load reports (and, if allowed, repairs) it
    const from = tail.size;
    let n = 0;
    for (const f of parsed.frames) {
      const raw = f.value;
      if (!isRawCommit(raw) || raw.first !== this.s.next || raw.run_id !== this.runId) return 'reload';
      try {
        const d = decodeCommit(raw, this.s.codec, this.s.meta, rel(this.runId, tail.name), this.runId);
        sink.commit(d.body, rel(this.runId, tail.name));
        advance(this.s.codec, d.delta);
      } catch {
        return 'reload';
      }
      this.s.next++;
      n++;
    }
    tail.size = from + parsed.validEnd; // the holder's copy frames (not commits) passed over too
    if (parsed.copies.length > 0) tail.copiedTo = from + parsed.copiedTo;
    return n;
  }

  /** Measures the snapshot's size (for pointDue), after a load or a compaction; never fails. */
  async measureSnapshot(): Promise<void> {
    const st = await this.fsl.stat(this.file(SNAPSHOT_FILE)).catch(() => null);
    this.snapshotBytes = st?.size ?? 0;
  }

  /** The point this log was read from (loadFromPoint): the next is due from there. */
  notePoint(p: { segment: string; offset: number; bytes: number }): void {
    this.point = p;
  }

  /**
   * Whether a resume point is due after the last commit: the log holds at least `from` bytes, and
   * the segment has grown by `every` bytes since the last point, or by as much as that point's file
   * (so its writes never exceed the log's own), or the last point is in a segment since compacted.
   * `every` 0: after every commit (tests).
   */
  pointDue(o: { from: number; every: number }): boolean {
    const tail = this.s.tail;
    if (!tail || !this.pointable() || this.snapshotBytes + tail.size < o.from) return false;
    const p = this.point;
    return !p || p.segment !== tail.name || o.every === 0 || tail.size - p.offset >= Math.max(o.every, p.bytes);
  }

  /**
   * A resume point after the last commit: where it stands, and the codec the next commits are encoded
   * against from now on — without the calls' records and outputs of before (a result is then written
   * whole, a tool message's content too), so the commits after it decode from the point alone.
   * undefined: none can be made now (a compaction is replacing the segment, or an append failed).
   */
  markPoint(): PointPosition | undefined {
    const tail = this.s.tail;
    if (!tail || !this.pointable()) return undefined;
    const c = this.s.codec;
    c.effects.clear();
    c.outputs.clear();
    this.point = { segment: tail.name, offset: tail.size, bytes: this.point?.bytes ?? 0 };
    return {
      segment: tail.name,
      first: tail.first,
      offset: tail.size,
      next: this.s.next,
      covered: this.s.covered,
      copiedTo: tail.copiedTo,
      codec: { header: c.header, payloads: Object.fromEntries(c.payloads), timestamp: c.timestamp },
    };
  }

  /**
   * Whether a point can stand after the last commit: not while a compaction replaces the segment
   * between commits (compact), nor after a failed append; while one runs beside the appends it can
   * (the appends go on in this segment, which stays the run's newest until the compaction is done,
   * and the compaction re-encodes what it carries over against a codec of its own).
   */
  private pointable(): boolean {
    return !this.dirty && (!this.compacting || this.since !== null);
  }

  /** The point at `pos` was written, `bytes` long. */
  pointWritten(pos: PointPosition, bytes: number): void {
    if (this.point?.segment === pos.segment && this.point.offset === pos.offset) this.point.bytes = bytes;
  }

  /** Closes the segment and the witness file once the witness writes are done. */
  async closeFd(): Promise<void> {
    await this.witnessChain;
    await this.closeWitnessFd();
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) await this.fsl.close(fd).catch(() => undefined);
  }

  private async closeWitnessFd(): Promise<void> {
    const fd = this.wfd;
    this.wfd = null;
    if (fd !== null) await this.fsl.close(fd).catch(() => undefined);
  }
}
