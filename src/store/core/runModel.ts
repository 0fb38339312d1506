// The in-memory state of one run, built by applying commit ops in order. Both backends use it:
// live writes apply the same ops that a reload replays, so a reopened run is the run that was
// written. It never copies: callers clone what they hand out (structuredClone at the API edge).
import type { z } from 'zod';
import { AgentCheckpointCorruptionError } from '../api/errors';
import {
  CheckpointRecord,
  isTerminalState,
  LIST_FIELDS,
  RunState,
  Approval,
  Damage,
  Effect,
  InboxMessage,
  type ListField,
  RestoreRecord,
  type RunMeta,
  type RunSummary,
  type RuntimeSnapshot,
} from '../api/schema';
import { isRecordSkeleton, LIST_ITEM, type CommitOp, type ListTails } from './storedSchema';
import { fastValid } from './fastValid';
import { merged } from './copy';
import { Records, type CompactedHistory } from './records';

export type Lists = Record<ListField, unknown[]>;
const emptyLists = (): Lists => ({ messages: [], tool_executions: [], subagent_executions: [] });

/** A commit that does not fit the run (seq gap, list base past the end, another run's data). */
export class CommitMismatchError extends Error {}

/**
 * Asked of a run resumed from a resume point (resumePoint.ts) for what it left on disk — an older
 * record, a list item it left out, a call of an earlier step: the caller reads the run whole
 * (RunModel.becomeWhole) and asks again. Thrown before anything changes.
 */
export class NeedsWholeRunError extends Error {
  override readonly name = 'NeedsWholeRunError';
  constructor(what: string) {
    super(`${what} is not in memory: the run was resumed from its resume point`);
  }
}

/** List items [from, to) a run resumed from a resume point left on disk (from = to: none). */
export interface Omitted {
  from: number;
  to: number;
}

/** What a model resumed from a resume point holds of the run, and what it left on disk. */
export interface PartialParts {
  /** Per list, the items left on disk: holes in the list. */
  omitted: Record<ListField, Omitted>;
  /** Calls of earlier steps whose effect records, and approvals, were left on disk. */
  archivedEffects: Set<string>;
  archivedApprovals: Set<string>;
  /** The oldest record in memory: the records before it were left on disk. */
  firstSeq: number;
}

export class RunModel {
  state: RunState = 'running';
  detail: string | null = null;
  stateMs: number;
  updatedMs: number;
  /** The records by seq; after a compacted history was adopted, its older ones are read when first asked for. */
  private recs: Records;
  private _lists: Lists = emptyLists();
  /** List tails by the seq of the record that wrote them (replayed for snapshots before a rewind). */
  private _tails = new Map<number, ListTails>();
  /** Seq of the last record whose tails cut a list short; snapshots at or after it are current-list prefixes. */
  lastRewindSeq = 0;
  private _snapshotSeqs: number[] = [];
  private _approvals = new Map<string, Approval>();
  private _effects = new Map<string, Effect>();
  /** Results the effects hold, earlier attempts' too (the tail witness counts them after every commit). */
  results = 0;
  /** Messages the user sent to this run, by id, in the order sent. */
  inbox = new Map<string, InboxMessage>();
  /** Restores of the run's files, oldest first (an audit trail: never changes records or state). */
  restores: RestoreRecord[] = [];
  /** Damage records, oldest first: the run's history lost part of itself at these points. */
  damage: Damage[] = [];
  /** Approvals waiting for a decision. */
  pending = 0;
  /** Records loaded from disk not yet checked against the full schema: seq → the file they came from. */
  unverified = new Map<number, string>();
  /** Not null: the run was resumed from a resume point, and this is what it left on disk. */
  partial: PartialParts | null = null;

  constructor(readonly meta: RunMeta) {
    this.stateMs = meta.created_ms;
    this.updatedMs = meta.created_ms;
    this.recs = new Records(meta, this.unverified, this._snapshotSeqs);
  }

  private needWhole(what: string): void {
    if (this.partial) throw new NeedsWholeRunError(what);
  }

  /** The lists whole (a run resumed from a resume point: NeedsWholeRunError). */
  get lists(): Lists {
    this.needWhole("the run's older list items");
    return this._lists;
  }

  listLength(field: ListField): number {
    return this._lists[field].length;
  }

  /** Item `i` of a list as stored (NeedsWholeRunError when it was left on disk). */
  storedItem(field: ListField, i: number): unknown {
    const o = this.partial?.omitted[field];
    if (o && i >= o.from && i < o.to) throw new NeedsWholeRunError(`item ${i} of the run's ${field}`);
    return this._lists[field][i];
  }

  get tails(): Map<number, ListTails> {
    this.needWhole("the run's older list tails");
    return this._tails;
  }

  /** The seqs of the records with a snapshot, ascending. */
  get snapshotSeqs(): readonly number[] {
    this.needWhole("the run's older checkpoints");
    return this._snapshotSeqs;
  }

  get approvals(): Map<string, Approval> {
    this.needWhole("the run's older approvals");
    return this._approvals;
  }

  get effects(): Map<string, Effect> {
    this.needWhole("the run's older effect records");
    return this._effects;
  }

  /** The call's effect record (NeedsWholeRunError: one of an earlier step, left on disk). */
  effect(toolCallId: string): Effect | undefined {
    if (this.partial?.archivedEffects.has(toolCallId))
      throw new NeedsWholeRunError(`the effect record of call ${toolCallId}`);
    return this._effects.get(toolCallId);
  }

  /** The call's approval (NeedsWholeRunError: one of an earlier step, left on disk). */
  approval(toolCallId: string): Approval | undefined {
    if (this.partial?.archivedApprovals.has(toolCallId))
      throw new NeedsWholeRunError(`the approval of call ${toolCallId}`);
    return this._approvals.get(toolCallId);
  }

  /** Calls with an effect record (the tail witness's intents). */
  get effectCount(): number {
    return this._effects.size + (this.partial?.archivedEffects.size ?? 0);
  }

  /** The effect records and approvals in memory (all of them, unless resumed from a resume point). */
  get liveEffects(): ReadonlyMap<string, Effect> {
    return this._effects;
  }

  get liveApprovals(): ReadonlyMap<string, Approval> {
    return this._approvals;
  }

  /**
   * This model made whole: every part of `whole` (the same run read whole from its log, as long)
   * taken in place, so whatever holds this model (the commit queue) sees the whole run from now on.
   * Throws CommitMismatchError when the two do not describe the same run.
   */
  becomeWhole(whole: RunModel): void {
    if (!this.partial) return;
    const mismatch =
      whole.lastSeq !== this.lastSeq
        ? `${whole.lastSeq} checkpoints where ${this.lastSeq} were resumed`
        : whole.effectCount !== this.effectCount || whole.results !== this.results
          ? `${whole.effectCount} calls with ${whole.results} results where ${this.effectCount} with ${this.results} were resumed`
          : LIST_FIELDS.find((f) => whole._lists[f].length !== this._lists[f].length)
            ? 'lists of other lengths than those resumed'
            : whole.state !== this.state || whole.pending !== this.pending
              ? 'another state than the one resumed'
              : null;
    if (mismatch) throw new CommitMismatchError(`the run read whole holds ${mismatch}`);
    this.recs = whole.recs;
    this._lists = whole._lists;
    this._tails = whole._tails;
    this.lastRewindSeq = whole.lastRewindSeq;
    this._snapshotSeqs = whole._snapshotSeqs;
    this._approvals = whole._approvals;
    this._effects = whole._effects;
    this.inbox = whole.inbox;
    this.restores = whole.restores;
    this.damage = whole.damage;
    this.unverified = whole.unverified;
    this.detail = whole.detail;
    this.stateMs = whole.stateMs;
    this.updatedMs = Math.max(this.updatedMs, whole.updatedMs);
    this.partial = null;
    this.revision++;
  }

  get lastSeq(): number {
    return this.recs.length;
  }

  /** Every record, in seq order (a compacted history not read yet is read first). */
  get records(): readonly CheckpointRecord[] {
    this.needWhole("the run's older checkpoints");
    return this.recs.all();
  }

  /** The record of `seq` (unchecked: see `verified`), reading the compacted history when it is not in memory. */
  record(seq: number): CheckpointRecord | undefined {
    if (this.partial && seq >= 1 && seq < this.partial.firstSeq) throw new NeedsWholeRunError(`checkpoint ${seq}`);
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
    this._snapshotSeqs.push(...snapshotSeqs);
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
      if (op.op === 'effect') this.effect(op.effect.tool_call_id);
      if (op.op === 'approval') this.approval(op.approval.tool_call_id);
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
    return Object.fromEntries(LIST_FIELDS.map((f) => [f, this._lists[f].length])) as Record<ListField, number>;
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
        const prev = this._approvals.get(op.approval.tool_call_id);
        this.pending += (op.approval.decision === null ? 1 : 0) - (prev && prev.decision === null ? 1 : 0);
        this._approvals.set(op.approval.tool_call_id, op.approval);
        return this.touch(Math.max(op.approval.requested_ms, op.approval.decision?.decided_ms ?? 0));
      }
      case 'effect': {
        const prev = this._effects.get(op.effect.tool_call_id);
        const held = effectAfter(prev, op.effect);
        if (held) this._effects.set(op.effect.tool_call_id, held);
        else this._effects.delete(op.effect.tool_call_id);
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
    if (record.snapshot) this._snapshotSeqs.push(record.seq);
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
      const list = this._lists[field];
      if (tail.base < list.length) {
        this.lastRewindSeq = seq;
        list.length = tail.base;
        // (a rewind into what a resume point left out: only the items before the base stay out)
        const o = this.partial?.omitted[field];
        if (o) {
          o.to = Math.min(o.to, tail.base);
          o.from = Math.min(o.from, o.to);
        }
      }
      for (const item of tail.items) list.push(item);
    }
    this._tails.set(seq, tails);
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
    this.needWhole("the run's older checkpoints");
    this.recs.all();
    for (const seq of [...this.unverified.keys()]) this.verified(seq);
  }

  verifiedSnapshotAt(seq: number): { record: CheckpointRecord; snapshot: RuntimeSnapshot } | undefined {
    const s = this.snapshotSeqAt(seq);
    if (s !== undefined) this.verified(s);
    return this.snapshotAt(seq);
  }

  /** The newest snapshot-bearing seq at or before `seq` (NeedsWholeRunError: one a resume point left on disk). */
  private snapshotSeqAt(seq: number): number | undefined {
    const s = newestAtOrBefore(this._snapshotSeqs, seq);
    if (this.partial && (s === undefined || s < this.partial.firstSeq))
      throw new NeedsWholeRunError(`checkpoint ${seq}`);
    return s;
  }

  /** The newest snapshot-bearing record at or before `seq` (internal references: clone before handing out). */
  snapshotAt(seq: number): { record: CheckpointRecord; snapshot: RuntimeSnapshot } | undefined {
    const found = this.snapshotWithHoles(seq);
    if (found && this.partial) {
      const h = found.record.snapshot!;
      const counts = listCounts(h);
      for (const f of LIST_FIELDS) {
        const o = this.partial.omitted[f];
        if (o.from < o.to && o.from < counts[f])
          throw new NeedsWholeRunError(`items ${o.from}–${o.to - 1} of the run's ${f}`);
      }
    }
    return found;
  }

  /**
   * The newest snapshot as a resume needs it (internal references: copy before handing out): its
   * lists hold holes where a resume point left items on disk (`omitted`; none when the run is whole).
   */
  resumeSnapshot():
    { record: CheckpointRecord; snapshot: RuntimeSnapshot; omitted: Record<ListField, Omitted> } | undefined {
    const found = this.snapshotWithHoles(this.lastSeq);
    if (!found) return undefined;
    const h = found.record.snapshot!;
    const counts = listCounts(h);
    const omitted = Object.fromEntries(
      LIST_FIELDS.map((f) => {
        const o = this.partial?.omitted[f];
        const to = o ? Math.min(o.to, counts[f]) : 0;
        return [f, o && o.from < to ? { from: o.from, to } : { from: 0, to: 0 }];
      }),
    ) as Record<ListField, Omitted>;
    return { ...found, omitted };
  }

  private snapshotWithHoles(seq: number): { record: CheckpointRecord; snapshot: RuntimeSnapshot } | undefined {
    const s = this.snapshotSeqAt(seq);
    if (s === undefined) return undefined;
    const record = this.record(s)!;
    const header = record.snapshot!;
    if (this.partial && s < this.lastRewindSeq) throw new NeedsWholeRunError(`the lists as checkpoint ${s} saw them`);
    const lists = s >= this.lastRewindSeq ? this._lists : this.replayLists(s);
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

  /** The snapshot seqs in memory (a resumed run: from its oldest record in memory on). */
  get snapshotSeqsInMemory(): readonly number[] {
    return this._snapshotSeqs;
  }

  /** The lists as in memory: holes where a resume point left items out. */
  get listsInMemory(): Readonly<Lists> {
    return this._lists;
  }

  /** See the function pointParts. */
  pointParts(omit: Record<ListField, Omitted>): PointParts | undefined {
    const last = this.lastRecord;
    if (!last) return undefined;
    const seqs = this._snapshotSeqs;
    const firstSeq = seqs.length > 0 ? seqs[seqs.length - 1]! : last.seq;
    if (this.partial && firstSeq < this.partial.firstSeq) return undefined;
    const newest: CheckpointRecord[] = [];
    for (let q = firstSeq; q <= last.seq; q++) newest.push(this.recs.get(q)!);
    const lists = {} as PointParts['lists'];
    for (const f of LIST_FIELDS) {
      const list = this._lists[f];
      const n = list.length;
      let { from, to } = omit[f];
      const held = this.partial?.omitted[f];
      if (held && held.from < held.to) {
        if (from < to) {
          from = Math.min(from, held.from);
          to = Math.max(to, held.to);
        } else ({ from, to } = held);
      }
      if (from >= to) from = to = 0;
      if (to > 0 && to >= n) return undefined; // (the last item must stay: a write compares against it)
      lists[f] = { length: n, head: list.slice(0, from), to, items: list.slice(to) };
    }
    const liveStep = last.step - 1;
    const effects: Effect[] = [];
    const archivedEffects = this.partial ? [...this.partial.archivedEffects] : [];
    for (const e of this._effects.values())
      if (e.result === null || e.process != null || e.step >= liveStep) effects.push(e);
      else archivedEffects.push(e.tool_call_id);
    const approvals: Approval[] = [];
    const archivedApprovals = this.partial ? [...this.partial.archivedApprovals] : [];
    for (const a of this._approvals.values())
      if (a.decision === null || a.step >= liveStep) approvals.push(a);
      else archivedApprovals.push(a.tool_call_id);
    return {
      seq: last.seq,
      state: this.state,
      detail: this.detail,
      stateMs: this.stateMs,
      updatedMs: this.updatedMs,
      lastRewindSeq: this.lastRewindSeq,
      newest,
      snapshotSeqs: seqs.filter((q) => q >= firstSeq),
      lists,
      effects,
      archivedEffects,
      approvals,
      archivedApprovals,
      results: this.results,
      pending: this.pending,
      inbox: [...this.inbox.values()],
      restores: [...this.restores],
      damage: [...this.damage],
    };
  }

  /**
   * A run as a resume point holds it (pointParts): what it left out stays on disk, asked for through
   * NeedsWholeRunError. Throws CommitMismatchError when the parts do not fit together.
   */
  static fromPoint(meta: RunMeta, p: PointParts, file: string): RunModel {
    const bad = (why: string) => new CommitMismatchError(`its resume point ${why}`);
    const m = new RunModel(meta);
    const nat = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0;
    if (!nat(p.seq) || p.seq < 1 || !Array.isArray(p.newest) || p.newest.length === 0) throw bad('holds no checkpoint');
    const firstSeq = p.seq - p.newest.length + 1;
    p.newest.forEach((r, i) => {
      if (!isRecordSkeleton(r) || r.seq !== firstSeq + i || r.run_id !== meta.run_id)
        throw bad(`holds checkpoint ${String((r as { seq?: unknown })?.seq)} where ${firstSeq + i} belongs`);
    });
    const snaps = new Set(p.snapshotSeqs);
    let prev = 0;
    for (const q of p.snapshotSeqs)
      if (!nat(q) || q <= prev || q < firstSeq || q > p.seq) throw bad('lists snapshot seqs out of order');
      else prev = q;
    for (const r of p.newest)
      if (Boolean(r.snapshot) !== snaps.has(r.seq)) throw bad(`and checkpoint ${r.seq} disagree`);
    const omitted = {} as Record<ListField, Omitted>;
    for (const f of LIST_FIELDS) {
      const l = p.lists?.[f];
      if (!l || !nat(l.length) || !nat(l.to) || !Array.isArray(l.head) || !Array.isArray(l.items))
        throw bad(`holds no ${f}`);
      const from = l.head.length;
      if (l.to < from || l.to > l.length || l.items.length !== l.length - l.to || (l.to > from && l.to >= l.length))
        throw bad(`holds ${f} that do not add up`);
      // (checked as a commit's items are: the file's checksum says it is whole, not that it is ours)
      checkItems(f, l.head, p.seq);
      checkItems(f, l.items, p.seq);
      const list: unknown[] = new Array(l.length);
      for (let i = 0; i < from; i++) list[i] = l.head[i];
      for (let i = 0; i < l.items.length; i++) list[l.to + i] = l.items[i];
      m._lists[f] = list;
      omitted[f] = l.to > from ? { from, to: l.to } : { from: 0, to: 0 };
    }
    const ids = (xs: unknown): Set<string> => {
      if (!Array.isArray(xs) || xs.some((x) => typeof x !== 'string')) throw bad('names calls that are not ids');
      return new Set(xs as string[]);
    };
    const archivedEffects = ids(p.archivedEffects);
    const archivedApprovals = ids(p.archivedApprovals);
    const all = <T>(xs: unknown, schema: z.ZodType<T>, what: string): T[] => {
      const ok = fastValid(schema);
      if (!Array.isArray(xs) || !xs.every((x) => ok(x) || schema.safeParse(x).success))
        throw bad(`holds ${what} that do not read`);
      return xs as T[];
    };
    all(p.effects, Effect, 'effect records');
    all(p.approvals, Approval, 'approvals');
    all(p.inbox, InboxMessage, 'messages to the run');
    all(p.restores, RestoreRecord, 'restores');
    all(p.damage, Damage, 'damage records');
    if (!RunState.safeParse(p.state).success) throw bad('holds no run state');
    for (const e of p.effects) {
      if (typeof e?.tool_call_id !== 'string' || archivedEffects.has(e.tool_call_id)) throw bad('holds a call twice');
      m._effects.set(e.tool_call_id, e);
    }
    let pending = 0;
    for (const a of p.approvals) {
      if (typeof a?.tool_call_id !== 'string' || archivedApprovals.has(a.tool_call_id)) throw bad('holds a call twice');
      m._approvals.set(a.tool_call_id, a);
      if (a.decision === null) pending++;
    }
    if (pending !== p.pending || !nat(p.results)) throw bad('counts what it does not hold');
    for (const msg of p.inbox) m.inbox.set(msg.id, msg);
    m.restores.push(...p.restores);
    m.damage.push(...p.damage);
    m.state = p.state;
    m.detail = p.detail;
    m.stateMs = p.stateMs;
    m.updatedMs = p.updatedMs;
    m.lastRewindSeq = p.lastRewindSeq;
    m.results = p.results;
    m.pending = p.pending;
    m._snapshotSeqs.push(...p.snapshotSeqs);
    m.recs.adopt(
      p.seq,
      p.newest,
      file,
      () => {
        throw new NeedsWholeRunError("the run's older checkpoints");
      },
      () => undefined,
    );
    m.partial = { omitted, archivedEffects, archivedApprovals, firstSeq };
    return m;
  }

  /** Every op needed to rebuild this run from nothing (compaction, export). Effects first: tool messages may refer to them. */
  rebuildOps(): CommitOp[] {
    this.needWhole('the whole run');
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

/**
 * What a resume point holds of a run (resumePoint.ts): what going on needs — the newest records
 * from the newest snapshot on, each list's first and newest items, the calls of the last steps and
 * those not finished — and, of the rest, only names and counts. `lists[f]`: items [head.length, to)
 * were left out.
 */
export interface PointParts {
  seq: number;
  state: RunState;
  detail: string | null;
  stateMs: number;
  updatedMs: number;
  lastRewindSeq: number;
  newest: CheckpointRecord[];
  snapshotSeqs: number[];
  lists: Record<ListField, { length: number; head: unknown[]; to: number; items: unknown[] }>;
  effects: Effect[];
  archivedEffects: string[];
  approvals: Approval[];
  archivedApprovals: string[];
  results: number;
  pending: number;
  inbox: InboxMessage[];
  restores: RestoreRecord[];
  damage: Damage[];
}

/**
 * What a run goes on without, as its newest snapshot says: the messages a condense replaced by its
 * summary (the model sees the summary; undo reads the run whole), and the tool executions of the
 * calls before the first whose tool message the model still sees. Never a list's last item (a
 * write compares against it).
 */
export function omittable(model: RunModel): Record<ListField, Omitted> {
  const none = { from: 0, to: 0 };
  const out: Record<ListField, Omitted> = { messages: none, tool_executions: none, subagent_executions: none };
  const last = model.lastRecord;
  const s = last ? newestAtOrBefore(model.snapshotSeqsInMemory, last.seq) : undefined;
  const header = s === undefined ? undefined : model.record(s)?.snapshot;
  if (!header) return out;
  const messages = model.listsInMemory.messages;
  const n = Math.min(header.message_count, messages.length);
  const c = header.model_context?.condense;
  if (!c || !(c.head < c.through)) return out;
  const to = Math.min(c.through, n - 1);
  if (c.head >= to) return out;
  out.messages = { from: c.head, to };
  // The calls whose tool messages the model still sees, and the oldest of their executions.
  const seen = new Set<string>();
  for (let i = to; i < messages.length; i++) {
    const m = messages[i] as { role?: unknown; tool_call_id?: unknown } | undefined;
    if (m?.role === 'tool' && typeof m.tool_call_id === 'string') seen.add(m.tool_call_id);
  }
  const execs = model.listsInMemory.tool_executions;
  let k = execs.length;
  let found = 0;
  for (let i = execs.length - 1; i >= 0 && found < seen.size; i--) {
    const e = execs[i] as { tool_call_id?: unknown } | undefined;
    if (e === undefined) break; // (a hole: what a resume point left out before)
    if (typeof e.tool_call_id === 'string' && seen.has(e.tool_call_id)) {
      k = i;
      found++;
    }
  }
  if (found < seen.size) k = 0; // (not every one found: none is left out)
  out.tool_executions = { from: 0, to: Math.min(k, execs.length - 1) };
  if (out.tool_executions.to <= 0) out.tool_executions = none;
  return out;
}

/**
 * The point parts of `model` as it is now (references to its stored items, which never change):
 * `omit`, widened to what a resumed model already left out. undefined: no point can be made now
 * (a list's last item left out by a rewind, or no snapshot in memory).
 */
export function pointParts(model: RunModel, omit: Record<ListField, Omitted>): PointParts | undefined {
  return model.pointParts(omit);
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

/** A snapshot header's list lengths, by list. */
function listCounts(h: {
  message_count: number;
  tool_execution_count: number;
  subagent_execution_count: number;
}): Record<ListField, number> {
  return {
    messages: h.message_count,
    tool_executions: h.tool_execution_count,
    subagent_executions: h.subagent_execution_count,
  };
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
