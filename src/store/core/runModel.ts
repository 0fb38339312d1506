// The in-memory state of one run, built by applying commit ops in order. Both backends use it:
// live writes apply the same ops that a reload replays, so a reopened run is the run that was
// written. It never copies: callers clone what they hand out (structuredClone at the API edge).
import { AgentCheckpointCorruptionError } from '../api/errors';
import {
  CheckpointRecord,
  isTerminalState,
  LIST_FIELDS,
  RunState,
  type Approval,
  type Damage,
  type Effect,
  type InboxMessage,
  type ListField,
  type RestoreRecord,
  type RunMeta,
  type RunSummary,
  type RuntimeSnapshot,
} from '../api/schema';
import { LIST_ITEM, type CommitOp, type ListTails } from './storedSchema';
import { fastValid } from './fastValid';
import { merged } from './copy';
import { Records, type CompactedHistory } from './records';

export type Lists = Record<ListField, unknown[]>;
const emptyLists = (): Lists => ({ messages: [], tool_executions: [], subagent_executions: [] });

/** A commit that does not fit the run (seq gap, list base past the end, another run's data). */
export class CommitMismatchError extends Error {}

export class RunModel {
  state: RunState = 'running';
  detail: string | null = null;
  stateMs: number;
  updatedMs: number;
  /** The records by seq; after a compacted history was adopted, its older ones are read when first asked for. */
  private readonly recs: Records;
  readonly lists: Lists = emptyLists();
  /** List tails by the seq of the record that wrote them (replayed for snapshots before a rewind). */
  readonly tails = new Map<number, ListTails>();
  /** Seq of the last record whose tails cut a list short; snapshots at or after it are current-list prefixes. */
  lastRewindSeq = 0;
  readonly snapshotSeqs: number[] = [];
  readonly approvals = new Map<string, Approval>();
  readonly effects = new Map<string, Effect>();
  /** Results the effects hold, earlier attempts' too (the tail witness counts them after every commit). */
  results = 0;
  /** Messages the user sent to this run, by id, in the order sent. */
  readonly inbox = new Map<string, InboxMessage>();
  /** Restores of the run's files, oldest first (an audit trail: never changes records or state). */
  readonly restores: RestoreRecord[] = [];
  /** Damage records, oldest first: the run's history lost part of itself at these points. */
  readonly damage: Damage[] = [];
  /** Approvals waiting for a decision. */
  pending = 0;
  /** Records loaded from disk not yet checked against the full schema: seq → the file they came from. */
  readonly unverified = new Map<number, string>();

  constructor(readonly meta: RunMeta) {
    this.stateMs = meta.created_ms;
    this.updatedMs = meta.created_ms;
    this.recs = new Records(meta, this.unverified, this.snapshotSeqs);
  }

  get lastSeq(): number {
    return this.recs.length;
  }

  /** Every record, in seq order (a compacted history not read yet is read first). */
  get records(): readonly CheckpointRecord[] {
    return this.recs.all();
  }

  /** The record of `seq` (unchecked: see `verified`), reading the compacted history when it is not in memory. */
  record(seq: number): CheckpointRecord | undefined {
    return this.recs.get(seq);
  }

  /** The newest record (always in memory). */
  get lastRecord(): CheckpointRecord | undefined {
    return this.recs.last();
  }

  /** Whether a compacted history is still to be read (tests, benchmarks). */
  get historyPending(): boolean {
    return this.recs.pending;
  }

  /**
   * A compacted run's state without its older records (records.ts): the list tails of every
   * record, the newest records from the newest snapshot on, which seqs hold snapshots, and a reader
   * for the rest — called the first time a record not in memory is asked for. The model must be
   * fresh of records. Throws CommitMismatchError when the parts do not fit together.
   */
  adoptCompacted(c: CompactedHistory, file: string): void {
    if (this.recs.length > 0) throw new CommitMismatchError('a compacted history after records');
    const { count, newest, snapshotSeqs } = c;
    if (!Number.isInteger(count) || count < 1) throw new CommitMismatchError(`a compacted history of ${count} records`);
    const lens = this.listLengths();
    let prev = 0;
    for (const [seq, tails] of c.tails) {
      if (!(Number.isInteger(seq) && seq > prev && seq <= count))
        throw new CommitMismatchError(`list tails of checkpoint ${seq} out of order`);
      prev = seq;
      checkTails(tails, lens, seq, true);
    }
    prev = 0;
    for (const s of snapshotSeqs)
      if (!(Number.isInteger(s) && s > prev && s <= count)) throw new CommitMismatchError('snapshot seqs out of order');
      else prev = s;
    const first = count - newest.length + 1;
    if (newest.length === 0 || (snapshotSeqs.length > 0 && snapshotSeqs[snapshotSeqs.length - 1]! < first))
      throw new CommitMismatchError('a compacted history without its newest records');
    newest.forEach((r, i) => {
      if (r.seq !== first + i || r.run_id !== this.meta.run_id)
        throw new CommitMismatchError(`newest record ${r.seq} where ${first + i} was expected`);
      if (Boolean(r.snapshot) !== snapshotSeqs.includes(r.seq))
        throw new CommitMismatchError(`checkpoint ${r.seq} and the snapshot seqs disagree`);
    });
    // Applied: the lists as the records' tails leave them, the newest records, the rest to read.
    for (const [seq, tails] of c.tails) this.applyTails(seq, tails);
    this.snapshotSeqs.push(...snapshotSeqs);
    this.recs.adopt(count, newest, file, c.read, (ops) => new RunModel(this.meta).check(ops, false));
    this.touch(c.updatedMs);
  }

  /** Throws CommitMismatchError if the ops cannot follow the current state. Mutates nothing. */
  check(ops: readonly CommitOp[], validateItems: boolean): void {
    const runId = this.meta.run_id;
    let seq = this.recs.length;
    const lens = this.listLengths();
    for (const op of ops) {
      const owner = opRunId(op) ?? runId;
      if (owner !== runId) throw new CommitMismatchError(`holds data of run ${owner}`);
      if (op.op !== 'record') continue;
      if (op.record.seq !== ++seq)
        throw new CommitMismatchError(`checkpoint seq ${op.record.seq} where ${seq} was expected`);
      if (op.lists) checkTails(op.lists, lens, seq, validateItems);
      const h = op.record.snapshot;
      if (
        h &&
        (h.message_count > lens.messages ||
          h.tool_execution_count > lens.tool_executions ||
          h.subagent_execution_count > lens.subagent_executions)
      ) {
        throw new CommitMismatchError(`snapshot of seq ${seq} counts more list items than were written`);
      }
    }
  }

  private listLengths(): Record<ListField, number> {
    return Object.fromEntries(LIST_FIELDS.map((f) => [f, this.lists[f].length])) as Record<ListField, number>;
  }

  /** Grows with every op applied: what was built from the model is current while it stays the same. */
  revision = 0;

  apply(ops: readonly CommitOp[]): void {
    this.revision++;
    for (const op of ops) this.applyOne(op);
  }

  private applyOne(op: CommitOp): void {
    switch (op.op) {
      case 'record':
        return this.applyRecord(op.record, op.lists);
      case 'approval': {
        const prev = this.approvals.get(op.approval.tool_call_id);
        this.pending += (op.approval.decision === null ? 1 : 0) - (prev && prev.decision === null ? 1 : 0);
        this.approvals.set(op.approval.tool_call_id, op.approval);
        return this.touch(Math.max(op.approval.requested_ms, op.approval.decision?.decided_ms ?? 0));
      }
      case 'effect': {
        const prev = this.effects.get(op.effect.tool_call_id);
        const held = effectAfter(prev, op.effect);
        if (held) this.effects.set(op.effect.tool_call_id, held);
        else this.effects.delete(op.effect.tool_call_id);
        this.results += finishedAttempts(held) - finishedAttempts(prev);
        return this.touch(Math.max(op.effect.intent_ms, op.effect.result?.finished_ms ?? 0));
      }
      case 'restore':
        this.restores.push(op.restore);
        return this.touch(op.restore.created_ms);
      case 'state':
        this.state = op.state;
        this.detail = op.detail;
        this.stateMs = op.ms;
        return this.touch(op.ms);
      case 'inbox':
        this.inbox.set(op.message.id, op.message);
        return this.touch(Math.max(op.message.posted_ms, op.message.delivered?.ms ?? 0));
      case 'damage':
        return this.applyDamage(op.damage);
    }
  }

  /** A finished run stays finished; anything else waits for the user, who decides what may run again. */
  private applyDamage(d: Damage): void {
    this.damage.push(d);
    const finished = d.state_before !== null && isTerminalState(d.state_before);
    this.state = finished ? d.state_before! : 'paused_error';
    this.detail = finished
      ? `Finished; its history was damaged afterwards (${d.lost}). Nothing will run again.`
      : `Its history was damaged (${d.lost}). Resuming asks before every side-effecting call that may already have run.`;
    this.stateMs = d.ms;
    this.touch(d.ms);
  }

  /** Every damage record merged: the widest step range, every lost call; null when never damaged. */
  damageSummary(): Damage | null {
    if (this.damage.length === 0) return null;
    if (this.damage.length === 1) return this.damage[0]!;
    const last = this.damage[this.damage.length - 1]!;
    const unknownStep = this.damage.some((d) => d.step_before === null);
    const effects = this.damage.some((d) => d.effects_lost === true)
      ? true
      : this.damage.some((d) => d.effects_lost === null)
        ? null
        : false;
    return {
      ...last,
      effects_lost: effects,
      step_before: unknownStep ? null : Math.max(...this.damage.map((d) => d.step_before!)),
      lost_calls: this.damage.flatMap((d) => d.lost_calls),
      lost: this.damage.map((d) => d.lost).join('; '),
    };
  }

  private applyRecord(record: CheckpointRecord, tails: ListTails | undefined): void {
    this.recs.push(record);
    if (tails) this.applyTails(record.seq, tails);
    if (record.snapshot) this.snapshotSeqs.push(record.seq);
    if (record.phase === 'run_terminal') {
      const s = RunState.safeParse(record.payload.state);
      if (s.success) {
        this.state = s.data;
        this.detail = null;
        this.stateMs = record.timestamp_ms;
      }
    }
    this.touch(record.timestamp_ms);
  }

  private applyTails(seq: number, tails: ListTails): void {
    for (const field of LIST_FIELDS) {
      const tail = tails[field];
      if (!tail) continue;
      const list = this.lists[field];
      if (tail.base < list.length) {
        this.lastRewindSeq = seq;
        list.length = tail.base;
      }
      for (const item of tail.items) list.push(item);
    }
    this.tails.set(seq, tails);
  }

  private touch(ms: number): void {
    if (ms > this.updatedMs) this.updatedMs = ms;
  }

  summary(): RunSummary {
    const last = this.lastRecord;
    // (built by merged, not a spread: this runs for every op a step writes)
    return merged<RunSummary>(
      this.meta,
      {
        state: this.state,
        state_detail: this.detail,
        step: last?.step ?? 0,
        last_seq: this.recs.length,
        last_phase: last?.phase ?? null,
        updated_ms: this.updatedMs,
        pending_approvals: this.pending,
      },
      this.damage.length > 0 ? { damage: this.damageSummary() } : null,
    );
  }

  /** The record, checked against the full CheckpointRecord schema before it is first handed out. */
  verified(seq: number): CheckpointRecord | undefined {
    const rec = this.record(seq);
    const file = this.unverified.get(seq);
    if (!rec || file === undefined) return rec;
    if (fastValid(CheckpointRecord)(rec)) {
      this.unverified.delete(seq);
      return rec;
    }
    const r = CheckpointRecord.safeParse(rec);
    if (!r.success) {
      const issue = r.error.issues[0];
      const why = `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
      throw new AgentCheckpointCorruptionError(
        `${file} is corrupt: checkpoint ${seq} does not match its schema (${why})`,
        this.meta.run_id,
        file,
      );
    }
    this.recs.set(seq, r.data);
    this.unverified.delete(seq);
    return r.data;
  }

  verifyAll(): void {
    this.recs.all();
    for (const seq of [...this.unverified.keys()]) this.verified(seq);
  }

  verifiedSnapshotAt(seq: number): { record: CheckpointRecord; snapshot: RuntimeSnapshot } | undefined {
    const s = newestAtOrBefore(this.snapshotSeqs, seq);
    if (s !== undefined) this.verified(s);
    return this.snapshotAt(seq);
  }

  /** The newest snapshot-bearing record at or before `seq` (internal references: clone before handing out). */
  snapshotAt(seq: number): { record: CheckpointRecord; snapshot: RuntimeSnapshot } | undefined {
    const s = newestAtOrBefore(this.snapshotSeqs, seq);
    if (s === undefined) return undefined;
    const record = this.record(s)!;
    const header = record.snapshot!;
    const lists = s >= this.lastRewindSeq ? this.lists : this.replayLists(s);
    const { message_count, tool_execution_count, subagent_execution_count, ...rest } = header;
    const snapshot = {
      ...rest,
      messages: lists.messages.slice(0, message_count),
      tool_executions: lists.tool_executions.slice(0, tool_execution_count),
      subagent_executions: lists.subagent_executions.slice(0, subagent_execution_count),
    } as RuntimeSnapshot;
    return { record, snapshot };
  }

  private replayLists(uptoSeq: number): Lists {
    const out = emptyLists();
    for (const [seq, tails] of this.tails) {
      if (seq > uptoSeq) break; // Map keeps insertion order = seq order
      for (const field of LIST_FIELDS) {
        const t = tails[field];
        if (!t) continue;
        out[field].length = t.base;
        out[field].push(...t.items);
      }
    }
    return out;
  }

  /** Every op needed to rebuild this run from nothing (compaction, export). Effects first: tool messages may refer to them. */
  rebuildOps(): CommitOp[] {
    this.verifyAll();
    const ops: CommitOp[] = [];
    for (const effect of this.effects.values()) ops.push({ op: 'effect', effect });
    for (const approval of this.approvals.values()) ops.push({ op: 'approval', approval });
    for (const record of this.recs.all()) {
      const lists = this.tails.get(record.seq);
      ops.push(lists ? { op: 'record', record, lists } : { op: 'record', record });
    }
    // After the records: a delivered message refers to the checkpoint that delivered it.
    for (const message of this.inbox.values()) ops.push({ op: 'inbox', message });
    for (const restore of this.restores) ops.push({ op: 'restore', restore });
    for (const damage of this.damage) ops.push({ op: 'damage', damage });
    ops.push({ op: 'state', state: this.state, detail: this.detail, ms: this.stateMs });
    return ops;
  }
}

/** The run an op's data belongs to (undefined: the op carries none, e.g. a state change). */
function opRunId(op: CommitOp): string | undefined {
  switch (op.op) {
    case 'record':
      return op.record.run_id;
    case 'approval':
      return op.approval.run_id;
    case 'effect':
      return op.effect.run_id;
    case 'inbox':
      return op.message.run_id;
    case 'state':
    case 'damage':
    case 'restore':
      return undefined;
  }
}

/** Whether a record's list tails fit the lists as long as `lens` (moved past them); throws CommitMismatchError. */
function checkTails(tails: ListTails, lens: Record<ListField, number>, seq: number, validateItems: boolean): void {
  for (const field of LIST_FIELDS) {
    const tail = tails[field];
    if (!tail) continue;
    if (tail.base > lens[field])
      throw new CommitMismatchError(`${field} tail starts at ${tail.base}, past the end (${lens[field]})`);
    if (validateItems) checkItems(field, tail.items, seq);
    lens[field] = tail.base + tail.items.length;
  }
}

function checkItems(field: ListField, items: readonly unknown[], seq: number): void {
  const schema = LIST_ITEM[field];
  const fast = fastValid(schema);
  for (let i = 0; i < items.length; i++) {
    if (fast(items[i])) continue;
    const r = schema.safeParse(items[i]);
    if (!r.success)
      throw new CommitMismatchError(
        `${field} item ${i} of seq ${seq} is invalid: ${r.error.issues[0]?.message ?? 'invalid'}`,
      );
  }
}

function newestAtOrBefore(sorted: readonly number[], seq: number): number | undefined {
  let lo = 0;
  let hi = sorted.length - 1;
  let found: number | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= seq) {
      found = sorted[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The call's results, earlier attempts' included: a retry moves one, never loses it from the count. */
function finishedAttempts(e: Effect | undefined): number {
  return (e?.result ? 1 : 0) + (e?.attempts?.length ?? 0);
}

/**
 * The effect a run holds for a call after one of its effect records (undefined: none). A withdrawal
 * (`withdrawn_ms`) removes an intent whose call never started; one that would erase a call with a
 * result or a process — which the journal refuses to write, so only a crafted or damaged log holds
 * it — is not taken: the call stays as far as it had got.
 */
export function effectAfter(prev: Effect | undefined, e: Effect): Effect | undefined {
  if (e.withdrawn_ms === undefined) return e;
  if (prev?.result || prev?.process) return prev;
  if (e.result || e.process) {
    const { withdrawn_ms: _, ...kept } = e;
    return kept;
  }
  return undefined;
}
