// A segment frame's short form: the commit body (commit.ts, RawCommit) with its structure written in
// one-letter keys. A step writes about five checkpoint records, their snapshot headers and
// its calls' effect records, and most of their bytes were the keys' names ("pending_llm_response",
// "$payload_changed", "tool_execution_count" …) — repeated in every frame.
//
//   {"n": commit number, "m": meta (a segment's first commit only), "o": [op, …]}
//   op:  {"R": record, "L": lists}  ·  {"E": effect}  ·  any other op as it is ({"op": …})
//
// The keys of the objects the store itself defines (a record, its snapshot header, its payload, the
// lists' envelopes, an effect and its result, usage, a pending response) become one uppercase letter
// each (SHAPES: the position in a fixed list, append-only). Everything else is written as it is: the
// messages and tool execution items (content), the run context, a payload's values, keys not in the
// lists. Our schemas' keys are snake_case, so a written key that is one uppercase letter is a short
// one; a commit holding such a key of its own (a payload from elsewhere) is written in the long form
// ({"run_id", "first", "last", "ops"}), which a segment reads as well.
//
// Within a frame a record's seq and step are left out when they follow the record before it (seq + 1,
// the same step), and an effect intent's step and checkpoint_seq when they are that record's.
//
// What binds a frame to its run is its checksum: a commit frame's crc32 continues from the run id's
// (frame.ts, frameKey), so a frame copied from another run's log fails it, as a damaged one does.
import { isJsonObject } from '../../common/json';
import { setOwn } from '../core/copy';

interface Shape {
  keys: readonly string[];
  children?: Readonly<Record<string, Shape>>;
}

interface Compiled {
  toShort: ReadonlyMap<string, string>;
  toLong: ReadonlyMap<string, string>;
  children: ReadonlyMap<string, Compiled>;
}

const USAGE: Shape = {
  keys: ['input_tokens', 'output_tokens', 'total_tokens', 'cached_tokens', 'reasoning_tokens', 'estimated'],
};
const PENDING: Shape = {
  keys: ['id', 'model', 'finish_reason', 'message', 'usage', 'received_ms', 'tools_seen'],
  children: { usage: USAGE },
};
const CONTEXT_SIZE: Shape = { keys: ['tokens', 'window', 'window_source', 'estimated'] };
const HEADER_KEYS = [
  '$same_as_previous',
  '$changed_in',
  'step',
  'state',
  'context',
  'llm_calls',
  'tool_calls',
  'started_at_s',
  'usage',
  'total_cost_usd',
  'session_token',
  'checkpoint_token',
  'pending_llm_response',
  'requested_model',
  'normalized_model',
  'provider_adapter',
  'final_text',
  'final_structured',
  'replayed_effect_count',
  'model_context',
  'message_count',
  'tool_execution_count',
  'subagent_execution_count',
] as const;
const HEADER_FIELDS: Shape = { keys: HEADER_KEYS, children: { usage: USAGE, pending_llm_response: PENDING } };
/** A header: its fields, and under `$changed_in` the keys that changed in its object fields. */
const HEADER: Shape = { keys: HEADER_KEYS, children: { ...HEADER_FIELDS.children, $changed_in: HEADER_FIELDS } };
const PAYLOAD: Shape = {
  keys: [
    'message_count',
    'state',
    'model',
    'provider',
    'context',
    'finish_reason',
    'tool_call_count',
    'session_token',
    'checkpoint_token',
    'total_cost_usd',
    'usage',
    'cost_usd',
    'tool_calls_total',
    'tool_failures',
    'subagent_count',
    'subagents_total',
    'subagent_failures',
  ],
  children: { usage: USAGE, context: CONTEXT_SIZE },
};
const RECORD: Shape = {
  keys: [
    'phase',
    'seq',
    'step',
    '$dt',
    'timestamp_ms',
    'payload',
    '$payload_changed',
    'snapshot',
    'schema_version',
    'run_id',
    'thread_id',
    'parent',
  ],
  children: { payload: PAYLOAD, $payload_changed: PAYLOAD, snapshot: HEADER },
};
const LIST: Shape = { keys: ['base', 'items'] };
const LISTS: Shape = {
  keys: ['messages', 'tool_executions', 'subagent_executions'],
  children: { messages: LIST, tool_executions: LIST, subagent_executions: LIST },
};
const RESULT: Shape = { keys: ['output', 'output_hash', 'is_error', 'blob', 'raw_blob', 'finished_ms'] };
const EFFECT: Shape = {
  keys: [
    '$delta_of',
    'tool_call_id',
    'step',
    'tool_name',
    'input_hash',
    'side_effecting',
    'intent_ms',
    'result',
    'checkpoint_seq',
    'idempotency_key',
    'run_id',
    'process',
    'files',
    'file_scan',
    'withdrawn_ms',
  ],
  children: { result: RESULT },
};
/** Phases written as their position here (append-only); a phase not listed stays a string. */
const PHASE_CODES = [
  'run_started',
  'step_started',
  'pre_llm',
  'post_llm',
  'pre_tool_batch',
  'post_tool_batch',
  'pre_subagent_batch',
  'post_subagent_batch',
  'pre_condense',
  'post_condense',
  'run_terminal',
] as const;
const PHASE_OF = new Map<string, number>(PHASE_CODES.map((p, i) => [p, i]));

const SHORT_KEY = /^[A-Z]$/;

function compile(s: Shape, seen = new Map<Shape, Compiled>()): Compiled {
  const done = seen.get(s);
  if (done) return done;
  if (s.keys.length > 26) throw new Error('a shape has more keys than letters');
  const toShort = new Map(s.keys.map((k, i) => [k, String.fromCharCode(65 + i)]));
  const children = new Map<string, Compiled>();
  const c: Compiled = { toShort, toLong: new Map([...toShort].map(([k, v]) => [v, k])), children };
  seen.set(s, c);
  for (const [k, child] of Object.entries(s.children ?? {})) children.set(k, compile(child, seen));
  return c;
}

const C = { record: compile(RECORD), lists: compile(LISTS), effect: compile(EFFECT) };

/** A key of the caller's that would read as a short one: the commit is written in the long form. */
class KeyClash extends Error {}

/** Left out of the short form (members' `edit`). */
const OMIT = Symbol('omit');

/**
 * The members of `v` in short keys, as JSON text without the braces ('' when none): what
 * JSON.stringify gives for `v` with its keys renamed, written as `v` is walked — a step's commits are
 * not built a second time as objects only to be serialised. `edit` may give a member another value,
 * or OMIT it.
 */
function members(v: Record<string, unknown>, c: Compiled, edit?: (k: string, x: unknown) => unknown): string {
  let s = '';
  for (const k of Object.keys(v)) {
    const x = edit ? edit(k, v[k]) : v[k];
    if (x === OMIT) continue;
    const t = member(c, k, x);
    if (t !== '') s = s === '' ? t : `${s},${t}`;
  }
  return s;
}

/** `"key":value` in short keys; '' for a member JSON leaves out (an undefined one). */
function member(c: Compiled, k: string, x: unknown): string {
  const short = c.toShort.get(k);
  if (short === undefined && SHORT_KEY.test(k)) throw new KeyClash(k);
  const child = c.children.get(k);
  const t = child ? shortJsonOf(x, child) : (JSON.stringify(x) as string | undefined);
  if (t === undefined) return '';
  return `${short === undefined ? JSON.stringify(k) : `"${short}"`}:${t}`;
}

/** `v` in short keys, as JSON text (undefined where JSON.stringify gives none). */
function shortJsonOf(v: unknown, c: Compiled): string | undefined {
  return isJsonObject(v) ? `{${members(v, c)}}` : (JSON.stringify(v) as string | undefined);
}

function lengthen(v: unknown, c: Compiled): unknown {
  if (!isJsonObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const long = SHORT_KEY.test(k) ? c.toLong.get(k) : k;
    if (long === undefined) throw new Error(`unknown short key "${k}"`);
    const child = c.children.get(long);
    setOwn(out, long, child ? lengthen(v[k], child) : v[k]);
  }
  return out;
}

const onlyKeys = (o: object, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));

interface Prev {
  seq: number;
  step: number;
}

/**
 * The short form of a commit body (run_id, first = last, meta?, ops — as the segment writes it), as
 * its JSON text, or null when it holds a key of its own that would read as a short one (written long,
 * then).
 */
export function shortJson(first: number, meta: unknown, ops: readonly unknown[]): string | null {
  try {
    let o = '';
    let prev: Prev | null = null;
    for (const op of ops) {
      if (!isJsonObject(op) || !('op' in op)) return null; // (no valid commit has one: kept exact)
      const x = op as { op?: unknown; record?: Record<string, unknown>; lists?: unknown; effect?: unknown };
      let t: string;
      if (x.op === 'record' && isJsonObject(x.record) && onlyKeys(x, ['op', 'record', 'lists'])) {
        const r = x.record;
        const { seq, step, phase } = r;
        if (!('seq' in r) || !('step' in r)) return null; // (an absent one reads as implied: kept exact)
        const impliedSeq = prev !== null && seq === prev.seq + 1;
        const impliedStep = prev !== null && step === prev.step;
        const code = typeof phase === 'string' ? PHASE_OF.get(phase) : undefined;
        if (code === undefined && typeof phase === 'number') return null; // (no such record is valid; kept unambiguous anyway)
        prev = typeof seq === 'number' && typeof step === 'number' ? { seq, step } : null;
        const R = members(r, C.record, (k, v) => {
          if (k === 'seq') return impliedSeq ? OMIT : v;
          if (k === 'step') return impliedStep ? OMIT : v;
          return k === 'phase' ? (code ?? v) : v;
        });
        const L = x.lists === undefined ? undefined : shortJsonOf(x.lists, C.lists);
        t = L === undefined ? `{"R":{${R}}}` : `{"R":{${R}},"L":${L}}`;
      } else if (x.op === 'effect' && isJsonObject(x.effect) && onlyKeys(x, ['op', 'effect'])) {
        const e = x.effect;
        let E: string;
        if (prev && !('$delta_of' in e)) {
          // An intent: its step and checkpoint are the record's before it (null: it names none).
          if (!('step' in e)) return null;
          const { step, seq } = prev;
          const impliedCheckpoint = e.checkpoint_seq === seq;
          if (!impliedCheckpoint && 'checkpoint_seq' in e && e.checkpoint_seq === null) return null;
          E = members(e, C.effect, (k, v) =>
            k === 'step' ? (v === step ? OMIT : v) : k === 'checkpoint_seq' && impliedCheckpoint ? OMIT : v,
          );
          if (!impliedCheckpoint && !('checkpoint_seq' in e)) {
            const none = member(C.effect, 'checkpoint_seq', null);
            E = E === '' ? none : `${E},${none}`;
          }
        } else E = members(e, C.effect);
        t = `{"E":{${E}}}`;
      } else t = JSON.stringify(op);
      o = o === '' ? t : `${o},${t}`;
    }
    const m = meta === undefined ? undefined : (JSON.stringify(meta) as string | undefined);
    return m === undefined
      ? `{"n":${JSON.stringify(first)},"o":[${o}]}`
      : `{"n":${JSON.stringify(first)},"m":${m},"o":[${o}]}`;
  } catch (err) {
    if (err instanceof KeyClash) return null;
    throw err;
  }
}

/** The commit body a short frame holds (run_id from its segment), or throws if it is not one. */
export function longBody(v: Record<string, unknown>, runId: string): Record<string, unknown> {
  const { n, m, o } = v;
  if (!Number.isSafeInteger(n) || !Array.isArray(o) || !onlyKeys(v, ['n', 'm', 'o']))
    throw new Error('not a commit in the short form');
  const ops: unknown[] = [];
  let prev: Prev | null = null;
  for (const op of o as unknown[]) {
    if (!isJsonObject(op)) throw new Error('an op is not an object');
    if ('R' in op && onlyKeys(op, ['R', 'L'])) {
      const r = lengthen(op.R, C.record) as Record<string, unknown>;
      if (!isJsonObject(r)) throw new Error('a record is not an object');
      if (!('seq' in r)) r.seq = prev ? prev.seq + 1 : fail('a record leaves out its seq with none before it');
      if (!('step' in r)) r.step = prev ? prev.step : fail('a record leaves out its step with none before it');
      if (typeof r.phase === 'number') r.phase = PHASE_CODES[r.phase] ?? fail(`unknown phase code ${r.phase}`);
      prev = typeof r.seq === 'number' && typeof r.step === 'number' ? { seq: r.seq, step: r.step } : null;
      ops.push('L' in op ? { op: 'record', record: r, lists: lengthen(op.L, C.lists) } : { op: 'record', record: r });
    } else if ('E' in op && onlyKeys(op, ['E'])) {
      const e = lengthen(op.E, C.effect) as Record<string, unknown>;
      if (!isJsonObject(e)) throw new Error('an effect is not an object');
      if (prev && !('$delta_of' in e)) {
        if (!('step' in e)) e.step = prev.step;
        if (!('checkpoint_seq' in e)) e.checkpoint_seq = prev.seq;
        else if (e.checkpoint_seq === null) delete e.checkpoint_seq;
      }
      ops.push({ op: 'effect', effect: e });
    } else if ('op' in op) ops.push(op);
    else throw new Error('an op of no known form');
  }
  const body: Record<string, unknown> = { run_id: runId, first: n, last: n };
  if (m !== undefined) body.meta = m;
  body.ops = ops;
  return body;
}

function fail(message: string): never {
  throw new Error(message);
}
