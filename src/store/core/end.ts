// The end of a run (schema.ts RunEnd): what a view of its newest checkpoints needs — the newest
// records, the latest snapshot from the messages they added on, the effects and approvals of those
// calls — computed from a run in memory, and kept by each compaction so a run nobody has read yet
// can be shown without reading its whole log (a small part of a long run's snapshot).
import { RunEnd, type ChatMessage, type CheckpointRecord, type Effect } from '../api/schema';
import { parseFast } from './fastValid';
import type { RunModel } from './runModel';

/** The newest records a compaction keeps with the run's end: what the run view's first read asks for. */
export const END_RECORDS = 200;
/** Runs from this many checkpoints on keep their end (shorter ones are read whole quickly; the end would be much of them). */
export const KEEP_END_FROM = 5 * END_RECORDS;

/** What a compaction of the run keeps of its end: its end when the run is long enough (`from` checkpoints). */
export function endToKeep(m: RunModel, from: number): RunEnd | undefined {
  return m.lastSeq >= from ? computeEnd(m, END_RECORDS) : undefined;
}

/** The run's end with its newest `n` records (internal references: copy before handing out). */
export function computeEnd(m: RunModel, n: number): RunEnd {
  const last = m.lastSeq;
  const records: CheckpointRecord[] = [];
  for (let s = Math.max(1, last - n + 1); s <= last; s++) records.push(m.verified(s)!);
  return endOf({
    records,
    snapshot: m.verifiedSnapshotAt(last)?.snapshot ?? null,
    from: 0,
    approvals: [...m.approvals.values()],
    effects: [...m.effects.values()],
    inbox: [...m.inbox.values()],
    restores: [...m.restores],
    record: (seq) => m.verified(seq),
  });
}

/**
 * A kept end, checked: its schema, its run, its records in order, the checkpoints its restores went
 * back to. `n`: how many records are asked for (fewer than it holds: exactly what computeEnd gives for
 * the newest `n`). null: not usable — the caller reads the run whole.
 */
export function checkedEnd(raw: unknown, runId: string, n: number): RunEnd | null {
  const r = parseFast(RunEnd, raw);
  if (!r.success) return null;
  const end = r.data;
  const { records } = end;
  if (records.some((r, i) => r.run_id !== runId || (i > 0 && r.seq !== records[i - 1]!.seq + 1))) return null;
  if (records.length < n && records[0]?.seq !== 1) return null; // asks for more than was kept
  const known = new Map([...end.restore_targets, ...records].map((r) => [r.seq, r]));
  const out = endOf({
    records: records.slice(-n),
    snapshot: end.snapshot,
    from: end.messages_from,
    approvals: end.approvals,
    effects: end.effects,
    inbox: end.inbox,
    restores: end.restores,
    record: (seq) => known.get(seq),
  });
  const oldest = out.records[0]?.seq ?? 1;
  const targets = new Set(out.restores.map((r) => r.to_seq).filter((seq) => seq < oldest));
  return out.restore_targets.length === targets.size ? out : null; // else a restore went back to one not kept
}

/** The end of these records, from a snapshot whose messages start at `from` and what it may keep of the rest. */
function endOf(o: {
  records: CheckpointRecord[];
  snapshot: RunEnd['snapshot'];
  from: number;
  approvals: RunEnd['approvals'];
  effects: RunEnd['effects'];
  inbox: RunEnd['inbox'];
  restores: RunEnd['restores'];
  record(seq: number): CheckpointRecord | undefined;
}): RunEnd {
  const s = o.snapshot;
  const from = s ? Math.max(o.from, messagesFrom(o.records, o.from + s.messages.length)) : 0;
  const messages = s ? s.messages.slice(from - o.from) : [];
  const calls = callsOf(messages);
  const horizon = newestThatChangedFiles(o.effects);
  const oldest = o.records[0]?.seq ?? 1;
  const targets = [...new Set(o.restores.map((r) => r.to_seq).filter((seq) => seq < oldest))].sort((a, b) => a - b);
  return {
    records: o.records,
    restore_targets: targets.flatMap((seq) => o.record(seq) ?? []),
    snapshot: s && {
      ...s,
      messages,
      tool_executions: s.tool_executions.filter((e) => calls.has(e.tool_call_id)),
      subagent_executions: s.subagent_executions.filter((e) => calls.has(e.tool_call_id)),
    },
    messages_from: from,
    approvals: o.approvals.filter((a) => calls.has(a.tool_call_id) || a.decision === null),
    effects: o.effects.filter((e) => calls.has(e.tool_call_id) || e === horizon),
    inbox: o.inbox,
    restores: o.restores,
  };
}

/** Where the records' messages start: the assistant message before the oldest count among them. */
function messagesFrom(records: readonly CheckpointRecord[], total: number): number {
  let min = total;
  for (const r of records) if (r.snapshot) min = Math.min(min, r.snapshot.message_count);
  return Math.max(0, min - 1);
}

function callsOf(messages: readonly ChatMessage[]): Set<string> {
  const out = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) out.add(c.id);
    if (m.role === 'tool') out.add(m.tool_call_id);
  }
  return out;
}

/** Where a restore of the run's files can start (actions/restore/plan.ts lastJournaledSeq): its newest effect that changed files. */
function newestThatChangedFiles(effects: readonly Effect[]): Effect | undefined {
  let best: Effect | undefined;
  for (const e of effects)
    if (
      e.checkpoint_seq !== undefined &&
      (e.files?.length ?? 0) > 0 &&
      e.checkpoint_seq >= (best?.checkpoint_seq ?? -1)
    )
      best = e;
  return best;
}
