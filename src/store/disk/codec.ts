// The compact encoding of a run's commits (encodeOps / decodeOps, exact inverses), whatever file
// holds them (a segment frame, a snapshot, a PostgreSQL row), and peekLost for damaged ones.
import { isJsonObject, jsonEqual } from '../../common/json';
import { LostCall, RunState, type Effect, type RunMeta } from '../api/schema';
import type { CommitOp } from '../core/storedSchema';
import { merged } from '../core/copy';

/**
 * What the encoder and decoder carry from one commit to the next. Decoding is the exact inverse of
 * encoding, op by op, in log order; a commit that does not decode against the log before it is bad.
 */
export interface Codec {
  /** Effect outputs: a tool message with the same content is written as a reference. */
  outputs: Map<string, string>;
  /** The previous snapshot header: a header is written as its difference from it. */
  header: Record<string, unknown> | null;
  /** The last effect record of each call, field by field: a call's result is written as its difference from its intent. */
  effects: Map<string, EffectFields>;
  /** The last payload of each phase: a payload is written as its difference from it. */
  payloads: Map<string, Readonly<Record<string, unknown>>>;
  /** The last record's timestamp: a record's is written as the time since it. */
  timestamp: number | null;
}

/** An effect record as it was written (encoding) or read (decoding); never changed after. */
type EffectFields = Readonly<Record<string, unknown>>;

export const newCodec = (): Codec => ({
  outputs: new Map(),
  header: null,
  effects: new Map(),
  payloads: new Map(),
  timestamp: null,
});

/** What one commit changes in the codec; applied with `advance` once the commit is accepted. */
export interface CodecDelta {
  outputs: Map<string, string>;
  header: Record<string, unknown> | null;
  effects: Map<string, EffectFields>;
  payloads: Map<string, Readonly<Record<string, unknown>>>;
  timestamp: number | null;
}

const startDelta = (c: Codec): CodecDelta => ({
  outputs: new Map(),
  header: c.header,
  effects: new Map(),
  payloads: new Map(),
  timestamp: c.timestamp,
});
const output = (c: Codec, d: CodecDelta, id: string) => d.outputs.get(id) ?? c.outputs.get(id);
const effectOf = (c: Codec, d: CodecDelta, id: string) => d.effects.get(id) ?? c.effects.get(id);

/** Moves the codec past an accepted commit (in place: a run's codec is only ever moved forward). */
export function advance(c: Codec, d: CodecDelta): Codec {
  for (const [k, v] of d.outputs) c.outputs.set(k, v);
  for (const [k, v] of d.effects) c.effects.set(k, v);
  for (const [k, v] of d.payloads) c.payloads.set(k, v);
  c.header = d.header;
  c.timestamp = d.timestamp;
  return c;
}

const REF = '$effect_output';
const SAME = '$same_as_previous';
const LAST = '$last_message';
/** In a header's difference: fields (plain objects) written as the keys that changed in them, by field. */
const CHANGED_IN = '$changed_in';
/** An effect record written as the fields that differ from the call's previous record (its intent). */
const DELTA_OF = '$delta_of';
/** A record's payload written as the keys that differ from the previous payload of its phase. */
const PAYLOAD_CHANGED = '$payload_changed';
/** A record's timestamp written as the milliseconds since the previous record's. */
const DT = '$dt';
/** A tool execution item written as what its call's effect record does not already say. */
const EFFECT = '$effect';
/** The record schema_version every record of this format has (left out of each record). */
const RECORD_VERSION = 2;
const eq = jsonEqual;

/**
 * The space optimisations of the log format, so a checkpoint costs what it adds:
 *  - a tool message whose content equals its effect's recorded output refers to it;
 *  - a snapshot header lists only the fields that changed since the previous header;
 *  - a pending LLM response whose message is the messages list's last item refers to it;
 *  - run_id, thread_id and parent are left out when they are what the position implies;
 *  - a call's result is written as its difference from its intent (`$delta_of`), an effect's run_id
 *    and usual idempotency key left out;
 *  - a header field that is an object keeping its keys as the keys that changed in it (`$changed_in`);
 *  - a payload as its difference from the previous payload of its phase (`$payload_changed`), a
 *    timestamp as the time since the previous record's (`$dt`), schema_version 2 and a null
 *    snapshot left out;
 *  - a tool execution item as what its call's effect record does not already say (`$effect`).
 * Never mutates `ops`; returns the codec change to `advance` by once the commit is on disk.
 */
export function encodeOps(ops: readonly CommitOp[], codec: Codec, meta: RunMeta): { ops: unknown[]; next: CodecDelta } {
  const next = startDelta(codec);
  const out: unknown[] = [];
  for (const op of ops) {
    if (op.op === 'effect') {
      if (op.effect.result) next.outputs.set(op.effect.tool_call_id, op.effect.result.output);
      out.push({ op: 'effect', effect: encodeEffect(op.effect, codec, next, meta) });
      continue;
    }
    if (op.op !== 'record') {
      out.push(op);
      continue;
    }
    const { run_id, thread_id, parent, snapshot, schema_version, payload, timestamp_ms, ...rest } = op.record;
    const record: Record<string, unknown> = {};
    if (schema_version !== RECORD_VERSION) record.schema_version = schema_version;
    Object.assign(record, rest);
    if (run_id !== meta.run_id) record.run_id = run_id;
    if (thread_id !== meta.thread_id) record.thread_id = thread_id;
    if (!eq(parent, impliedParent(meta, op.record.seq))) record.parent = parent;
    // (mirrors the decoder exactly: only a number moves the codec's clock)
    if (
      next.timestamp !== null &&
      Number.isSafeInteger(timestamp_ms) &&
      Number.isSafeInteger(timestamp_ms - next.timestamp)
    )
      record[DT] = timestamp_ms - next.timestamp;
    else record.timestamp_ms = timestamp_ms;
    if (typeof timestamp_ms === 'number') next.timestamp = timestamp_ms;
    const phase = op.record.phase;
    const prevPayload = phase === 'run_terminal' ? undefined : (next.payloads.get(phase) ?? codec.payloads.get(phase));
    const part = prevPayload ? changedFields(payload, prevPayload, true) : null;
    if (part) record[PAYLOAD_CHANGED] = part;
    else record.payload = payload;
    if (isJsonObject(payload)) next.payloads.set(phase, payload);
    let lists = op.lists;
    const tail = lists?.messages;
    if (tail)
      lists = {
        ...lists,
        messages: {
          base: tail.base,
          items: tail.items.map((item) => refOutput(item, (id) => output(codec, next, id))),
        },
      };
    const execs = lists?.tool_executions;
    if (execs)
      lists = {
        ...lists,
        tool_executions: { base: execs.base, items: execs.items.map((item) => refEffect(item, codec, next)) },
      };
    if (snapshot) {
      const h: Record<string, unknown> = { ...snapshot };
      const lastItem = tail?.items[tail.items.length - 1];
      if (
        snapshot.pending_llm_response &&
        lastItem !== undefined &&
        tail!.base + tail!.items.length === snapshot.message_count &&
        eq(snapshot.pending_llm_response.message, lastItem)
      ) {
        h.pending_llm_response = { ...snapshot.pending_llm_response, message: LAST };
      }
      record.snapshot = diffHeader(h, next.header);
      next.header = h;
    } // no snapshot: the field is left out (read back as null)
    out.push(lists ? { op: 'record', record, lists } : { op: 'record', record });
  }
  return { ops: out, next };
}

/**
 * An effect record as written: `run_id` left out when it is the run's, and `idempotency_key` when
 * it is the one the run gives every call (`run/step/call`); a record of a call already in the log
 * (its result after its intent) as the fields that differ from the previous one, when it dropped
 * none of them — `{"$delta_of": call id, …changed}`.
 */
function encodeEffect(e: Effect, codec: Codec, next: CodecDelta, meta: RunMeta): Record<string, unknown> {
  const prev = effectOf(codec, next, e.tool_call_id);
  next.effects.set(e.tool_call_id, e);
  const changed = prev ? changedFields(e, prev) : null;
  if (changed) {
    changed[DELTA_OF] = e.tool_call_id;
    return changed;
  }
  const { run_id, idempotency_key, ...rest } = e;
  const out: Record<string, unknown> = {};
  if (run_id !== meta.run_id) out.run_id = run_id;
  Object.assign(out, rest);
  if (idempotency_key !== impliedKey(meta, e)) out.idempotency_key = idempotency_key;
  return out;
}

const impliedKey = (meta: RunMeta, e: { step: number; tool_call_id: string }) =>
  `${meta.run_id}/${e.step}/${e.tool_call_id}`;

/**
 * The fields of `next` that differ from `prev`'s, when `next` kept every field of `prev` and some
 * kept their value (else null: written whole). Read back as `{...prev, ...changed}`.
 */
function changedFields(
  next: Readonly<Record<string, unknown>>,
  prev: Readonly<Record<string, unknown>>,
  ordered = false,
): Record<string, unknown> | null {
  const before = Object.keys(prev);
  const keys = Object.keys(next);
  if (!before.every((k) => Object.hasOwn(next, k))) return null;
  // `ordered`: read back, prev's keys come first and the new ones after — only when `next` has them
  // so does the copy read back keep its key order (a payload's, which a checksum of its JSON sees).
  if (ordered && !before.every((k, i) => keys[i] === k)) return null;
  const part = Object.create(null) as Record<string, unknown>; // a "__proto__" key stays a key
  let n = 0;
  for (const k of keys)
    if (!Object.hasOwn(prev, k) || !eq(next[k], prev[k])) {
      part[k] = next[k];
      n++;
    }
  return n < keys.length ? part : null;
}

/** What a tool execution item takes from its call's effect record (when they agree on all of it). */
const FROM_EFFECT = ['tool_call_id', 'tool_name', 'step', 'input_hash', 'output_hash', 'is_error'] as const;

function fromEffect(e: EffectFields): Record<string, unknown> | null {
  const r = e.result as { output_hash?: unknown; is_error?: unknown } | null | undefined;
  if (!isJsonObject(r)) return null;
  return {
    tool_call_id: e.tool_call_id,
    tool_name: e.tool_name,
    step: e.step,
    input_hash: e.input_hash,
    output_hash: r.output_hash,
    is_error: r.is_error,
  };
}

/** A tool execution item of a call with a finished effect record: `{"$effect": call id, …the rest}`. */
function refEffect(item: unknown, codec: Codec, next: CodecDelta): unknown {
  if (!isJsonObject(item) || typeof item.tool_call_id !== 'string') return item;
  const e = effectOf(codec, next, item.tool_call_id);
  const from = e ? fromEffect(e) : null;
  if (!from || FROM_EFFECT.some((k) => !Object.hasOwn(item, k) || from[k] !== item[k])) return item;
  const out = Object.create(null) as Record<string, unknown>;
  out[EFFECT] = item.tool_call_id;
  for (const [k, v] of Object.entries(item)) if (!(FROM_EFFECT as readonly string[]).includes(k)) out[k] = v;
  return out;
}

function refOutput(item: unknown, outputOf: (id: string) => string | undefined): unknown {
  const m = item as { role?: unknown; tool_call_id?: unknown; content?: unknown };
  if (m.role !== 'tool' || typeof m.tool_call_id !== 'string' || typeof m.content !== 'string' || m.content.length < 64)
    return item;
  if (outputOf(m.tool_call_id) !== m.content) return item;
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, k === 'content' ? { [REF]: m.tool_call_id } : v]));
}

/**
 * A header as its difference from the previous one: the fields that changed, and a plain-object field
 * that kept its keys in order (the run context, whose `active_ms` moves every checkpoint) as the keys
 * that changed in it, under `$changed_in`.
 */
function diffHeader(h: Record<string, unknown>, prev: Record<string, unknown> | null): Record<string, unknown> {
  if (!prev) return h;
  // (read back as prev's keys, then the new ones: a key new to the header, before others, is written whole)
  const keys = Object.keys(h);
  const before = Object.keys(prev);
  if (keys.length < before.length || !before.every((k, i) => keys[i] === k)) return h;
  const changed: Record<string, unknown> = { [SAME]: true };
  let inner: Record<string, Record<string, unknown>> | null = null;
  for (const k of Object.keys(h)) {
    if (k in prev && eq(h[k], prev[k])) continue;
    const part = k in prev ? changedKeys(h[k], prev[k]) : null;
    if (part) (inner ??= {})[k] = part;
    else changed[k] = h[k];
  }
  if (inner) changed[CHANGED_IN] = inner;
  return changed;
}

/** The keys of `next` whose values differ from `prev`'s, when both are objects with the same keys in the same order and some kept their value. */
function changedKeys(next: unknown, prev: unknown): Record<string, unknown> | null {
  if (!isJsonObject(next) || !isJsonObject(prev)) return null;
  const keys = Object.keys(next);
  const before = Object.keys(prev);
  if (keys.length !== before.length || keys.some((k, i) => k !== before[i])) return null;
  return changedFields(next, prev);
}

const impliedParent = (meta: RunMeta, seq: number) =>
  seq > 1 ? { run_id: meta.run_id, seq: seq - 1 } : meta.forked_from;

/**
 * The inverse of encodeOps, in place (the ops were just parsed from disk). Returns the codec change
 * to `advance` by once the commit is accepted; throws if a reference dangles (the commit is bad).
 */
export function decodeOps(ops: unknown[], codec: Codec, meta: RunMeta): CodecDelta {
  const next = startDelta(codec);
  for (const raw of ops) {
    const op = raw as {
      op?: string;
      effect?: { tool_call_id: string; result: { output: string } | null };
      record?: Record<string, unknown>;
      lists?: { messages?: { base: number; items: unknown[] }; tool_executions?: { base: number; items: unknown[] } };
    };
    if (op.op === 'effect' && isJsonObject(op.effect)) {
      const e = decodeEffect(op.effect, codec, next, meta);
      op.effect = e as typeof op.effect;
      if (isJsonObject(e.result) && typeof e.tool_call_id === 'string' && typeof e.result.output === 'string')
        next.outputs.set(e.tool_call_id, e.result.output);
      continue;
    }
    if (op.op !== 'record' || !op.record || typeof op.record !== 'object') continue;
    const r = op.record;
    const items = op.lists?.messages?.items ?? [];
    if (op.lists) decodeLists(op.lists, codec, next);
    const seq = r.seq as number;
    let timestamp = r.timestamp_ms;
    if (DT in r) {
      const dt = r[DT];
      if (typeof dt !== 'number' || next.timestamp === null)
        throw new Error(`checkpoint ${seq} gives its time since a previous record the log does not have`);
      timestamp = next.timestamp + dt;
    }
    if (typeof timestamp === 'number') next.timestamp = timestamp;
    const phase = String(r.phase);
    let payload = r.payload;
    if (PAYLOAD_CHANGED in r) {
      const part = r[PAYLOAD_CHANGED];
      const prev = next.payloads.get(phase) ?? codec.payloads.get(phase);
      if (!isJsonObject(part) || !prev)
        throw new Error(`checkpoint ${seq} lists what changed in a ${phase} payload the log does not have`);
      payload = { ...prev, ...part };
    }
    if (isJsonObject(payload)) next.payloads.set(phase, payload);
    // Left out: null. Anything else not an object stays as it is, for the schema to refuse.
    let snapshot: unknown = r.snapshot === undefined ? null : r.snapshot;
    const h = r.snapshot as Record<string, unknown> | null | undefined;
    if (isJsonObject(h)) {
      let full: Record<string, unknown> = h;
      if (h[SAME] === true) {
        const prev = next.header;
        if (!prev)
          throw new Error(`checkpoint ${seq} lists what changed since a previous snapshot the log does not have`);
        const { [SAME]: _, [CHANGED_IN]: inner, ...changed } = h;
        full = { ...prev, ...changed };
        if (inner !== undefined) {
          if (!isJsonObject(inner)) throw new Error(`checkpoint ${seq} lists changed fields that are not an object`);
          for (const [k, part] of Object.entries(inner)) {
            if (!isJsonObject(part) || !isJsonObject(prev[k]) || k in changed)
              throw new Error(`checkpoint ${seq} lists changes in ${k}, which the previous snapshot has no object for`);
            full[k] = { ...prev[k], ...part };
          }
        }
      }
      next.header = full;
      const pending = full.pending_llm_response as Record<string, unknown> | null | undefined;
      if (pending && pending.message === LAST) {
        if (items.length === 0)
          throw new Error(`the pending response of checkpoint ${seq} refers to a message the log does not have`);
        full = { ...full, pending_llm_response: { ...pending, message: items[items.length - 1] } };
      }
      snapshot = full;
    }
    // A fresh record of one shape (what the position implies put back, the encoding's keys gone): the
    // checks and the model that read thousands of them stay on V8's fast path.
    const record: Record<string, unknown> = {
      run_id: r.run_id ?? meta.run_id,
      thread_id: r.thread_id ?? meta.thread_id,
      schema_version: r.schema_version ?? RECORD_VERSION,
      phase: r.phase,
      seq: r.seq,
      parent: 'parent' in r ? r.parent : impliedParent(meta, seq),
      timestamp_ms: timestamp,
      step: r.step,
      payload,
      snapshot,
    };
    for (const k of Object.keys(r)) if (!(k in record) && k !== DT && k !== PAYLOAD_CHANGED) record[k] = r[k];
    op.record = record;
  }
  return next;
}

/**
 * A record's list tails decoded in place (the inverse of refOutput and refEffect): a tool message's
 * content and a tool execution's fields put back from the effects the codec knows. Already decoded
 * tails are left as they are. Throws if a reference dangles.
 */
export function decodeLists(
  lists: { messages?: { items: unknown[] }; tool_executions?: { items: unknown[] } },
  codec: Codec,
  next: CodecDelta,
): void {
  const items = lists.messages?.items;
  if (Array.isArray(items))
    for (const item of items) {
      const m = item as { content?: unknown };
      const ref =
        typeof m.content === 'object' && m.content !== null ? (m.content as Record<string, unknown>)[REF] : undefined;
      if (typeof ref !== 'string') continue;
      const out = output(codec, next, ref);
      if (out === undefined)
        throw new Error(`a tool message refers to the output of effect ${ref}, which is not in the log`);
      m.content = out;
    }
  const execs = lists.tool_executions?.items;
  if (Array.isArray(execs))
    for (let i = 0; i < execs.length; i++) {
      const item = execs[i] as Record<string, unknown> | null;
      if (!isJsonObject(item) || !(EFFECT in item)) continue;
      const id = item[EFFECT];
      const e = typeof id === 'string' ? effectOf(codec, next, id) : undefined;
      const from = e ? fromEffect(e) : null;
      if (!from)
        throw new Error(`a tool execution refers to the effect of call ${String(id)}, which the log does not have`);
      const { [EFFECT]: _, ...rest } = item;
      execs[i] = merged(from, rest); // (not a spread: its keys are new to `from`'s, see merged)
    }
}

/** The inverse of encodeEffect: a difference merged over the call's previous record, implied fields put back. */
function decodeEffect(
  raw: Record<string, unknown>,
  codec: Codec,
  next: CodecDelta,
  meta: RunMeta,
): Record<string, unknown> {
  let e: Record<string, unknown>;
  const of = raw[DELTA_OF];
  if (of !== undefined) {
    const prev = typeof of === 'string' ? effectOf(codec, next, of) : undefined;
    if (!prev)
      throw new Error(`an effect record lists what changed since a record of call ${String(of)} the log does not have`);
    const { [DELTA_OF]: _, ...changed } = raw;
    e = { ...prev, ...changed };
  } else {
    // In place (just parsed): what the run implies put back.
    e = raw;
    e.run_id ??= meta.run_id;
    if (!('idempotency_key' in e) && typeof e.step === 'number' && typeof e.tool_call_id === 'string')
      e.idempotency_key = impliedKey(meta, { step: e.step, tool_call_id: e.tool_call_id });
  }
  if (typeof e.tool_call_id === 'string') next.effects.set(e.tool_call_id, e);
  return e;
}

/** What a lost commit file held, as far as it can still be read (for the corruption report). */
export interface PeekedCommit {
  seqs: number[];
  effects: boolean;
  /** Effect records it held (the calls that were started, and whether they finished). */
  calls: LostCall[];
  /** The state its run_terminal record gave, if it held one. */
  terminal: RunState | null;
  maxStep: number;
}

/**
 * Reads a lost commit file without trusting it: its checksum may have failed. Only a body that says
 * it belongs to `runId` is used (a file copied from another run says nothing about this one).
 */
export function peekLost(text: string, runId: string): PeekedCommit | null {
  const start = text.indexOf('"body":');
  if (start < 0) return null;
  try {
    return peekBody(
      JSON.parse(
        text
          .slice(start + 7)
          .trimEnd()
          .replace(/}$/, ''),
      ),
      runId,
    );
  } catch {
    return null;
  }
}

/** The calls a peek knows (the good part's, then each lost commit's in turn): a lost result written as a difference is read against them. */
export const peekCalls = (codec: Codec): Map<string, EffectFields> => new Map(codec.effects);

/**
 * The same, for a commit body already parsed (a segment frame that checked out, after the one that
 * did not). `calls` carries the effect records known so far from one lost commit to the next.
 */
export function peekBody(
  value: unknown,
  runId: string,
  calls: Map<string, EffectFields> = new Map(),
): PeekedCommit | null {
  const body = value as { run_id?: unknown; ops?: unknown } | null;
  if (typeof body !== 'object' || body === null || body.run_id !== runId || !Array.isArray(body.ops)) return null;
  const out: PeekedCommit = { seqs: [], effects: false, calls: [], terminal: null, maxStep: 0 };
  for (const o of body.ops as ({
    op?: unknown;
    record?: Record<string, unknown>;
    effect?: Record<string, unknown>;
  } | null)[]) {
    if (o?.op === 'record' && typeof o.record?.seq === 'number') {
      out.seqs.push(o.record.seq);
      if (typeof o.record.step === 'number') out.maxStep = Math.max(out.maxStep, o.record.step);
      const state = RunState.safeParse((o.record.payload as { state?: unknown } | undefined)?.state);
      if (o.record.phase === 'run_terminal' && state.success) out.terminal = state.data;
    }
    if (o?.op === 'effect' && o.effect) {
      out.effects = true;
      const of = o.effect[DELTA_OF];
      const { [DELTA_OF]: _, ...fields } = o.effect;
      const e = typeof of === 'string' ? { ...calls.get(of), ...fields } : fields;
      if (typeof e.tool_call_id === 'string') calls.set(e.tool_call_id, e);
      const call = LostCall.safeParse({ ...e, finished: e.result != null });
      // A withdrawal says the call never started: no call the lost part shows was made (unless it shows a result or a process).
      if (call.success && (e.withdrawn_ms === undefined || e.result != null || e.process != null))
        out.calls.push(call.data);
    }
  }
  return out;
}
