// The memory backend: the same store core as the disk backend over an in-memory "disk". Several
// store instances can share one MemoryDisk (like two windows over one folder): each sees only what
// the others committed, and leases exclude each other in-process. Everything crossing the disk
// boundary is structuredClone'd, so no instance can alias another's objects.
import { Store, type CoreOptions } from '../core/store';
import type { Engine, EngineLock, IndexState, LoadResult, LoadSink } from '../core/engine';
import { CheckpointNotFoundError, RunLockedError, RunNotOwnedError } from '../api/errors';
import type { RunMeta } from '../api/schema';
import type { CommitBody, CommitOp, IndexEntry, TailWitness } from '../core/storedSchema';
import type { OwnerInfo, RunEnd } from '../api/types';

interface MemRun {
  meta: RunMeta;
  commits: CommitBody[];
  blobs: Map<string, string>;
  lock: { owner: OwnerInfo; token: symbol } | null;
  witness: TailWitness | null;
  /** What the last compaction kept of the run's end, as of which commit. */
  end?: { last: number; value: RunEnd };
}

/** What a memory store persists; share it between instances to model two windows. */
export class MemoryDisk {
  readonly runs = new Map<string, MemRun>();
  index: IndexEntry[] | null = null;

  /** Test hook: another owner takes the run over (the current lease becomes lost). */
  stealLock(runId: string, owner: OwnerInfo): void {
    const r = this.runs.get(runId);
    if (r) r.lock = { owner: { ...owner }, token: Symbol('stolen') };
  }
}

const lastCommit = (r: MemRun): number => r.commits[r.commits.length - 1]?.last ?? 0;

class MemoryEngine implements Engine {
  private readonly cursors = new Map<string, number>();
  private readonly held = new Map<string, symbol>();

  constructor(private readonly disk: MemoryDisk) {}

  setReporter(): void {} // nothing in memory can rot

  async openIndex(): Promise<IndexState> {
    return {
      entries: structuredClone(this.disk.index ?? []),
      present: [...this.disk.runs.keys()],
      reports: [],
      notices: [],
      writable: true,
    };
  }

  async listRunIds(): Promise<string[]> {
    return [...this.disk.runs.keys()];
  }

  async lastCommit(runId: string): Promise<number | undefined> {
    const r = this.disk.runs.get(runId);
    return r ? lastCommit(r) : undefined;
  }

  async saveIndex(entries: IndexEntry[]): Promise<void> {
    this.disk.index = structuredClone(entries);
  }

  async createRun(meta: RunMeta, owner: OwnerInfo): Promise<EngineLock | 'exists'> {
    if (this.disk.runs.has(meta.run_id)) return 'exists';
    this.disk.runs.set(meta.run_id, {
      meta: structuredClone(meta),
      commits: [],
      blobs: new Map(),
      lock: null,
      witness: null,
    });
    this.cursors.set(meta.run_id, 0);
    return this.lock(meta.run_id, owner);
  }

  async loadRun(runId: string, sink: LoadSink): Promise<LoadResult | undefined> {
    const r = this.disk.runs.get(runId);
    if (!r) return undefined;
    sink.meta(structuredClone(r.meta));
    for (const body of r.commits) sink.commit(structuredClone(body));
    this.cursors.set(runId, lastCommit(r));
    return { report: null, commits: lastCommit(r), witness: structuredClone(r.witness), notices: [] };
  }

  async loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'> {
    const r = this.disk.runs.get(runId);
    const cursor = this.cursors.get(runId) ?? 0;
    if (!r || lastCommit(r) < cursor || r.commits.some((c) => c.first <= cursor && c.last > cursor)) return 'reload';
    const fresh = r.commits.filter((c) => c.first > cursor);
    for (const body of fresh) sink.commit(structuredClone(body));
    this.cursors.set(runId, lastCommit(r));
    return fresh.length;
  }

  async writeCommit(runId: string, ops: readonly CommitOp[], meta: RunMeta | undefined): Promise<void> {
    const r = this.owned(runId);
    const n = lastCommit(r) + 1;
    r.commits.push(structuredClone({ run_id: runId, first: n, last: n, ...(meta ? { meta } : {}), ops: [...ops] }));
    this.cursors.set(runId, n);
  }

  async syncCommits(): Promise<void> {
    // In memory: a commit is as durable as it gets once written.
  }

  async writeWitness(runId: string, w: TailWitness): Promise<void> {
    const r = this.disk.runs.get(runId);
    if (r) r.witness = structuredClone(w);
  }

  needsRewrite(): boolean {
    return false; // one format in memory
  }

  logShape(runId: string): { singles: number; covered: number } {
    const commits = this.disk.runs.get(runId)?.commits ?? [];
    const range = commits.find((c) => c.first !== c.last);
    return { singles: commits.filter((c) => c.first === c.last).length, covered: range ? range.last : 0 };
  }

  async compact(runId: string, ops: readonly CommitOp[], meta: RunMeta, end?: RunEnd): Promise<void> {
    const r = this.owned(runId);
    const n = lastCommit(r);
    if (n === 0) return;
    r.commits = [structuredClone({ run_id: runId, first: 1, last: n, meta, ops: [...ops] })];
    r.end = end && structuredClone({ last: n, value: end });
  }

  async readEnd(runId: string): Promise<unknown> {
    const r = this.disk.runs.get(runId);
    return r?.end && r.end.last === lastCommit(r) ? structuredClone(r.end.value) : undefined;
  }

  async deleteRun(runId: string): Promise<void> {
    this.disk.runs.delete(runId);
    this.cursors.delete(runId);
    this.held.delete(runId);
  }

  async storageBytes(runId: string): Promise<number> {
    const r = this.disk.runs.get(runId);
    if (!r) return 0;
    let bytes = Buffer.byteLength(JSON.stringify(r.meta));
    for (const c of r.commits) bytes += Buffer.byteLength(JSON.stringify(c));
    for (const b of r.blobs.values()) bytes += Buffer.byteLength(b);
    return bytes;
  }

  async putBlob(runId: string, hash: string, content: string | Uint8Array): Promise<void> {
    this.owned(runId).blobs.set(hash, typeof content === 'string' ? content : Buffer.from(content).toString('utf8'));
  }

  async getBlob(runId: string, hash: string): Promise<string> {
    const b = this.disk.runs.get(runId)?.blobs.get(hash);
    if (b === undefined)
      throw new CheckpointNotFoundError(
        `runs/${runId}/blobs/${hash} is missing (run ${runId}).`,
        runId,
        `runs/${runId}/blobs/${hash}`,
      );
    return b;
  }

  async lock(runId: string, owner: OwnerInfo): Promise<EngineLock> {
    const r = this.disk.runs.get(runId);
    if (!r) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    if (r.lock) throw new RunLockedError(runId, r.lock.owner);
    const token = Symbol(owner.owner_id);
    r.lock = { owner: { ...owner }, token };
    this.held.set(runId, token);
    const disk = this.disk;
    return {
      get lost() {
        return disk.runs.get(runId)?.lock?.token !== token;
      },
      release: async () => {
        const cur = disk.runs.get(runId);
        if (cur?.lock?.token === token) cur.lock = null;
        if (this.held.get(runId) === token) this.held.delete(runId);
      },
    };
  }

  async assertOwner(runId: string): Promise<void> {
    this.owned(runId);
  }

  async holder(runId: string): Promise<OwnerInfo | undefined> {
    const owner = this.disk.runs.get(runId)?.lock?.owner;
    return owner ? { ...owner } : undefined;
  }

  async close(): Promise<void> {}

  private owned(runId: string): MemRun {
    const r = this.disk.runs.get(runId);
    const token = this.held.get(runId);
    if (!r || !token || r.lock?.token !== token) throw new RunNotOwnedError(runId);
    return r;
  }
}

export type MemoryStoreOptions = CoreOptions & { disk?: MemoryDisk };

/** A memory-backed CheckpointStore (tests; the contract suite's reference). Usable at once. */
export function createMemoryStore(opts: MemoryStoreOptions = {}): Store {
  return new Store(new MemoryEngine(opts.disk ?? new MemoryDisk()), opts).start();
}

/** The same, resolved once opened. */
export async function openMemoryStore(opts: MemoryStoreOptions = {}): Promise<Store> {
  const store = createMemoryStore(opts);
  await store.whenOpen();
  return store;
}
