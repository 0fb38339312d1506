// Ours: the disk store (src/store) through its public CheckpointStore interface, used the way the
// runner uses it: the workload's ops carry the durability the runner asks for and its barriers
// (makeDurable before any request; the response before the first tool). What a step leaves queued
// (its results, post_tool_batch) rides on the next step's first barrier, which that step pays for.
// The store is opened with a backstop timer longer than any interleaved round (deferMs), so no
// commit of ours ever lands on a peer's clock, and with index.json written only when what a
// listing shows changes (the extension also every 30 s; a running run's state does not change).
import fs from 'node:fs';
import path from 'node:path';
import { type FsLayer, nodeFs, openDiskStore } from '../../src/store';
import { zerosFrom } from '../../src/store/disk/segment';
import type { CheckpointStore, NewRunInput, OwnerInfo, RunLease } from '../../src/store/api/types';
import { applyOp, type Op } from '../workload';
import type { Contender } from './types';

export type OpenStore = (dir: string, fs?: FsLayer) => CheckpointStore;

export const BENCH_OWNER: OwnerInfo = {
  owner_id: 'bench-owner',
  label: 'benchmark',
  pid: process.pid,
  hostname: 'bench',
};

export class OursContender implements Contender {
  readonly name: 'ours' | 'api' | 'api_flush' = 'ours';
  protected store: CheckpointStore | undefined;
  private lease: RunLease | undefined;
  private readonly runId: string;

  constructor(
    readonly dir: string,
    private readonly open: OpenStore,
    private readonly run: NewRunInput,
    private readonly runStarted: Op,
  ) {
    this.runId = run.run_id!;
  }

  /** Counts what the store does on disk, through the fs layer it accepts for fault injection. */
  readonly counter = new CountingFs();

  async start(): Promise<void> {
    this.store = this.open(this.dir, this.counter.layer);
    const { lease } = await this.store.createRun(this.run, BENCH_OWNER);
    this.lease = lease;
    await this.apply(this.runStarted);
    await this.store.flush();
  }

  async apply(op: Op): Promise<void> {
    await applyOp(this.store!, this.runId, op);
  }

  async endStep(): Promise<void> {
    // Nothing: the next step's barrier carries what this one queued.
  }

  async modelWait(): Promise<void> {
    await this.store!.whenIdle(this.runId);
  }

  /** Waits for a compaction still running in the background (and writes what is queued): a crash copy is taken after. */
  async idle(): Promise<void> {
    await this.store!.flush();
    await this.store!.whenIdle(this.runId);
  }

  compactionBytes(): number {
    return this.counter.bytesByKind.snapshot;
  }

  roomBytes(): number {
    return this.counter.roomBytes;
  }

  pointBytes(): number {
    return this.counter.bytesByKind.point;
  }

  barriersNow(): number {
    return this.counter.barriers;
  }

  /**
   * Every byte the store writes goes through its fs layer: counted there, exactly. (The process
   * counter also sees a few stray writes of other threads — tens of KB in a handful of the 1000
   * steps — that are not the store's.)
   */
  bytesWritten(): number {
    return this.counter.bytes;
  }

  /** Durable barriers: every fsync or fdatasync of a file (segment appends, blobs, index.json, snapshots). */
  async durableWrites(): Promise<number> {
    return this.counter.barriers;
  }

  async close(): Promise<void> {
    await this.lease?.release();
    await this.store?.close();
    this.store = undefined;
    this.lease = undefined;
  }

  resume(): Promise<{ messages: number; close(): Promise<void> }> {
    return this.resumeFrom(this.dir);
  }

  /**
   * A copy of the store as it is now, while the run is still held: what a crash (SIGKILL) leaves.
   * After a crash resume reads the snapshot of the last compaction (on release, or in the background
   * while the run works) and every commit written since; this measures that case.
   */
  crashCopy(
    to: string,
    whole = false,
  ): { name: string; resume: () => Promise<{ messages: number; close(): Promise<void> }> } {
    fs.cpSync(this.dir, to, { recursive: true });
    return {
      name: whole ? 'ours_whole_after_crash' : 'ours_after_crash',
      resume: () => this.resumeFrom(to, whole),
    };
  }

  /**
   * As the runner resumes (runner.ts): loadResumeSnapshot — from the run's resume point when one fits
   * (disk/resumePoint.ts: the point and the commits after it; not the messages a condense summarised,
   * nor the older records and calls), else the whole log (every frame's checksum verified, the
   * snapshot's state part and the segment's commits decoded and applied). `whole`: loadSnapshot, the
   * run's whole history (what a view of all of it reads).
   */
  private async resumeFrom(dir: string, whole = false): Promise<{ messages: number; close(): Promise<void> }> {
    const store = this.open(dir);
    const loaded = whole ? await store.loadSnapshot(this.runId) : await store.loadResumeSnapshot(this.runId);
    return { messages: loaded.snapshot.messages.length, close: () => store.close() };
  }

  notes(): Record<string, string> {
    const c = this.counter;
    return {
      ours: 'openDiskStore through CheckpointStore, with the runner’s durability and barriers (makeDurable); deferMs 60 s',
      ours_files_written: `${c.barriers} durable barriers (fsync/fdatasync): ${JSON.stringify(c.barriersByKind)}; ${c.roomSyncs} fdatasyncs of room written ahead (zeros, off the step's path); ${c.dirFsyncs} folder fsyncs; ${c.filesCreated} files created; ${c.bytes} bytes through the fs layer: ${JSON.stringify(c.bytesByKind)}`,
    };
  }
}

/**
 * The public API as a caller uses it: `openDiskStore(dir)` with its default options, the workload's
 * ops in a plain loop, no wait for the store's background work while the "model" answers (there is
 * no model: the next step follows at once), no GC between steps (its thread skips it: isolated.ts);
 * `flushEachStep`: `flush()` at the end of every step, as a caller that wants each step on disk would.
 */
export class ApiContender extends OursContender {
  override readonly name: 'api' | 'api_flush';

  constructor(
    dir: string,
    run: NewRunInput,
    runStarted: Op,
    private readonly flushEachStep: boolean,
  ) {
    super(dir, (d, layer) => openDiskStore(d, layer ? { fs: layer } : {}), run, runStarted);
    this.name = flushEachStep ? 'api_flush' : 'api';
  }

  override async modelWait(): Promise<void> {
    // A plain loop waits for nothing: a compaction the barrier started runs beside the next calls.
  }

  override async endStep(): Promise<void> {
    if (this.flushEachStep) await this.store!.flush();
  }
}

type Kind = 'segment' | 'snapshot' | 'point' | 'blobs' | 'index' | 'other';

/** What a file of the store is, by its path (runs/<id>/segment-….log, snapshot.json, blobs/…; index.json; the witness file is 'other'). */
export function kindOf(p: string): Kind {
  const base = path.basename(p);
  if (/^segment-\d+\.log$/.test(base)) return 'segment';
  // A compaction's output: the snapshot, and the segment it builds beside the appends (a temp name until its swap).
  if (base.startsWith('.snapshot.json') || base === 'snapshot.json') return 'snapshot';
  if (/^\.segment-\d+\.log\..*\.tmp$/.test(base)) return 'snapshot';
  // A resume point (disk/resumePoint.ts), written whole while the model answers.
  if (base.startsWith('.resume.json') || base === 'resume.json') return 'point';
  if (path.basename(path.dirname(p)) === 'blobs') return 'blobs';
  if (base.startsWith('.index.json') || base === 'index.json') return 'index';
  return 'other';
}

/** An FsLayer over the real one that counts durable barriers (fsync/fdatasync of files), folder fsyncs and bytes, by file kind. */
export class CountingFs {
  /** fsync or fdatasync of a file: a durable barrier. */
  barriers = 0;
  /**
   * fdatasyncs of a segment after nothing but zeros was written to it: room written ahead of the
   * appends (runLog.ts, reserve), off the step's path — counted apart, not as barriers.
   */
  roomSyncs = 0;
  /** Bytes of those zeros (a write of nothing but zeros to a segment). */
  roomBytes = 0;
  /** Segments (by descriptor) written since their last sync: 'data' once a frame was, 'room' while only zeros were. */
  private readonly since = new Map<number, 'room' | 'data'>();
  dirFsyncs = 0;
  bytes = 0;
  /** Files created (temp files of durable whole-file writes included). */
  filesCreated = 0;
  readonly barriersByKind: Record<Kind, number> = { segment: 0, snapshot: 0, point: 0, blobs: 0, index: 0, other: 0 };
  readonly bytesByKind: Record<Kind, number> = { segment: 0, snapshot: 0, point: 0, blobs: 0, index: 0, other: 0 };
  private readonly fdKind = new Map<number, Kind | 'dir'>();
  /** The path each open file was opened at: a rename moves its kind (a compaction's segment becomes the log's). */
  private readonly fdPath = new Map<number, string>();

  private opened(fd: number, p: string): void {
    this.fdKind.set(fd, kindOf(p));
    this.fdPath.set(fd, p);
  }

  private wrote(fd: number, data: Buffer): void {
    const n = data.length;
    this.bytes += n;
    const kind = this.fdKind.get(fd) ?? 'other';
    if (kind === 'segment' && zerosFrom(data, 0)) this.roomBytes += n;
    if (kind === 'segment' && this.since.get(fd) !== 'data') {
      if (/^\d{1,12}\t[0-9a-f]{8}\t/.test(data.toString('latin1', 0, 23))) this.since.set(fd, 'data');
      else if (zerosFrom(data, 0)) this.since.set(fd, 'room');
    }
    this.bytesByKind[kind === 'dir' ? 'other' : kind] += n;
  }

  private synced(fd: number): void {
    const kind = this.fdKind.get(fd) ?? 'other';
    const room = this.since.get(fd) === 'room';
    this.since.delete(fd);
    if (kind === 'dir') this.dirFsyncs += 1;
    else if (room) this.roomSyncs += 1;
    else {
      this.barriers += 1;
      this.barriersByKind[kind] += 1;
    }
  }

  readonly layer: FsLayer = {
    ...nodeFs,
    createExclusive: async (p) => {
      const fd = await nodeFs.createExclusive(p);
      this.filesCreated += 1;
      this.opened(fd, p);
      return fd;
    },
    openDir: async (p) => {
      const fd = await nodeFs.openDir(p);
      this.fdKind.set(fd, 'dir');
      return fd;
    },
    openForUpdate: async (p) => {
      const fd = await nodeFs.openForUpdate(p);
      this.opened(fd, p);
      return fd;
    },
    write: async (fd, data) => {
      this.wrote(fd, data);
      await nodeFs.write(fd, data);
    },
    pwrite: async (fd, data, position) => {
      this.wrote(fd, data);
      await nodeFs.pwrite(fd, data, position);
    },
    fsync: async (fd) => {
      await nodeFs.fsync(fd);
      this.synced(fd);
    },
    fdatasync: async (fd) => {
      await nodeFs.fdatasync(fd);
      this.synced(fd);
    },
    rename: async (from, to) => {
      await nodeFs.rename(from, to);
      for (const [fd, p] of this.fdPath) if (p === from) this.opened(fd, to);
    },
    close: async (fd) => {
      this.fdKind.delete(fd);
      this.fdPath.delete(fd);
      this.since.delete(fd);
      await nodeFs.close(fd);
    },
  };
}
