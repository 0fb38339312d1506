// The reads of the store: runs (listing, rescan), checkpoints, snapshots, the journal, inbox,
// restores and blobs. Every answer is a fresh copy (copy.ts): callers may mutate what they get.
import { copyJson } from './copy';
import { checkedEnd, computeEnd, END_RECORDS } from './end';
import { CheckpointNotFoundError, InvalidInputError, InvalidKeyError } from '../api/errors';
import {
  isTerminalState,
  RUN_STATES,
  type Approval,
  type CheckpointRecord,
  type Effect,
  type InboxMessage,
  type RestoreRecord,
  type RunState,
  type RunSummary,
  type RuntimeSnapshot,
} from '../api/schema';
import type { IndexEntry } from './storedSchema';
import type * as T from '../api/types';
import type { RunHandle } from './runHandle';
import type { StoreContext } from './context';
import { checkBlobHash, checkRunId } from './validate';
import { NeedsWholeRunError, type RunModel } from './runModel';

export class StoreReader {
  constructor(private readonly c: StoreContext) {}

  /**
   * The run, loaded or refreshed (the store open); CheckpointNotFoundError if it does not exist.
   * `fromPoint`: the caller reads only what a run needs to go on — a run not in memory may then be read
   * from its resume point (RunModel.partial); otherwise one read so is made whole first.
   */
  async run(runId: string, fromPoint = false): Promise<RunHandle> {
    await this.c.gate.opened();
    const h = await this.c.loader.mustPeek(runId, fromPoint);
    return fromPoint ? h : this.c.loader.makeWhole(h);
  }

  async listRuns(opts: T.ListRunsOptions = {}): Promise<T.RunPage> {
    await this.c.gate.listable();
    const limit = opts.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new InvalidInputError('limit must be an integer from 1 to 1000');
    const states = opts.states ? new Set(checkStates(opts.states)) : undefined;
    const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
    if (states && [...states].every((s) => !isTerminalState(s))) await this.c.loader.unfinishedRead;
    const fromHead = this.listFromHead(limit, after, states);
    if (fromHead) return fromHead;
    await this.c.gate.opened();
    return listPage(this.entries(after, states), limit);
  }

  /**
   * The page from the index's head, when the head surely holds it: unfinished runs only, or a full
   * page of runs no older than the head's cutoff. undefined: the whole index is needed.
   */
  private listFromHead(
    limit: number,
    after: ListKey | undefined,
    states: ReadonlySet<RunState> | undefined,
  ): T.RunPage | undefined {
    const cutoff = this.c.loader.cutoff;
    if (!cutoff) return undefined;
    const entries = this.entries(after, states);
    if (states && [...states].every((s) => !isTerminalState(s))) return listPage(entries, limit);
    const known = entries.filter((e) => !olderThan([e.updated_ms, e.run_id], cutoff));
    if (known.length < limit) return undefined;
    const page = listPage(known, limit);
    return page.cursor ? page : { ...page, cursor: cursorOf(known[limit - 1]!) }; // more may lie past the cutoff
  }

  /** The index's entries after `after` (in `states`), newest first. */
  private entries(after: ListKey | undefined, states: ReadonlySet<RunState> | undefined): IndexEntry[] {
    const out: IndexEntry[] = [];
    for (const e of this.c.index.entries.values())
      if ((!states || states.has(e.state)) && (!after || olderThan([e.updated_ms, e.run_id], after))) out.push(e);
    return out.sort((a, b) => b.updated_ms - a.updated_ms || (a.run_id < b.run_id ? 1 : -1));
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
    const h = await this.c.loader.peek(runId, true); // (its summary: from its resume point will do)
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
    const h = await this.run(runId, true);
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

  /**
   * The newest snapshot as a resume needs it: read from the run's resume point when it is not in memory
   * (its lists then hold holes where the point left items on disk: `omitted`), else whole.
   */
  async loadResumeSnapshot(runId: string): Promise<T.ResumeSnapshot> {
    let h = await this.run(runId, true);
    let found: ReturnType<typeof h.model.resumeSnapshot>;
    try {
      found = h.model.resumeSnapshot();
      if (found && Object.values(found.omitted).some((o) => o.from < o.to) && !coversNeeds(found))
        throw new NeedsWholeRunError("what the newest snapshot's model context sees");
    } catch (err) {
      if (!(err instanceof NeedsWholeRunError)) throw err;
      h = await this.c.loader.makeWhole(h);
      found = h.model.resumeSnapshot();
    }
    if (!found)
      throw new CheckpointNotFoundError(
        `Run ${runId} has no snapshot checkpoint${h.damaged ? ' (its log is damaged)' : ''}.`,
        runId,
      );
    h.model.verified(found.record.seq);
    return { record: copyJson(found.record), snapshot: copyWithHoles(found.snapshot), omitted: found.omitted };
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

  async listApprovals(
    runId: string,
    opts: { pendingOnly?: boolean; calls?: readonly string[] } = {},
  ): Promise<Approval[]> {
    const ids = callIds(opts.calls);
    let h = await this.run(runId, true);
    // A run resumed from its resume point holds every pending approval, and those of its last steps.
    const held = (m: RunModel) =>
      ids ? [...ids].every((id) => !m.partial!.archivedApprovals.has(id)) : opts.pendingOnly === true;
    if (h.model.partial && !held(h.model)) h = await this.c.loader.makeWhole(h);
    const m = h.model;
    return [...(m.partial ? m.liveApprovals : m.approvals).values()]
      .filter((a) => (!ids || ids.has(a.tool_call_id)) && (!opts.pendingOnly || a.decision === null))
      .map((a) => copyJson(a));
  }

  async listEffects(runId: string, opts: { calls?: readonly string[] } = {}): Promise<Effect[]> {
    const ids = callIds(opts.calls);
    let h = await this.run(runId, true);
    const archived = h.model.partial?.archivedEffects;
    if (archived && !(ids && [...ids].every((id) => !archived.has(id)))) h = await this.c.loader.makeWhole(h);
    const m = h.model;
    return [...(m.partial ? m.liveEffects : m.effects).values()]
      .filter((e) => !ids || ids.has(e.tool_call_id))
      .map((e) => copyJson(e));
  }

  async listInbox(runId: string, opts: { pendingOnly?: boolean } = {}): Promise<InboxMessage[]> {
    const h = await this.run(runId, true);
    return [...h.model.inbox.values()].filter((m) => !opts.pendingOnly || m.delivered === null).map((m) => copyJson(m));
  }

  async listRestores(runId: string): Promise<RestoreRecord[]> {
    const h = await this.run(runId, true);
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

/**
 * Whether the items a resume snapshot leaves out are ones its model context does without: messages a
 * condense replaced by its summary. (The tool executions a point leaves out are those before the first
 * whose tool message the model saw then; it sees no earlier one while the condense has not moved back.)
 */
function coversNeeds(found: { snapshot: RuntimeSnapshot; omitted: T.ResumeSnapshot['omitted'] }): boolean {
  const { messages, subagent_executions } = found.omitted;
  const c = found.snapshot.model_context?.condense;
  if (messages.from < messages.to && !(c && c.head <= messages.from && messages.to <= c.through)) return false;
  return subagent_executions.from >= subagent_executions.to;
}

/** A copy of a snapshot whose lists may hold holes: the holes stay holes (a JSON copy would make them null). */
function copyWithHoles(s: RuntimeSnapshot): RuntimeSnapshot {
  const { messages, tool_executions, subagent_executions, ...rest } = s;
  const sparse = <X>(list: X[]): X[] => {
    const out: X[] = new Array<X>(list.length);
    list.forEach((x, i) => (out[i] = copyJson(x))); // (forEach skips holes)
    return out;
  };
  return {
    ...copyJson(rest),
    messages: sparse(messages),
    tool_executions: sparse(tool_executions),
    subagent_executions: sparse(subagent_executions),
  } as RuntimeSnapshot;
}

/** The call ids a listing is narrowed to (undefined: every call). */
function callIds(calls: unknown): Set<string> | undefined {
  if (calls === undefined) return undefined;
  if (!Array.isArray(calls) || calls.some((c) => typeof c !== 'string'))
    throw new InvalidInputError('calls must be an array of tool call ids');
  return new Set(calls as string[]);
}

type ListKey = readonly [number, string];

/** `a` lists after `b` (older, or as old with a smaller id). */
function olderThan(a: ListKey, b: ListKey): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

function listPage(sorted: readonly IndexEntry[], limit: number): T.RunPage {
  const page = sorted.slice(0, limit);
  const runs = page.map(({ durable_commits: _, ...s }) => copyJson(s));
  return sorted.length > limit ? { runs, cursor: cursorOf(page[page.length - 1]!) } : { runs };
}

function checkStates(states: readonly unknown[]): RunState[] {
  if (!Array.isArray(states) || states.some((s) => !RUN_STATES.includes(s as RunState)))
    throw new InvalidInputError(`states must be run states (${RUN_STATES.join(', ')})`);
  return states as RunState[];
}

const cursorOf = (e: IndexEntry): string => encodeCursor(e.updated_ms, e.run_id);

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
