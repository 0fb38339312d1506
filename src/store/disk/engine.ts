// The engine of the disk backend (layout in README.md). Every file goes through the
// injectable fs layer; every JSON file through the durable adapter; the index through lowdb.
import crypto from 'node:crypto';
import path from 'node:path';
import { Low } from 'lowdb';
import { DurableJsonFile, UnsyncedPublishError, fsyncDir } from './durableFile';
import type { Engine, EngineLock, IndexState, LoadResult, LoadSink } from '../core/engine';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError, RunNotOwnedError, SchemaVersionError, StoreWriteError } from '../api/errors';
import { RawCommit, decodeCommit, loadRunFiles, readCommit, type LoadCtx } from './load';
import { FileLock, lockHolder, type LockOptions } from './lock';
import { advance, commitName, encodeOps, newCodec, parseLogNames, type Codec } from './log';
import { errCode, isMissing, treeUsage, type FsLayer } from './fsLayer';
import { quarantine } from './quarantine';
import { getBlob, putBlob, type BlobCtx } from './blobs';
import { RunId, RunMeta } from '../api/schema';
import { IndexBody, type CommitOp, type IndexEntry, type TailWitness } from '../core/storedSchema';
import { WitnessWriter } from './witness';
import { corruptionReport, type CorruptionReport, type OwnerInfo } from '../api/types';

interface RunFiles {
  next: number;
  /** Encoding state after the last commit (fileLog.encodeOps); null until the run's meta is known. */
  codec: Codec;
  meta: RunMeta;
  /** Commits the last compacted file covers (0: none). */
  covered: number;
  /** A commit published whose directory fsync failed and could not be rolled back: may be replaced. */
  uncertain: number | null;
  lock?: FileLock;
  /** The tail witness, opened on first write while the run is held (witness.ts). */
  witness?: Promise<WitnessWriter>;
}

const PLACEHOLDER_META: RunMeta = { run_id: '-', thread_id: '-', title: '', task: '', agent_name: '', model: '', created_ms: 0, forked_from: null, parent_run_id: null };

export interface DiskEngineOptions {
  fs: FsLayer;
  lock: LockOptions;
  retryDelaysMs?: readonly number[];
  now: () => number;
}

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
    this.ctx = { fsl: o.fs, root, retryDelaysMs: o.retryDelaysMs, quarantine: (rel, reason, runId) => quarantine(this.fsl, root, rel, reason, runId, o.now()) };
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
    for (const n of names) if (n.startsWith('.trash-')) await this.fsl.rmrf(path.join(this.root, 'runs', n)).catch(() => undefined); // an interrupted delete
    const present = names.filter((n) => RunId.safeParse(n).success);
    const reports: CorruptionReport[] = [];
    const adapter = new DurableJsonFile(this.fsl, path.join(this.root, 'index.json'), 'index', IndexBody, null, this.o.retryDelaysMs);
    const empty: IndexBody = { runs: [] };
    this.index = new Low<IndexBody>(adapter, empty);
    let writable = true;
    let existed = true;
    try {
      await this.index.read();
      existed = this.index.data !== empty; // lowdb keeps the default object when the file is absent
    } catch (err) {
      if (err instanceof SchemaVersionError) writable = false;
      else if (err instanceof AgentCheckpointCorruptionError) {
        const q = await quarantine(this.fsl, this.root, 'index.json', err.message, null, this.o.now());
        reports.push(indexReport(err.message, q ? [q] : []));
      } else throw err;
      this.index.data = { runs: [] };
    }
    // A missing index is a crash before its first write (or a deleted cache): rebuilt, not an alarm.
    const notices = !existed && present.length > 0 ? [{ file: 'index.json', message: `index.json is missing: rebuilt from runs/ (${present.length} run${present.length > 1 ? 's' : ''})` }] : [];
    return { entries: this.index.data.runs, present, reports, notices, writable };
  }

  async listRunIds(): Promise<string[]> {
    return (await this.fsl.readdir(path.join(this.root, 'runs'))).filter((n) => RunId.safeParse(n).success);
  }

  async lastCommit(runId: string): Promise<number | undefined> {
    try {
      return parseLogNames(await this.fsl.readdir(this.runDir(runId, 'log'))).reduce((m, f) => Math.max(m, f.last), 0);
    } catch (err) {
      if (errCode(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  async saveIndex(entries: IndexEntry[]): Promise<void> {
    if (!this.index) return;
    this.index.data = { runs: entries };
    await this.index.write();
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
      await this.fsl.mkdir(path.join(dir, 'log'), { recursive: false });
      await this.fsl.mkdir(path.join(dir, 'blobs'), { recursive: false });
      lock = await this.lockFile(meta.run_id, owner);
      await new DurableJsonFile(this.fsl, path.join(dir, 'run.json'), 'run', RunMeta, meta.run_id, this.o.retryDelaysMs).create(meta);
      await fsyncDir(this.fsl, path.join(this.root, 'runs'));
    } catch (err) {
      // createRun never resolved: the half-made folder holds nothing anyone was told about
      await lock?.release().catch(() => undefined);
      this.runs.delete(meta.run_id);
      await this.fsl.rmrf(dir).catch(() => undefined);
      throw err;
    }
    this.runs.set(meta.run_id, { next: 1, covered: 0, codec: newCodec(), meta, uncertain: null, lock });
    return this.engineLock(meta.run_id, lock);
  }

  async loadRun(runId: string, sink: LoadSink, opts: { repair: boolean; expectCommits: number }): Promise<LoadResult | undefined> {
    const loaded = await loadRunFiles(this.ctx, runId, sink, opts);
    if (!loaded) return undefined;
    if (opts.repair) await this.sweepTemps(runId);
    const prev = this.runs.get(runId);
    const held = prev?.lock && !prev.lock.lost;
    this.runs.set(runId, { next: loaded.next, covered: loaded.covered, codec: loaded.codec, meta: loaded.meta, uncertain: null, lock: held ? prev.lock : undefined, witness: held ? prev.witness : undefined });
    return loaded.result;
  }

  async loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'> {
    const f = this.runs.get(runId);
    if (!f) return 'reload';
    let names: string[];
    try {
      names = await this.fsl.readdir(this.runDir(runId, 'log'));
    } catch {
      return 'reload';
    }
    const files = parseLogNames(names);
    const cursor = f.next - 1;
    if (files.some((x) => x.first <= cursor && x.last > cursor) || (cursor > 0 && !files.some((x) => x.last === cursor))) return 'reload';
    let n = 0;
    for (const x of files.filter((x) => x.first > cursor && x.first === x.last)) {
      if (x.first !== f.next) break;
      try {
        const file = path.posix.join('runs', runId, 'log', x.name);
        const d = decodeCommit(await readCommit(this.ctx, runId, x), f.codec, f.meta, file, runId);
        sink.commit(d.body, file);
        advance(f.codec, d.delta);
      } catch {
        return 'reload'; // a full load reports (and, if allowed, repairs) what is wrong
      }
      f.next++;
      n++;
    }
    return n;
  }

  async writeCommit(runId: string, ops: readonly CommitOp[], meta: RunMeta | undefined): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    await f.lock.verify(runId);
    const n = f.next;
    const enc = encodeOps(ops, f.codec, f.meta);
    const body: RawCommit = { run_id: runId, first: n, last: n, ...(meta ? { meta } : {}), witnessed: true, ops: enc.ops };
    const file = new DurableJsonFile(this.fsl, this.runDir(runId, 'log', commitName(n, n)), 'commit', RawCommit, runId, this.o.retryDelaysMs);
    try {
      await file.create(body);
    } catch (err) {
      if (errCode(err) === 'EEXIST' && f.uncertain === n) await file.write(body); // our own unacknowledged attempt
      else if (errCode(err) === 'EEXIST') throw new StoreWriteError(`Commit ${n} of run ${runId} already exists: another window wrote to this run.`, runId, 'EEXIST');
      else {
        if (err instanceof UnsyncedPublishError) await this.fsl.unlink(file.file).catch(() => (f.uncertain = n)); // not acknowledged: roll back
        throw err;
      }
    }
    f.uncertain = null;
    f.next = n + 1;
    advance(f.codec, enc.next);
  }

  async writeWitness(runId: string, w: TailWitness, opts: { reset: boolean } = { reset: false }): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock || f.lock.lost) return;
    try {
      f.witness ??= WitnessWriter.open(this.fsl, this.runDir(runId));
      const writer = await f.witness;
      await (opts.reset ? writer.reset(w) : writer.write(w));
    } catch {
      f.witness = undefined; // a witness that cannot be written only weakens detection; the next commit tries again
    }
  }

  private async closeWitness(f: RunFiles | undefined): Promise<void> {
    const w = f?.witness;
    if (!f || !w) return;
    f.witness = undefined;
    await (await w.catch(() => undefined))?.close();
  }

  logShape(runId: string): { singles: number; covered: number } {
    const f = this.runs.get(runId);
    return f ? { singles: f.next - 1 - f.covered, covered: f.covered } : { singles: 0, covered: 0 };
  }

  /**
   * Crash-safe at every point: the new file (covering 1..N) is written, fsync'd and read back
   * before any old file goes; a loader prefers the longest readable range at each position and
   * falls back to the single commits while they exist, so a crash mid-way leaves a readable run.
   */
  async compact(runId: string, ops: readonly CommitOp[], meta: RunMeta): Promise<void> {
    const f = this.runs.get(runId);
    if (!f?.lock) throw new RunNotOwnedError(runId);
    await f.lock.verify(runId);
    const last = f.next - 1;
    if (last < 1) return;
    const name = commitName(1, last);
    const body: RawCommit = { run_id: runId, first: 1, last, meta, witnessed: true, ops: encodeOps(ops, newCodec(), meta).ops };
    const file = new DurableJsonFile(this.fsl, this.runDir(runId, 'log', name), 'commit', RawCommit, runId, this.o.retryDelaysMs);
    await file.create(body).catch((err: unknown) => {
      if (errCode(err) !== 'EEXIST') throw err; // EEXIST: compacted already at this length
    });
    const check = await readCommit(this.ctx, runId, { name, first: 1, last }); // verify what landed before removing anything
    decodeCommit(check, newCodec(), meta, name, runId);
    f.covered = last;
    const old = parseLogNames(await this.fsl.readdir(this.runDir(runId, 'log'))).filter((x) => x.name !== name && x.last <= last);
    for (const x of old) await this.fsl.unlink(this.runDir(runId, 'log', x.name)).catch(() => undefined);
    await fsyncDir(this.fsl, this.runDir(runId, 'log'));
  }

  async deleteRun(runId: string): Promise<void> {
    const trash = path.join(this.root, 'runs', `.trash-${runId}-${crypto.randomBytes(4).toString('hex')}`);
    await this.closeWitness(this.runs.get(runId));
    await this.fsl.rename(this.runDir(runId), trash); // atomic: the run is gone at once
    this.runs.get(runId)?.lock?.release().catch(() => undefined);
    this.runs.delete(runId);
    await this.fsl.rmrf(trash);
  }

  async storageBytes(runId: string): Promise<number> {
    return (await treeUsage(this.fsl, this.runDir(runId))).size;
  }

  // ── blobs (blobs.ts) ──────────────────────────────────────────────────────────────────
  async putBlob(runId: string, hash: string, content: string): Promise<void> {
    if (!this.runs.get(runId)?.lock) throw new RunNotOwnedError(runId);
    await putBlob(this.blobCtx(), runId, hash, content);
  }

  getBlob(runId: string, hash: string, repair: boolean): Promise<string> {
    return getBlob(this.blobCtx(), runId, hash, repair);
  }

  private blobCtx(): BlobCtx {
    return { fsl: this.fsl, root: this.root, now: this.o.now, retryDelaysMs: this.o.retryDelaysMs, report: (r) => this.onReport(r) };
  }

  // ── locks ─────────────────────────────────────────────────────────────────────────────────
  async lock(runId: string, owner: OwnerInfo): Promise<EngineLock> {
    return this.engineLock(runId, await this.lockFile(runId, owner));
  }

  /** What the core holds: releasing it closes the run's witness (synced) before the lock goes. */
  private engineLock(runId: string, lock: FileLock): EngineLock {
    return {
      get lost() {
        return lock.lost;
      },
      release: async () => {
        const f = this.runs.get(runId);
        if (f?.lock === lock) await this.closeWitness(f);
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
        this.onReport(corruptionReport({ run_id: runId, file: relFile, reason, quarantined: q ? [q] : [], lost: 'nothing: the lock is re-created (it holds no run data)' }));
      },
    });
    const f = this.runs.get(runId);
    if (f) f.lock = lock;
    else this.runs.set(runId, { next: 1, covered: 0, codec: newCodec(), meta: PLACEHOLDER_META, uncertain: null, lock }); // filled by the load that follows
    return lock;
  }

  async holder(runId: string): Promise<OwnerInfo | undefined> {
    return lockHolder(this.fsl, this.runDir(runId, 'owner.lock'), this.o.lock);
  }

  async close(): Promise<void> {
    for (const f of this.runs.values()) {
      await this.closeWitness(f);
      await f.lock?.release().catch(() => undefined);
    }
  }

  /** Temp files of writes that never finished (a crash): never acknowledged, so not data. */
  private async sweepTemps(runId: string): Promise<void> {
    const cutoff = this.o.now() - 60_000; // younger ones may belong to a write in flight elsewhere
    for (const sub of ['', 'log', 'blobs']) {
      const dir = this.runDir(runId, sub);
      const names = await this.fsl.readdir(dir).catch(() => [] as string[]);
      for (const n of names.filter((x) => x.startsWith('.') && x.endsWith('.tmp'))) {
        const st = await this.fsl.stat(path.join(dir, n)).catch(() => undefined);
        if (st && st.mtimeMs < cutoff) await this.fsl.unlink(path.join(dir, n)).catch(() => undefined);
      }
    }
  }
}

function indexReport(reason: string, quarantined: CorruptionReport['quarantined']): CorruptionReport {
  return corruptionReport({ run_id: null, file: 'index.json', reason, quarantined, lost: 'nothing: the index is a cache, rebuilt from runs/' });
}
