// Input validation shared by both backends, and the write-cost rule: an append validates and
// copies only what is new (the snapshot header and the new tails of its lists), never the history.
import type { z } from 'zod';
import { setOwn, toJsonData } from './copy';
import { isExactly, jsonEqual } from '../../common/json';
import { parseFast } from './fastValid';
import { InvalidInputError, InvalidKeyError } from '../api/errors';
import type { RunModel } from './runModel';
import {
  LIST_FIELDS,
  Phase,
  PhasePayloads,
  RunId,
  RuntimeSnapshot,
  SNAPSHOT_PHASES,
  STORE_SCHEMA_VERSION,
  type CheckpointRecord,
  type ListField,
  type SnapshotHeader,
} from '../api/schema';
import { LIST_ITEM, type ListTail, type ListTails, type RecordOp } from './storedSchema';
import type { AppendInput } from '../api/types';

/** Run ids become folder names: validated before any use. */
export function checkRunId(runId: unknown): string {
  const r = parseFast(RunId, runId);
  if (!r.success)
    throw new InvalidKeyError(`Invalid run id ${JSON.stringify(runId)}: ${r.error.issues[0]?.message ?? 'invalid'}`);
  return r.data;
}

/** Whether a folder name is a run id (an activation reads one per run: the fast path, zod only for what it is not sure of). */
export const isRunId = (name: unknown): name is string => parseFast(RunId, name).success;

export function checkBlobHash(hash: unknown): string {
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash))
    throw new InvalidKeyError(`Invalid blob hash ${JSON.stringify(hash)}: 64 lowercase hex digits`);
  return hash;
}

/** Parses a copy of `value` (the caller keeps its object; the store keeps its own). */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const data = toJsonData(value, what);
  // The copy is what zod's parse would return where the fast path vouches for it (fastValid.ts).
  const r = parseFast(schema, data);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new InvalidInputError(
      `${what} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return r.data;
}

const HeaderInput = RuntimeSnapshot.omit({ messages: true, tool_executions: true, subagent_executions: true });
const LIST_KEYS: ReadonlySet<string> = new Set(LIST_FIELDS);

/** The checkpoints that must be on disk before append() resolves (README: durability classes). */
export function isDurableAppend(input: AppendInput): boolean {
  // post_condense holds a summary the model was paid to write: never written twice after a crash.
  if (input.phase === 'run_started' || input.phase === 'run_terminal' || input.phase === 'post_condense') return true;
  return input.phase === 'post_llm' && input.snapshot?.pending_llm_response != null;
}

/** Validates an append against the run and builds its record op (seq = next, tails = what is new). */
export function prepareAppend(model: RunModel, input: AppendInput, now: number): RecordOp {
  const phase = parseInput(Phase, input?.phase, 'phase');
  const step = input.step;
  if (!Number.isInteger(step) || step < 0)
    throw new InvalidInputError(`step must be a non-negative integer, got ${String(step)}`);
  const payload = parseInput(
    PhasePayloads[phase] as z.ZodType<Record<string, unknown>>,
    input.payload,
    `payload of ${phase}`,
  );
  if (SNAPSHOT_PHASES.includes(phase) && !input.snapshot) throw new InvalidInputError(`${phase} needs a snapshot`);
  let header: SnapshotHeader | null = null;
  let lists: ListTails | undefined;
  if (input.snapshot) {
    const snap = input.snapshot as unknown as Record<string, unknown>;
    for (const field of LIST_FIELDS)
      if (!Array.isArray(snap[field])) throw new InvalidInputError(`snapshot.${field} must be an array`);
    // The header is the snapshot without its lists, built key by key (a spread and three deletes made
    // a copy in V8's slow dictionary form, copied again by parseInput and once more to add the counts).
    const rest: Record<string, unknown> = {};
    for (const k of Object.keys(snap)) if (!LIST_KEYS.has(k)) setOwn(rest, k, snap[k]);
    // parseInput's result is the store's own (a fresh copy, or zod's output): the counts go on it.
    const h = parseInput(HeaderInput, rest, 'snapshot') as Record<string, unknown>;
    for (const field of LIST_FIELDS) {
      const tail = computeTail(model, field, snap[field] as unknown[]);
      if (tail) (lists ??= {})[field] = tail;
    }
    h.message_count = (snap.messages as unknown[]).length;
    h.tool_execution_count = (snap.tool_executions as unknown[]).length;
    h.subagent_execution_count = (snap.subagent_executions as unknown[]).length;
    header = h as SnapshotHeader;
  }
  const seq = model.lastSeq + 1;
  const meta = model.meta;
  const record: CheckpointRecord = {
    run_id: meta.run_id,
    thread_id: meta.thread_id,
    schema_version: STORE_SCHEMA_VERSION,
    phase,
    seq,
    parent: seq > 1 ? { run_id: meta.run_id, seq: seq - 1 } : (meta.forked_from ?? meta.continued_from ?? null),
    timestamp_ms: now,
    step,
    payload,
    snapshot: header,
  };
  return lists ? { op: 'record', record, lists } : { op: 'record', record };
}

/**
 * Lists are append-only: usually the caller's list is the stored one plus new items, checked by
 * comparing only the item at the stored boundary (O(item), not O(list)). A list that is shorter
 * or differs at the boundary is a rewind: the tail restarts at the longest common prefix.
 */
function computeTail(model: RunModel, field: ListField, list: unknown[]): ListTail | undefined {
  const n = model.listLength(field);
  let base: number;
  if (list.length >= n && (n === 0 || sameItem(model, field, list, n - 1))) base = n;
  else {
    base = 0;
    for (let j = Math.min(list.length, n) - 1; j >= 0; j--) {
      if (sameItem(model, field, list, j)) {
        base = j + 1;
        break;
      }
    }
  }
  if (base === n && list.length === n) return undefined;
  const items = list.slice(base).map((item, i) => parseInput(LIST_ITEM[field], item, `snapshot.${field}[${base + i}]`));
  return { base, items };
}

/**
 * Whether the caller's item `j` is the stored one, compared as its JSON would be (key order counts).
 * Mostly the caller passes back exactly the item stored: that is seen without copying and checking it.
 * (An item a resume point left on disk: NeedsWholeRunError, and the write is tried again on the whole run.)
 */
function sameItem(model: RunModel, field: ListField, list: unknown[], j: number): boolean {
  const stored = model.storedItem(field, j);
  return (
    isExactly(list[j], stored) || jsonEqual(stored, parseInput(LIST_ITEM[field], list[j], `snapshot.${field}[${j}]`))
  );
}
