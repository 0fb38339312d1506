// Legacy AFK-style checkpoint records (docs/design.md, resume semantics 2: "legacy formats are migrated").
// The AFK reference stores {run_id, thread_id, schema_version: "1.0", phase, payload, timestamp_ms}
// with no seq, and the whole runtime snapshot inside the payload of step_started/post_llm. Import
// normalises such records (one, or a run's list) into this store's export body; the normal import
// path then validates it like any export.
import { InvalidInputError } from '../api/errors';
import {
  ChatMessage,
  LIST_FIELDS,
  LlmResponse,
  PHASES,
  PhasePayloads,
  RunId,
  RunState,
  STORE_SCHEMA_VERSION,
  type CheckpointRecord,
  type ListField,
  type Phase,
  type SnapshotHeader,
} from '../api/schema';
import { sha256 } from '../../common/hash';
import { isJsonObject } from '../../common/json';
import type { RunExportBody } from '../core/storedSchema';

type Obj = Record<string, unknown>;

const isLegacyRecord = (v: unknown): v is Obj =>
  isJsonObject(v) && typeof v.schema_version === 'string' && typeof v.phase === 'string' && !('seq' in v);

export function isLegacyInput(data: unknown): boolean {
  return isLegacyRecord(data) || (Array.isArray(data) && data.length > 0 && data.every(isLegacyRecord));
}

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const int = (v: unknown, d = 0): number =>
  typeof v === 'number' && Number.isFinite(v) ? Math.max(0, Math.trunc(v)) : d;
const state = (v: unknown): RunState => (RunState.safeParse(v).success ? (v as RunState) : 'running'); // e.g. AFK "degraded"

const LEGACY_SIZE = { tokens: 0, window: 1, window_source: 'legacy', estimated: true };

/** Defaults for phase payload fields the AFK table does not have (our schema requires them). */
const PAYLOAD_DEFAULTS: Record<Phase, Obj> = {
  run_started: { agent_name: 'legacy', resumed: false, task: '', extension_version: 'legacy', tool_schema_hash: '' },
  step_started: { state: 'running', message_count: 0 },
  pre_llm: { model: '', provider: '', message_count: 0 },
  post_llm: {
    model: '',
    provider: '',
    finish_reason: null,
    tool_call_count: 0,
    session_token: null,
    checkpoint_token: null,
    total_cost_usd: null,
  },
  pre_tool_batch: { tool_call_count: 0 },
  post_tool_batch: { tool_calls_total: 0, tool_failures: 0 },
  pre_subagent_batch: { subagent_count: 0 },
  post_subagent_batch: { subagents_total: 0, subagent_failures: 0 },
  // Not AFK phases: a legacy record never has them (listed because the table covers every phase).
  pre_condense: { reason: 'threshold', awaiting_consent: false, context: LEGACY_SIZE },
  post_condense: { condense_id: '', before: null, usage: null, cost_usd: null, context: LEGACY_SIZE },
  run_terminal: {
    state: 'completed',
    final_text: '',
    requested_model: '',
    normalized_model: '',
    provider_adapter: '',
    terminal_result: null,
  },
};

export function normalizeLegacy(data: unknown): RunExportBody {
  const input = (Array.isArray(data) ? data : [data]) as Obj[];
  for (const r of input) {
    if (!/^1(\.\d+)*$/.test(r.schema_version as string))
      throw new InvalidInputError(
        `Import refused: legacy checkpoint schema_version "${String(r.schema_version)}" is not supported (only 1.x).`,
      );
    if (!PHASES.includes(r.phase as Phase))
      throw new InvalidInputError(`Import refused: unknown legacy phase "${String(r.phase)}".`);
    if (!isJsonObject(r.payload))
      throw new InvalidInputError('Import refused: a legacy checkpoint has no payload object.');
  }
  const recs = input
    .map((r, i) => ({ r, i }))
    .sort((a, b) => int(a.r.timestamp_ms) - int(b.r.timestamp_ms) || a.i - b.i)
    .map((x) => x.r);
  const ids = new Set(recs.map((r) => str(r.run_id)));
  if (ids.size !== 1)
    throw new InvalidInputError('Import refused: the legacy checkpoints belong to more than one run.');
  const runId = safeRunId(str(recs[0]!.run_id));
  const threadId = str(recs[0]!.thread_id, runId);
  const cur: Record<ListField, unknown[]> = { messages: [], tool_executions: [], subagent_executions: [] };
  const body: RunExportBody = {
    meta: {
      run_id: runId,
      thread_id: threadId,
      title: '',
      task: '',
      agent_name: 'legacy',
      model: '',
      created_ms: int(recs[0]!.timestamp_ms),
      forked_from: null,
      parent_run_id: null,
    },
    state: 'interrupted',
    state_detail: 'Imported from a legacy checkpoint format.',
    state_ms: int(recs[recs.length - 1]!.timestamp_ms),
    records: [],
    lists: [],
    approvals: [],
    inbox: [],
    effects: [],
    blobs: {},
  };
  let step = 0;
  recs.forEach((r, i) => {
    const seq = i + 1;
    const phase = r.phase as Phase;
    const p = r.payload as Obj;
    const ts = int(r.timestamp_ms);
    step = int(p.step, step);
    let header: SnapshotHeader | null = null;
    let payload: Obj = { ...PAYLOAD_DEFAULTS[phase], ...p };
    if (Array.isArray(p.messages)) {
      const snap = legacySnapshot(p, step, ts, seq);
      for (const field of LIST_FIELDS) {
        const base = commonPrefix(cur[field], snap[field]);
        if (base === cur[field].length && snap[field].length === base) continue;
        body.lists.push({ seq, field, base, items: snap[field].slice(base) });
        cur[field] = snap[field];
      }
      header = snap.header;
      payload = pick(
        {
          ...PAYLOAD_DEFAULTS[phase],
          state: header.state,
          message_count: header.message_count,
          model: header.normalized_model,
        },
        p,
        phase,
      );
      body.meta.model ||= header.requested_model;
    }
    if (phase === 'run_started') {
      body.meta.task = str(p.task);
      body.meta.agent_name = str(p.agent_name, 'legacy');
    }
    if (phase === 'run_terminal') {
      body.state =
        RunState.safeParse(p.state).success && ['completed', 'failed'].includes(p.state as string)
          ? (p.state as RunState)
          : 'completed';
      body.state_detail = null;
    }
    const parent = seq > 1 ? { run_id: runId, seq: seq - 1 } : null;
    const record: CheckpointRecord = {
      run_id: runId,
      thread_id: threadId,
      schema_version: STORE_SCHEMA_VERSION,
      phase,
      seq,
      parent,
      timestamp_ms: ts,
      step,
      payload,
      snapshot: header,
    };
    body.records.push(record);
  });
  body.meta.title = `Imported: ${body.meta.task || runId}`.slice(0, 200);
  return body;
}

/** The phase payload: the phase's own fields (legacy values over defaults), not the whole snapshot. */
function pick(defaults: Obj, p: Obj, phase: Phase): Obj {
  const keys = Object.keys(PhasePayloads[phase].shape);
  return Object.fromEntries(keys.map((k) => [k, k in p ? p[k] : defaults[k]]));
}

function legacySnapshot(p: Obj, step: number, ts: number, seq: number) {
  const where = `legacy checkpoint ${seq}`;
  const messages = (p.messages as unknown[]).map((m, i) => {
    const r = ChatMessage.safeParse(m);
    if (!r.success)
      throw new InvalidInputError(
        `Import refused: message ${i} of ${where} is not a chat message (${r.error.issues[0]?.message}).`,
      );
    return r.data;
  });
  const tool_executions = (Array.isArray(p.tool_executions) ? p.tool_executions : [])
    .filter(isJsonObject)
    .map((x, i) => ({
      tool_call_id: str(x.tool_call_id, `legacy-${seq}-${i}`),
      tool_name: str(x.tool_name, str(x.name)),
      step: int(x.step, step),
      input_hash: str(x.input_hash),
      output_hash: typeof x.output_hash === 'string' ? x.output_hash : null,
      is_error: typeof x.is_error === 'boolean' ? x.is_error : x.success === false,
      replayed: x.replayed === true,
      started_ms: int(x.started_ms, ts),
      finished_ms: typeof x.finished_ms === 'number' ? int(x.finished_ms) : null,
    }));
  const subagent_executions = (Array.isArray(p.subagent_executions) ? p.subagent_executions : [])
    .filter(isJsonObject)
    .map((x, i) => ({
      tool_call_id: str(x.tool_call_id, `legacy-${seq}-${i}`),
      child_run_id: safeRunId(str(x.child_run_id, str(x.run_id, `legacy-child-${seq}-${i}`))),
      step: int(x.step, step),
      state: state(x.state),
      final_text: typeof x.final_text === 'string' ? x.final_text : null,
      started_ms: int(x.started_ms, ts),
      finished_ms: typeof x.finished_ms === 'number' ? int(x.finished_ms) : null,
    }));
  const usage = isJsonObject(p.usage) ? p.usage : {};
  const input = int(usage.input_tokens);
  const output = int(usage.output_tokens);
  const header: SnapshotHeader = {
    step,
    state: state(p.state),
    context: isJsonObject(p.context) ? p.context : {},
    llm_calls: int(p.llm_calls),
    tool_calls: int(p.tool_calls),
    started_at_s: typeof p.started_at_s === 'number' ? p.started_at_s : ts / 1000,
    usage: { input_tokens: input, output_tokens: output, total_tokens: int(usage.total_tokens, input + output) },
    total_cost_usd: typeof p.total_cost_usd === 'number' && p.total_cost_usd >= 0 ? p.total_cost_usd : null,
    session_token: typeof p.session_token === 'string' ? p.session_token : null,
    checkpoint_token: typeof p.checkpoint_token === 'string' ? p.checkpoint_token : null,
    pending_llm_response: legacyResponse(p.pending_llm_response, p, ts, where),
    requested_model: str(p.requested_model),
    normalized_model: str(p.normalized_model, str(p.requested_model)),
    provider_adapter: str(p.provider_adapter),
    final_text: str(p.final_text),
    final_structured: p.final_structured ?? null,
    replayed_effect_count: int(p.replayed_effect_count),
    message_count: messages.length,
    tool_execution_count: tool_executions.length,
    subagent_execution_count: subagent_executions.length,
  };
  return { header, messages, tool_executions, subagent_executions };
}

/** AFK keeps {text, tool_calls: [{id, tool_name, arguments}], finish_reason}; ours is Chat Completions. */
function legacyResponse(v: unknown, p: Obj, ts: number, where: string): LlmResponse | null {
  if (v == null) return null;
  const ours = LlmResponse.safeParse(v);
  if (ours.success) return ours.data;
  if (!isJsonObject(v) || !Array.isArray(v.tool_calls))
    throw new InvalidInputError(`Import refused: the pending LLM response of ${where} cannot be read.`);
  const calls = v.tool_calls.filter(isJsonObject).map((c, i) => ({
    id: str(c.id, `legacy-call-${i}`),
    type: 'function' as const,
    function: {
      name: str(c.tool_name, str(c.name)),
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
    },
  }));
  const r = LlmResponse.safeParse({
    id: null,
    model: str(v.model, str(p.normalized_model, str(p.requested_model))),
    finish_reason: typeof v.finish_reason === 'string' ? v.finish_reason : null,
    message: { role: 'assistant', content: typeof v.text === 'string' ? v.text : null, tool_calls: calls },
    usage: null,
    received_ms: ts,
  });
  if (!r.success) throw new InvalidInputError(`Import refused: the pending LLM response of ${where} cannot be read.`);
  return r.data;
}

function commonPrefix(a: unknown[], b: unknown[]): number {
  let i = 0;
  while (i < a.length && i < b.length && JSON.stringify(a[i]) === JSON.stringify(b[i])) i++;
  return i;
}

/** Legacy ids may be UUIDs or contain anything: keep them when they are valid folder names. */
function safeRunId(id: string): string {
  if (RunId.safeParse(id).success) return id;
  const cleaned = id
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 64);
  return RunId.safeParse(cleaned).success ? cleaned : `legacy-${sha256(id).slice(0, 16)}`;
}
