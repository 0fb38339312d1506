// The compact encoding of a run's commits (encodeOps / decodeOps, exact inverses), whatever file
// holds them (a segment frame, a snapshot, a version-1 commit file), and peekLost for damaged ones.
import { LostCall, RunState, type RunMeta } from '../api/schema';
import type { CommitOp } from '../core/storedSchema';

/**
 * What the encoder and decoder carry from one commit to the next. Decoding is the exact inverse of
 * encoding, op by op, in log order; a commit that does not decode against the log before it is bad.
 */
export interface Codec {
  /** Effect outputs: a tool message with the same content is written as a reference. */
  outputs: Map<string, string>;
  /** The previous snapshot header: a header is written as its difference from it. */
  header: Record<string, unknown> | null;
}

export const newCodec = (): Codec => ({ outputs: new Map(), header: null });

/** What one commit changes in the codec; applied with `advance` once the commit is accepted. */
export interface CodecDelta {
  outputs: Map<string, string>;
  header: Record<string, unknown> | null;
}

const startDelta = (c: Codec): CodecDelta => ({ outputs: new Map(), header: c.header });
const output = (c: Codec, d: CodecDelta, id: string) => d.outputs.get(id) ?? c.outputs.get(id);

/** Moves the codec past an accepted commit (in place: a run's codec is only ever moved forward). */
export function advance(c: Codec, d: CodecDelta): Codec {
  for (const [k, v] of d.outputs) c.outputs.set(k, v);
  c.header = d.header;
  return c;
}

const REF = '$effect_output';
const SAME = '$same_as_previous';
const LAST = '$last_message';
const eq = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The space optimisations of the log format, so a checkpoint costs what it adds:
 *  - a tool message whose content equals its effect's recorded output refers to it;
 *  - a snapshot header lists only the fields that changed since the previous header;
 *  - a pending LLM response whose message is the messages list's last item refers to it;
 *  - run_id, thread_id and parent are left out when they are what the position implies.
 * Never mutates `ops`; returns the codec change to `advance` by once the commit is on disk.
 */
export function encodeOps(ops: readonly CommitOp[], codec: Codec, meta: RunMeta): { ops: unknown[]; next: CodecDelta } {
  const next = startDelta(codec);
  const out: unknown[] = [];
  for (const op of ops) {
    if (op.op === 'effect' && op.effect.result) next.outputs.set(op.effect.tool_call_id, op.effect.result.output);
    if (op.op !== 'record') {
      out.push(op);
      continue;
    }
    const { run_id, thread_id, parent, snapshot, ...rest } = op.record;
    const record: Record<string, unknown> = { ...rest };
    if (run_id !== meta.run_id) record.run_id = run_id;
    if (thread_id !== meta.thread_id) record.thread_id = thread_id;
    if (!eq(parent, impliedParent(meta, op.record.seq))) record.parent = parent;
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
    } else record.snapshot = null;
    out.push(lists ? { op: 'record', record, lists } : { op: 'record', record });
  }
  return { ops: out, next };
}

function refOutput(item: unknown, outputOf: (id: string) => string | undefined): unknown {
  const m = item as { role?: unknown; tool_call_id?: unknown; content?: unknown };
  if (m.role !== 'tool' || typeof m.tool_call_id !== 'string' || typeof m.content !== 'string' || m.content.length < 64)
    return item;
  if (outputOf(m.tool_call_id) !== m.content) return item;
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, k === 'content' ? { [REF]: m.tool_call_id } : v]));
}

function diffHeader(h: Record<string, unknown>, prev: Record<string, unknown> | null): Record<string, unknown> {
  if (!prev) return h;
  const changed: Record<string, unknown> = { [SAME]: true };
  for (const k of Object.keys(h)) if (!(k in prev) || !eq(h[k], prev[k])) changed[k] = h[k];
  return changed;
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
      lists?: { messages?: { base: number; items: unknown[] } };
    };
    if (op.op === 'effect' && op.effect?.result) next.outputs.set(op.effect.tool_call_id, op.effect.result.output);
    if (op.op !== 'record' || !op.record || typeof op.record !== 'object') continue;
    const r = op.record;
    const items = op.lists?.messages?.items ?? [];
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
    const seq = r.seq as number;
    op.record = {
      run_id: r.run_id ?? meta.run_id,
      thread_id: r.thread_id ?? meta.thread_id,
      ...r,
      parent: 'parent' in r ? r.parent : impliedParent(meta, seq),
    };
    const h = r.snapshot as Record<string, unknown> | null | undefined;
    if (!h) continue;
    let full: Record<string, unknown> = h;
    if (h[SAME] === true) {
      if (!next.header)
        throw new Error(`checkpoint ${seq} lists what changed since a previous snapshot the log does not have`);
      const { [SAME]: _, ...changed } = h;
      full = { ...next.header, ...changed };
    }
    next.header = full;
    const pending = full.pending_llm_response as Record<string, unknown> | null | undefined;
    if (pending && pending.message === LAST) {
      if (items.length === 0)
        throw new Error(`the pending response of checkpoint ${seq} refers to a message the log does not have`);
      full = { ...full, pending_llm_response: { ...pending, message: items[items.length - 1] } };
    }
    op.record.snapshot = full;
  }
  return next;
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

/** The same, for a commit body already parsed (a segment frame that checked out, after the one that did not). */
export function peekBody(value: unknown, runId: string): PeekedCommit | null {
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
      const call = LostCall.safeParse({ ...o.effect, finished: o.effect.result != null });
      if (call.success) out.calls.push(call.data);
    }
  }
  return out;
}
