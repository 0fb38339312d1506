// The engine of the disk backend (format: docs/format.md). Every file goes through the injectable fs
// layer; a run's log is one append-only segment (runLog.ts) and a compacted snapshot, the tail witness
// (witness.ts) a small file beside them; the index goes through the durable lowdb adapter.
import crypto from 'node:crypto';
import path from 'node:path';
import { Low } from 'lowdb';
import { DurableJsonFile, fsyncDir } from './durableFile';
import type { Engine, EngineLock, IndexHead, IndexState, LoadOptions, LoadResult, LoadSink } from '../core/engine';
import { coveredRunsMtime, readIndexHead, writeIndexHead } from './indexHead';
import {
  AgentCheckpointCorruptionError,
  CheckpointNotFoundError,
  RunNotOwnedError,
  SchemaVersionError,
} from '../api/errors';
import type { LoadCtx } from './commit';
import { loadRunFiles, SNAPSHOT_FILE } from './load';
import { FileLock, lockHolder, type LockOptions } from './lock';
import { newCodec } from './codec';
import { errCode, isMissing, treeUsage, type FsLayer } from './fsLayer';
import { quarantine, quarantineCopy } from './quarantine';
import { getBlob, putBlob, type BlobCtx } from './blobs';
import type { RunMeta } from '../api/schema';
import { isRunId } from '../core/validate';
import { IndexBody, type CommitOp, type IndexEntry, type TailWitness } from '../core/storedSchema';
import { RunLog } from './runLog';
import { encodePoint, loadFromPoint, RESUME_FILE, writePoint, type PointPosition, type PointSink } from './resumePoint';
import type { PointParts } from '../core/runModel';
import { parseSegment, parseSegmentNames } from './segment';
import { endFrameBytes, readEndFrame } from './snapshotFile';
import { readRunWitness } from './load';
import { corruptionReport, type CorruptionReport, type OwnerInfo } from '../api/types';

/**
 * What is read first of a snapshot for its end frame (most fit; a longer one is read to its length),
 * and the most a segment holding no commit can be.
 */
const END_HEAD_BYTES = 64 * 1024;

interface RunFiles {
  log: RunLog;
  lock?: FileLock;
}

const PLACEHOLDER_META: RunMeta = {
  run_id: '-',
  thread_id: '-',
  title: '',
  task: '',
  agent_name: '',
  model: '',
  created_ms: 0,
  forked_from: null,
  parent_run_id: null,
};

export interface DiskEngineOptions {
  fs: FsLayer;
  lock: LockOptions;
  retryDelaysMs?: readonly number[];
  now: () => number;
  /** Newest runs the index's head holds (CoreOptions.headRuns). */
  headRuns?: number;
  /** DiskStoreOptions.compactOffThreadFrom. */
  compactOffThreadFrom?: number;
  /** DiskStoreOptions.resumePoints. */
  resumePoints?: { from: number; every: number };
}

/** A run's log gets resume points from this size on, one each time it grows this much (or by as much as the last point). */
export const RESUME_POINTS = { from: 8 * 1024 * 1024, every: 4 * 1024 * 1024 };

export class DiskEngine implements Engine {
  private readonly runs = new Map<string, RunFiles>();
  private index: Low<IndexBody> | undefined;
  private readonly fsl: FsLayer;
  private readonly ctx: LoadCtx;
  private onReport: (r: CorruptionReport) => void = () => undefined;

  constructor(
    readonly root: string,
    private readonly o: DiskEngineOptions,
  ) {
    this.fsl = o.fs;
    this.ctx = {
      fsl: o.fs,
      root,
      retryDelaysMs: o.retryDelaysMs,
      quarantine: (rel, reason, runId) => quarantine(this.fsl, root, rel, reason, runId, o.now()),
      quarantineCopy: (rel, reason, runId) => quarantineCopy(this.fsl, root, rel, reason, runId, o.now()),
    };
  }

  setReporter(fn: (r: CorruptionReport) => void): void {
    this.onReport = fn;
  }

  private runDir(runId: string, ...parts: string[]): string {
    return path.join(this.root, 'runs', runId, ...parts);
  }

  // ── index ─────────────────────────────────────────────────────────────────────────────────
  async openIndex(): Promise<IndexState> {
    for (const d of ['runs', 'quarantine']) await this.fsl.mkdir(path.join(this.root, d), { recursive: true });
    const names = await this.fsl.readdir(path.join(this.root, 'runs'));
    for (const n of names)
      if (n.startsWith('.trash-')) await this.fsl.rmrf(path.join(this.root, 'runs', n)).catch(() => undefined); // an interrupted delete
    const present = names.filter(isRunId);
    const reports: CorruptionReport[] = [];
    const empty: IndexBody = { runs: [] };
    this.index = this.indexFile(empty);
    let writable = true;
    /** Why the index is rebuilt without an alarm (null: it was read, or it is reported as corrupt). */
    let rebuilt: string | null = null;
    try {
      await this.index.read();
      // (lowdb keeps the default object when the file is absent)
      if (this.index.data === empty) rebuilt = 'is missing'; // a crash before its first write, or a deleted cache
    } catch (err) {
      // A newer version's index is left alone (the index lives in memory); an older one is a cache: rebuilt.
      if (err instanceof SchemaVersionError && err.found > err.supported) writable = false;
      else if (err instanceof SchemaVersionError) rebuilt = `is of schema_version ${err.found}`;
      else if (err instanceof AgentCheckpointCorruptionError) {
        const q = await quarantine(this.fsl, this.root, 'index.json', err.message, null, this.o.now());
        reports.push(indexReport(err.message, q ? [q] : []));
      } else throw err;
      this.index.data = { runs: [] };
    }
    const runs = `${present.length} run${present.length > 1 ? 's' : ''}`;
    const notices =
      rebuilt && present.length > 0
        ? [{ file: 'index.json', message: `index.json ${rebuilt}: rebuilt from runs/ (${runs})` }]
        : [];
    return { entries: this.index.data.runs, present, reports, notices, writable };
  }

  async openIndexHead(): Promise<IndexHead | undefined> {
    const head = await readIndexHead(this.fsl, this.root);
    if (head) this.index = this.indexFile({ runs: [] }); // written whole at the next save, as after openIndex
    return head;
  }

  private indexFile(empty: IndexBody): Low<IndexBody> {
    const file = path.join(this.root, 'index.json');
    return new Low<IndexBody>(
      new DurableJsonFile(this.fsl, file, 'index', IndexBody, null, this.o.retryDelaysMs),
      empty,
    );
  }

  async listRunIds(): Promise<string[]> {
    return (await this.fsl.readdir(path.join(this.root, 'runs'))).filter(isRunId);
  }

  /**
   * The run's durable commit count as its witness says (one small read); no readable witness: Infinity
   * (the run is read to know), or undefined when the run is gone.
   */
  async lastCommit(runId: string): Promise<number | undefined> {
    const w = await readRunWitness(this.fsl, this.runDir(runId), runId);
    if (w?.kind === 'ok') return w.witness.commits;
    return this.fsl.stat(this.runDir(runId)).then(
      () => Infinity,
      () => undefined,
    );
  }

  async saveIndex(entries: IndexEntry[]): Promise<void> {
    if (!this.index) return;
    const covered = await coveredRunsMtime(this.fsl, this.root, entries, isRunId);
    this.index.data = { runs: entries };
    await this.index.write();
    // Only a speed-up of the next opening: one not written leaves the old head, which no longer matches.
    await writeIndexHead(this.fsl, this.root, entries, covered, this.o.headRuns).catch(() => undefined);
  }

  // ── runs ──────────────────────────────────────────────────────────────────────────────────
  async createRun(meta: RunMeta, owner: OwnerInfo): Promise<EngineLock | 'exists'> {
    const dir = this.runDir(meta.run_id);
    await this.fsl.mkdir(path.join(this.root, 'runs'), { recursive: true });
    try {
      await this.fsl.mkdir(dir, { recursive: false });
    } catch (err) {
      if (errCode(err) === 'EEXIST') return 'exists';
      throw err;
    }
    let lock: FileLock | undefined;
    try {
      lock = await this.lockFile(meta.run_id, owner);
      const log = new RunLog(
        this.fsl,
        this.root,
        meta.run_id,
        emptyLog(meta),
        this.o.retryDelaysMs,
        this.o.compactOffThreadFrom,
      );
      await log.create(); // the meta lives in the segment's header (and the witness file's)
      await fsyncDir(this.fsl, path.join(this.root, 'runs'));
      this.runs.set(meta.run_id, { log, lock });
    } catch (err) {
      // createRun never resolved: the half-made folder holds nothing anyone was told about
      await lock?.release().catch(() => undefined);
      this.runs.delete(meta.run_id);
      await this.fsl.rmrf(dir).catch(() => undefined);
      throw err;
    }
    return this.engineLock(meta.run_id, lock);
  }

  async loadRun(runId: string, sink: LoadSink, opts: LoadOptions): Promise<LoadResult | undefined> {
    const loaded = await loadRunFiles(this.ctx, runId, sink, opts);
    if (!loaded) return undefined;
    if (opts.repair) await this.sweepTemps(runId);
    const prev = this.runs.get(runId);
    await prev?.log.closeFd();
    const held = prev?.lock && !prev.lock.lost;
    const log = new RunLog(
      this.fsl,
      this.root,
      runId,
      {
        next: loaded.next,
        codec: loaded.codec,
        meta: loaded.meta,
        covered: loaded.covered,
        tail: loaded.tail,
        compactFirst: loaded.compactFirst,
        witness: loaded.result.witness,
        witnessAt: loaded.witnessAt,
      },
      this.o.retryDelaysMs,
      this.o.compactOffThreadFrom,
    );
    this.runs.set(runId, { log, lock: held ? prev.lock : undefined });
    void log.measureSnapshot();
    return loaded.result;
  }

  async loadFromPoint(runId: string, sink: LoadSink, opts: LoadOptions): Promise<LoadResult | undefined> {
    if (!sink.point) return undefined;
    const loaded = await loadFromPoint(this.ctx, runId, sink as PointSink, opts.expectCommits);
    if (!loaded) return undefined;
    if (opts.repair) await this.sweepTemps(runId);
    const prev = this.runs.get(runId);
    await prev?.log.closeFd();
    const held = prev?.lock && !prev.lock.lost;
    const log = new RunLog(this.fsl, this.root, runId, loaded.state, this.o.retryDelaysMs, this.o.compactOffThreadFrom);
    log.notePoint(loaded.point);
    this.runs.set(runId, { log, lock: held ? prev.lock : undefined });
    void log.measureSnapshot();
    return loaded.result;
  }

  async readWhole(runId: string, sink: LoadSink): Promise<LoadResult | undefined> {
    return (await loadRunFiles(this.ctx, runId, sink, { repair: false, expectCommits: 0 }))?.result;
  }

  async dropResumePoint(runId: string): Promise<void> {
    await this.fsl.unlink(this.runDir(runId, RESUME_FILE)).catch(() => undefined);
  }

  resumePointDue(runId: string): boolean {
    const f = this.runs.get(runId);
    return !!f?.lock && !f.lock.lost && f.log.pointDue(this.o.resumePoints ?? RESUME_POINTS);
  }

  markResumePoint(runId: string): PointPosition | undefined {
    const f = this.runs.get(runId);
    return f?.lock && !f.lock.lost ? f.log.markPoint() : undefined;
  }

  async writeResumePoint(runId: string, at: unknown, parts: PointParts): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock || f.lock.lost) return;
    const pos = at as PointPosition;
    const bytes = encodePoint(runId, f.log.s.meta, pos, parts);
    await writePoint(this.ctx, runId, bytes);
    f.log.pointWritten(pos, bytes.length);
  }

  async loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'> {
    const f = this.runs.get(runId);
    return f ? f.log.follow(sink) : 'reload';
  }

  needsRewrite(runId: string): boolean {
    return this.runs.get(runId)?.log.s.compactFirst === true;
  }

  // (Not an async function: the caller waits on append's own promise, without a turn of its own.)
  writeCommit(
    runId: string,
    ops: readonly CommitOp[],
    _meta?: RunMeta,
    sync = true,
    meanwhile?: () => void,
  ): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) return Promise.reject(new RunNotOwnedError(runId));
    // The lock is checked before anything is written: nothing is written until it is known to be ours.
    return f.log.append(ops, sync, f.lock.verify(runId), meanwhile);
  }

  async syncCommits(runId: string): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    await f.lock.verify(runId);
    await f.log.sync();
  }

  writeWitness(runId: string, w: TailWitness, opts: { reset: boolean } = { reset: false }): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock || f.lock.lost) return Promise.resolve();
    return f.log.writeWitness(w, opts); // (never rejects: runLog swallows a witness's failure)
  }

  prepareWitness(runId: string, w: TailWitness): void {
    this.runs.get(runId)?.log.prepareWitness(w);
  }

  needsRoom(runId: string): boolean {
    const f = this.runs.get(runId);
    return !!f?.lock && !f.lock.lost && f.log.needsRoom();
  }

  async reserve(runId: string): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    if (!f.log.needsRoom()) return;
    await f.lock.verify(runId); // zeros past the end of a segment another window took over would cut its commits
    await f.log.reserve();
  }

  logShape(runId: string): { singles: number; covered: number } {
    const f = this.runs.get(runId);
    return f ? { singles: f.log.s.next - 1 - f.log.s.covered, covered: f.log.s.covered } : { singles: 0, covered: 0 };
  }

  /** The whole log as one snapshot and a fresh segment (runLog.ts). */
  async compact(runId: string, ops: readonly CommitOp[], _meta: RunMeta, end?: unknown): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    await f.lock.verify(runId);
    await f.log.compact(ops, end);
  }

  /** The same beside the appends (runLog.ts, compactBeside): the length is taken before anything awaits. */
  compactBeside(
    runId: string,
    ops: readonly CommitOp[],
    _meta: RunMeta,
    end: unknown,
    critical: (fn: () => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) return Promise.reject(new RunNotOwnedError(runId));
    const lock = f.lock;
    return f.log.compactBeside(ops, end, critical, () => lock.verify(runId));
  }

  /**
   * The end frame of the run's snapshot.json (its first bytes, nothing else of it read), when it is
   * current: the run's only segment is the one after it and holds no commit. Read in that order, so a
   * commit appended meanwhile makes it stale, never wrongly current. Anything else: undefined.
   */
  async readEnd(runId: string): Promise<unknown> {
    const dir = this.runDir(runId);
    const file = path.join(dir, SNAPSHOT_FILE);
    try {
      let head = await this.fsl.readFrom(file, 0, END_HEAD_BYTES);
      const need = endFrameBytes(head);
      if (need === null) return undefined;
      if (need > head.length)
        head = Buffer.concat([head, await this.fsl.readFrom(file, head.length, need - head.length)]);
      const end = readEndFrame(head, runId);
      if (!end) return undefined;
      const segs = parseSegmentNames(await this.fsl.readdir(dir));
      if (segs.length !== 1 || segs[0]!.first !== end.last + 1) return undefined;
      const seg = await this.fsl.readFrom(path.join(dir, segs[0]!.name), 0, END_HEAD_BYTES);
      if (seg.length >= END_HEAD_BYTES) return undefined;
      const parsed = parseSegment(seg);
      return parsed.stop === null && parsed.corrected.length === 0 && parsed.frames.length === 1
        ? end.value
        : undefined;
    } catch {
      return undefined; // unreadable or gone: the caller reads the run whole, and reports what is wrong
    }
  }

  async deleteRun(runId: string): Promise<void> {
    const trash = path.join(this.root, 'runs', `.trash-${runId}-${crypto.randomBytes(4).toString('hex')}`);
    await this.runs.get(runId)?.log.closeFd();
    await this.fsl.rename(this.runDir(runId), trash); // atomic: the run is gone at once
    this.runs
      .get(runId)
      ?.lock?.release()
      .catch(() => undefined);
    this.runs.delete(runId);
    await this.fsl.rmrf(trash);
  }

  async storageBytes(runId: string): Promise<number> {
    return (await treeUsage(this.fsl, this.runDir(runId))).size;
  }

  // ── blobs (blobs.ts) ──────────────────────────────────────────────────────────────────
  async putBlob(runId: string, hash: string, content: string | Uint8Array): Promise<void> {
    if (!this.runs.get(runId)?.lock) throw new RunNotOwnedError(runId);
    await putBlob(this.blobCtx(), runId, hash, content);
  }

  getBlob(runId: string, hash: string, repair: boolean): Promise<string> {
    return getBlob(this.blobCtx(), runId, hash, repair);
  }

  private blobCtx(): BlobCtx {
    return {
      fsl: this.fsl,
      root: this.root,
      now: this.o.now,
      retryDelaysMs: this.o.retryDelaysMs,
      report: (r) => this.onReport(r),
    };
  }

  // ── locks ─────────────────────────────────────────────────────────────────────────────────
  async lock(runId: string, owner: OwnerInfo): Promise<EngineLock> {
    return this.engineLock(runId, await this.lockFile(runId, owner));
  }

  /** What the core holds: releasing it closes the run's segment (its witness writes done) before the lock goes. */
  private engineLock(runId: string, lock: FileLock): EngineLock {
    return {
      get lost() {
        return lock.lost;
      },
      release: async () => {
        const f = this.runs.get(runId);
        if (f?.lock === lock) await this.letGo(f.log, lock); // its copy and witness writes done first
        await lock.release();
      },
    };
  }

  private async lockFile(runId: string, owner: OwnerInfo): Promise<FileLock> {
    const dir = this.runDir(runId);
    try {
      await this.fsl.stat(dir);
    } catch (err) {
      if (isMissing(err)) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
      throw err;
    }
    const lock = await FileLock.acquire(this.fsl, dir, runId, owner, this.o.lock, {
      corrupt: async (file, reason) => {
        const relFile = path.relative(this.root, file).split(path.sep).join('/');
        const q = await quarantine(this.fsl, this.root, relFile, reason, runId, this.o.now()).catch(() => null);
        this.onReport(
          corruptionReport({
            run_id: runId,
            file: relFile,
            reason,
            quarantined: q ? [q] : [],
            lost: 'nothing: the lock is re-created (it holds no run data)',
          }),
        );
      },
    });
    const f = this.runs.get(runId);
    if (f) f.lock = lock;
    else
      this.runs.set(runId, {
        log: new RunLog(this.fsl, this.root, runId, emptyLog(PLACEHOLDER_META)),
        lock,
      }); // filled by the load that follows
    return lock;
  }

  async assertOwner(runId: string): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    await f.lock.prove(runId);
  }

  async holder(runId: string): Promise<OwnerInfo | undefined> {
    return lockHolder(this.fsl, this.runDir(runId, 'owner.lock'), this.o.lock);
  }

  async close(): Promise<void> {
    for (const f of this.runs.values()) {
      if (f.lock) await this.letGo(f.log, f.lock);
      else await f.log.closeFd();
      await f.lock?.release().catch(() => undefined);
    }
  }

  /**
   * A held run let go: the copy of its newest frames appended (segmentCopy.ts) while the lock is still
   * ours, its witness file made durable, then its files closed. A copy that cannot be written (a full
   * disk) never fails the release: the log is whole without it, and the next release writes it (an
   * append that failed part-way is cut off before the next write, as a failed commit's is).
   */
  private async letGo(log: RunLog, lock: FileLock): Promise<void> {
    if (!lock.lost) {
      await log.writeCopy().catch(() => false);
      await log.trimRoom().catch(() => undefined); // (zeros left behind are still the segment's end)
      await log.syncWitness();
    }
    await log.closeFd();
  }

  /** Temp files of writes that never finished (a crash): never acknowledged, so not data. */
  private async sweepTemps(runId: string): Promise<void> {
    const cutoff = this.o.now() - 60_000; // younger ones may belong to a write in flight elsewhere
    for (const sub of ['', 'blobs']) {
      const dir = this.runDir(runId, sub);
      const names = await this.fsl.readdir(dir).catch(() => [] as string[]);
      for (const n of names.filter((x) => x.startsWith('.') && x.endsWith('.tmp'))) {
        const st = await this.fsl.stat(path.join(dir, n)).catch(() => undefined);
        if (st && st.mtimeMs < cutoff) await this.fsl.unlink(path.join(dir, n)).catch(() => undefined);
      }
    }
  }
}

/** The log of a run with no commit yet. */
const emptyLog = (meta: RunMeta) => ({
  next: 1,
  codec: newCodec(),
  meta,
  covered: 0,
  tail: null,
  compactFirst: false,
  witness: null,
  witnessAt: null,
});

function indexReport(reason: string, quarantined: CorruptionReport['quarantined']): CorruptionReport {
  return corruptionReport({
    run_id: null,
    file: 'index.json',
    reason,
    quarantined,
    lost: 'nothing: the index is a cache, rebuilt from runs/',
  });
}
