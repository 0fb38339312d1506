// The reads of the store: runs (listing, rescan), checkpoints, snapshots, the journal, inbox,
// restores and blobs. Every answer is a fresh copy (copy.ts): callers may mutate what they get.
import { copyJson } from './copy';
import { checkedEnd, computeEnd, END_RECORDS } from './end';
import { CheckpointNotFoundError, InvalidInputError, InvalidKeyError } from '../api/errors';
import {
  isTerminalState,
  type Approval,
  type CheckpointRecord,
  type Effect,
  type InboxMessage,
  type RestoreRecord,
  type RunSummary,
} from '../api/schema';
import type * as T from '../api/types';
import type { RunHandle } from './runHandle';
import type { StoreContext } from './context';
import { checkBlobHash, checkRunId } from './validate';

export class StoreReader {
  constructor(private readonly c: StoreContext) {}

  /** The run, loaded or refreshed (the store open); CheckpointNotFoundError if it does not exist. */
  async run(runId: string): Promise<RunHandle> {
    await this.c.gate.opened();
    return this.c.loader.mustPeek(runId);
  }

  async listRuns(opts: { limit?: number; cursor?: string } = {}): Promise<T.RunPage> {
    await this.c.gate.opened();
    const limit = opts.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new InvalidInputError('limit must be an integer from 1 to 1000');
    const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    const all = [...this.c.index.entries.values()].sort(
      (a, b) => b.updated_ms - a.updated_ms || (a.run_id < b.run_id ? 1 : -1),
    );
    const start = after
      ? all.findIndex((e) => e.updated_ms < after[0] || (e.updated_ms === after[0] && e.run_id < after[1]))
      : 0;
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const runs = page.map(({ durable_commits: _, ...s }) => copyJson(s));
    const last = page[page.length - 1];
    const more = start >= 0 && start + limit < all.length;
    return more && last ? { runs, cursor: encodeCursor(last.updated_ms, last.run_id) } : { runs };
  }

  async rescan(): Promise<boolean> {
    await this.c.gate.opened();
    const { engine, index, loader, events } = this.c;
    let changed = false;
    const present = new Set(await engine.listRunIds());
    for (const id of [...index.entries.keys()]) {
      if (present.has(id) || loader.runs.get(id)?.owned) continue;
      loader.runs.delete(id);
      index.delete(id);
      events.emit({ kind: 'run-deleted', run_id: id });
      changed = true;
    }
    for (const id of present) {
      const known = index.get(id);
      if (loader.runs.get(id)?.owned || (known && isTerminalState(known.state))) continue;
      // A run not in memory is loaded only if its log grew: a focus event must not re-read every paused run.
      if (
        known &&
        !loader.runs.has(id) &&
        ((await engine.lastCommit(id).catch(() => undefined)) ?? Infinity) <= known.durable_commits
      )
        continue;
      const h = await loader.peek(id).catch(() => undefined); // an unreadable run was reported by its load
      if (!h) continue;
      const now = h.model.summary(); // peek has already put it in the index
      if (
        known &&
        now.last_seq === known.last_seq &&
        now.state === known.state &&
        now.pending_approvals === known.pending_approvals
      )
        continue;
      events.emit({ kind: known ? 'run-updated' : 'run-created', run_id: id });
      changed = true;
    }
    return changed;
  }

  /**
   * Reads the new commits of runs another process writes (a worker), told they changed (the shared
   * store's change feed): `run-updated` for each that grew or changed, `run-deleted` for one gone,
   * finished runs included. Runs this store holds are its own to tell. Resolves to whether any changed.
   */
  async follow(runIds: readonly string[]): Promise<boolean> {
    await this.c.gate.opened();
    const { index, loader, events } = this.c;
    let changed = false;
    for (const id of new Set(runIds)) {
      if (loader.runs.get(id)?.owned) continue;
      const known = index.get(id);
      const before = loader.runs.get(id)?.durableCommits ?? known?.durable_commits;
      const h = await loader.peek(id).catch(() => null); // unreadable: reported by its load
      if (h === null) continue;
      if (!h) {
        if (!known) continue;
        loader.runs.delete(id);
        index.delete(id);
        events.emit({ kind: 'run-deleted', run_id: id });
      } else if (h.durableCommits !== before) events.emit({ kind: known ? 'run-updated' : 'run-created', run_id: id });
      else continue;
      changed = true;
    }
    return changed;
  }

  async getRun(runId: string): Promise<RunSummary | undefined> {
    await this.c.gate.opened();
    const h = await this.c.loader.peek(runId);
    return h ? h.model.summary() : undefined;
  }

  async indexedRun(runId: string): Promise<RunSummary | undefined> {
    await this.c.gate.opened();
    checkRunId(runId);
    const entry = this.c.loader.runs.has(runId) ? undefined : this.c.index.get(runId);
    if (!entry) return this.getRun(runId);
    const { durable_commits: _, ...summary } = entry;
    return copyJson(summary);
  }

  async owner(runId: string): Promise<T.OwnerInfo | undefined> {
    await this.c.gate.opened();
    checkRunId(runId);
    const mine = this.c.loader.runs.get(runId);
    if (mine?.owned) return { ...mine.lease!.owner };
    return this.c.engine.holder(runId);
  }

  async latest(runId: string): Promise<CheckpointRecord> {
    const h = await this.run(runId);
    const rec = h.model.verified(h.model.lastSeq);
    if (!rec)
      throw new CheckpointNotFoundError(
        `Run ${runId} has no usable checkpoint${h.damaged ? ' (its log is damaged; see the corruption report)' : ''}.`,
        runId,
      );
    return copyJson(rec);
  }

  async get(runId: string, seq: number): Promise<CheckpointRecord | undefined> {
    const h = await this.run(runId);
    const rec = Number.isInteger(seq) && seq >= 1 ? h.model.verified(seq) : undefined;
    return rec ? copyJson(rec) : undefined;
  }

  async list(runId: string, opts: T.ListOptions = {}): Promise<CheckpointRecord[]> {
    const h = await this.run(runId);
    const limit = opts.limit ?? 100;
    const top = Math.min(h.model.lastSeq, (opts.before ?? Infinity) - 1);
    const out: CheckpointRecord[] = [];
    for (let s = top; s >= 1 && out.length < limit; s--) out.push(copyJson(h.model.verified(s)!));
    return out;
  }

  async loadSnapshot(runId: string, seq?: number): Promise<T.LoadedSnapshot> {
    const h = await this.run(runId);
    const found = h.model.verifiedSnapshotAt(seq ?? h.model.lastSeq);
    if (!found) {
      const where = seq === undefined ? '' : ` at or before seq ${seq}`;
      throw new CheckpointNotFoundError(
        `Run ${runId} has no snapshot checkpoint${where}${h.damaged ? ' (its log is damaged)' : ''}.`,
        runId,
      );
    }
    return copyJson(found);
  }

  async readEnd(runId: string, opts: { records: number }): Promise<T.RunEnd> {
    await this.c.gate.opened();
    checkRunId(runId);
    const n = opts.records;
    if (!Number.isInteger(n) || n < 1) throw new InvalidInputError('records must be a positive integer');
    // A run not in memory: what its last compaction kept, when nothing followed it (no log read).
    if (!this.c.loader.runs.has(runId) && n <= END_RECORDS && this.c.engine.readEnd) {
      const kept = checkedEnd(await this.c.engine.readEnd(runId), runId, n);
      if (kept) return kept; // parsed from storage just now: nobody else holds it
    }
    const h = await this.run(runId);
    return copyJson(computeEnd(h.model, n));
  }

  async listApprovals(runId: string, opts: { pendingOnly?: boolean } = {}): Promise<Approval[]> {
    const h = await this.run(runId);
    return [...h.model.approvals.values()]
      .filter((a) => !opts.pendingOnly || a.decision === null)
      .map((a) => copyJson(a));
  }

  async listEffects(runId: string): Promise<Effect[]> {
    const h = await this.run(runId);
    return [...h.model.effects.values()].map((e) => copyJson(e));
  }

  async listInbox(runId: string, opts: { pendingOnly?: boolean } = {}): Promise<InboxMessage[]> {
    const h = await this.run(runId);
    return [...h.model.inbox.values()].filter((m) => !opts.pendingOnly || m.delivered === null).map((m) => copyJson(m));
  }

  async listRestores(runId: string): Promise<RestoreRecord[]> {
    const h = await this.run(runId);
    return h.model.restores.map((r) => copyJson(r));
  }

  async getBlob(runId: string, hash: string): Promise<string> {
    await this.c.gate.opened();
    checkRunId(runId);
    checkBlobHash(hash);
    return this.c.engine.getBlob(runId, hash, await this.c.loader.canRepair(runId));
  }

  async storageBytes(runId: string): Promise<number> {
    await this.run(runId);
    return this.c.engine.storageBytes(runId);
  }
}

function encodeCursor(ms: number, id: string): string {
  return Buffer.from(JSON.stringify([ms, id])).toString('base64url');
}

function decodeCursor(c: string): [number, string] {
  try {
    const v: unknown = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw new InvalidKeyError(`Invalid run list cursor ${JSON.stringify(c)}.`);
}
