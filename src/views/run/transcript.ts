// Store records → transcript items (vscode-free, unit-tested): one run's conversation as the user
// reads it — the task, what the agent said, each tool call with its arguments, result and approval,
// a waypoint per step with its checkpoints, and why the run stopped. Inherited messages of a
// follow-up turn are not repeated: the thread shows them in the earlier turn.
import { structuredPatch } from 'diff';
import { whyNotResume } from '../../actions/guards';
import { lastJournaledSeq } from '../../actions/restore/plan';
import type {
  Approval,
  ChatMessage,
  CheckpointRecord,
  Effect,
  InboxMessage,
  RestoreRecord,
  RunSummary,
  RuntimeSnapshot,
  ToolCall,
  ToolExecutionRecord,
} from '../../store/api/schema';
import type { ToolItem, TranscriptItem } from './items';
import { condenseItems } from './condenseItems';
import { placeRestores } from './restores';

export const OUTPUT_PREVIEW_CHARS = 4000;
const DIFF_MAX_LINES = 400;

export interface RunData {
  run: RunSummary;
  /** 1-based position of the run in its thread. */
  turn: number;
  /** Every checkpoint of the run, oldest first (seq, step, phase, the snapshot's message count; condense payloads). */
  records: readonly (Pick<CheckpointRecord, 'seq' | 'step' | 'phase' | 'snapshot'> & {
    payload?: CheckpointRecord['payload'];
  })[];
  /** The latest snapshot (null: none written yet). */
  snapshot: RuntimeSnapshot | null;
  approvals: readonly Approval[];
  effects: readonly Effect[];
  inbox: readonly InboxMessage[];
  /** Restores of the run's files, in the order they were recorded. */
  restores: readonly RestoreRecord[];
  /** The run executes in this window now, and the tool calls running this moment. */
  live: { active: boolean; runningCalls: ReadonlySet<string>; progress?: ReadonlyMap<string, string> };
}

export function buildRunItems(d: RunData): TranscriptItem[] {
  const runId = d.run.run_id;
  const continued = Boolean(d.run.continued_from);
  const out: TranscriptItem[] = [
    { kind: 'turn', key: `${runId}:turn`, runId, turn: d.turn, title: d.run.title, continued },
  ];
  const messages = d.snapshot?.messages ?? [];
  const first = continued ? (d.records[0]?.snapshot?.message_count ?? messages.length) : 1;
  if (messages.length === 0) out.push({ kind: 'user', key: `${runId}:task`, runId, text: d.run.task, queued: false });
  const stepOf = assistantSteps(d.records);
  const ctx = toolContext(d, messages);
  const condensed = condenseItems(d);
  const placeCondenses = (step: number) => {
    for (const c of condensed) {
      if (c.step > step || c.placed) continue;
      c.placed = true;
      out.push(c.item);
    }
  };
  let lastStep = -1;
  let lastAssistant = -1;
  for (let i = first; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'user') out.push({ kind: 'user', key: `${runId}:u:${i}`, runId, text: m.content, queued: false });
    if (m.role === 'tool' && !ctx.shownCalls.has(m.tool_call_id))
      out.push(toolItem(ctx, runId, d.run.step, ctx.callById.get(m.tool_call_id) ?? orphanCall(m.tool_call_id)));
    if (m.role !== 'assistant') continue;
    const step = stepOf.get(i) ?? lastStep;
    if (step !== lastStep) {
      out.push(waypoint(d, step, ctx));
      placeCondenses(step);
    }
    lastStep = step;
    if (m.content || m.reasoning) {
      lastAssistant = out.length;
      out.push({
        kind: 'assistant',
        key: `${runId}:a:${i}`,
        runId,
        step,
        text: m.content ?? '',
        reasoning: m.reasoning ?? null,
        final: false,
      });
    }
    for (const call of m.tool_calls ?? []) out.push(toolItem(ctx, runId, step, call));
  }
  placeCondenses(Number.MAX_SAFE_INTEGER);
  const last = out[lastAssistant];
  if (d.run.state === 'completed' && last?.kind === 'assistant' && lastAssistant === out.length - 1) last.final = true;
  for (const m of d.inbox) {
    if (!m.delivered) out.push({ kind: 'user', key: `${runId}:q:${m.id}`, runId, text: m.text, queued: true });
  }
  // Why the run stopped (a wait for approval is said by the header and the cards themselves).
  if (d.run.state !== 'completed' && d.run.state !== 'running' && d.run.state !== 'awaiting_approval') {
    out.push({
      kind: 'status',
      key: `${runId}:status`,
      runId,
      state: d.run.state,
      detail: d.run.state_detail,
      resumable: whyNotResume({ run: d.run, active: d.live.active }) === null,
    });
  }
  return placeRestores(out, d.restores, d.records);
}

/** Index of each assistant message → the step whose post_llm checkpoint holds it. */
function assistantSteps(records: RunData['records']): Map<number, number> {
  const map = new Map<number, number>();
  for (const r of records) if (r.phase === 'post_llm' && r.snapshot) map.set(r.snapshot.message_count - 1, r.step);
  return map;
}

interface ToolContext {
  d: RunData;
  /** The newest checkpoint with a journaled file change after it (null: none). */
  lastChangeSeq: number | null;
  callById: Map<string, ToolCall>;
  results: Map<string, string>;
  execs: Map<string, ToolExecutionRecord>;
  approvals: Map<string, Approval>;
  effects: Map<string, Effect>;
  shownCalls: Set<string>;
}

function toolContext(d: RunData, messages: readonly ChatMessage[]): ToolContext {
  const callById = new Map<string, ToolCall>();
  const results = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) callById.set(c.id, c);
    if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  }
  return {
    d,
    lastChangeSeq: lastJournaledSeq(d.effects, d.restores),
    callById,
    results,
    execs: new Map((d.snapshot?.tool_executions ?? []).map((e) => [e.tool_call_id, e])),
    approvals: new Map(d.approvals.map((a) => [a.tool_call_id, a])),
    effects: new Map(d.effects.map((e) => [e.tool_call_id, e])),
    shownCalls: new Set(),
  };
}

function orphanCall(id: string): ToolCall {
  return { id, type: 'function', function: { name: 'tool', arguments: '{}' } };
}

function toolItem(ctx: ToolContext, runId: string, step: number, call: ToolCall): ToolItem {
  ctx.shownCalls.add(call.id);
  const name = call.function.name;
  const approval = ctx.approvals.get(call.id);
  const effect = ctx.effects.get(call.id);
  const exec = ctx.execs.get(call.id);
  const args = parseArgs(
    approval?.decision?.kind === 'approve_edited'
      ? JSON.stringify(approval.decision.arguments)
      : call.function.arguments,
  );
  const output = ctx.results.get(call.id) ?? effect?.result?.output ?? null;
  const status = toolStatus(ctx, call.id, output, { approval, effect, exec });
  return {
    kind: 'tool',
    key: `${runId}:t:${call.id}`,
    runId,
    step,
    toolCallId: call.id,
    name,
    category: approval?.category ?? null,
    title: toolTitle(name, args),
    args: Object.entries(args ?? {}).map(([k, v]) => ({
      name: k,
      value: typeof v === 'string' ? v : JSON.stringify(v, null, 2),
    })),
    argumentsJson: args ? JSON.stringify(args, null, 2) : call.function.arguments,
    status,
    output: output === null ? null : output.slice(0, OUTPUT_PREVIEW_CHARS),
    outputChars: output?.length ?? 0,
    exitCode: name === 'run_command' && output ? exitCodeOf(output) : null,
    durationMs: exec?.finished_ms != null ? exec.finished_ms - exec.started_ms : null,
    replayed: exec?.replayed ?? false,
    uncertain: approval?.uncertain ?? false,
    approval: approval
      ? {
          pending: approval.decision === null,
          inputHash: approval.input_hash,
          reason: approval.reason,
          decision:
            approval.decision === null
              ? null
              : approval.decision.kind === 'approve'
                ? 'approved'
                : approval.decision.kind === 'reject'
                  ? 'rejected'
                  : 'edited',
          decisionReason: approval.decision?.reason ?? null,
        }
      : null,
    diff: editDiff(name, args),
    external: approval?.category === 'external' || Boolean(effect?.result?.raw_blob),
    rich: Boolean(effect?.result?.raw_blob),
    progress: status === 'running' ? (ctx.d.live.progress?.get(call.id) ?? null) : null,
  };
}

function toolStatus(
  ctx: ToolContext,
  id: string,
  output: string | null,
  r: { approval?: Approval; effect?: Effect; exec?: ToolExecutionRecord },
): ToolItem['status'] {
  if (r.approval?.decision?.kind === 'reject') return 'rejected';
  if (output !== null)
    return (r.exec?.is_error ??
      r.effect?.result?.is_error ??
      /^(Denied by policy|The user rejected|Error)/.test(output))
      ? 'error'
      : 'done';
  if (r.approval && r.approval.decision === null) return 'awaiting';
  if (ctx.d.live.runningCalls.has(id)) return 'running';
  if (r.effect && !r.effect.result) return ctx.d.live.active ? 'running' : 'interrupted';
  return ctx.d.live.active ? 'waiting' : 'not-run';
}

function parseArgs(json: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** "edit_file src/slugify.js", "run_command npm test": the name and its main argument. */
export function toolTitle(name: string, args: Record<string, unknown> | null, maxChars = 80): string {
  const main = args?.path ?? args?.command ?? args?.pattern ?? args?.task;
  if (typeof main !== 'string') return name;
  const short = main.split('\n')[0]!;
  return `${name} ${short.length > maxChars ? `${short.slice(0, maxChars - 3)}…` : short}`;
}

function exitCodeOf(output: string): number | null {
  const m = /exit code: (-?\d+)/.exec(output.slice(0, 200));
  return m ? Number(m[1]) : null;
}

function editDiff(name: string, args: Record<string, unknown> | null): string[] | null {
  if (!args || typeof args.path !== 'string') return null;
  let before: string;
  let after: string;
  if (name === 'edit_file' && typeof args.old_text === 'string' && typeof args.new_text === 'string')
    [before, after] = [args.old_text, args.new_text];
  else if (name === 'write_file' && typeof args.content === 'string') [before, after] = ['', args.content];
  else return null;
  const patch = structuredPatch(args.path, args.path, before, after, '', '', { context: 3 });
  const lines: string[] = [];
  for (const h of patch.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) if (lines.length < DIFF_MAX_LINES) lines.push(l);
  }
  if (lines.length >= DIFF_MAX_LINES) lines.push(`… (diff cut at ${DIFF_MAX_LINES} lines)`);
  return lines;
}

/**
 * The marker of a step: its checkpoints and a one-line summary for the view and the tree. "Here" is
 * the step's first checkpoint: where the marker stands, before the step's model call and tools, so
 * restoring files (or forking with them) to it undoes what the step changed.
 */
function waypoint(d: RunData, step: number, ctx: ToolContext): TranscriptItem {
  const phases = d.records.filter((r) => r.step === step).map((r) => ({ seq: r.seq, phase: r.phase }));
  const seq = phases[0]?.seq ?? null;
  const filesAfter = seq !== null && ctx.lastChangeSeq !== null && seq <= ctx.lastChangeSeq;
  return {
    kind: 'waypoint',
    key: `${d.run.run_id}:w:${step}`,
    runId: d.run.run_id,
    step,
    summary: stepSummary(d, step, ctx),
    phases,
    seq,
    filesAfter,
    running: d.live.active,
  };
}

/** "edit_file src/slugify.js · approved", "read_file a.js, search_text x", "answer". */
function stepSummary(d: RunData, step: number, ctx: ToolContext): string {
  const approvals = d.approvals.filter((a) => a.step === step);
  const ids = (d.snapshot?.tool_executions ?? []).filter((e) => e.step === step).map((e) => e.tool_call_id);
  for (const a of approvals) if (!ids.includes(a.tool_call_id)) ids.push(a.tool_call_id);
  if (ids.length === 0) return 'answer';
  const titles = ids.map((id) => {
    const call = ctx.callById.get(id);
    return call
      ? toolTitle(call.function.name, parseArgs(call.function.arguments))
      : (ctx.approvals.get(id)?.tool_name ?? 'tool');
  });
  const shown = titles.length > 2 ? `${titles.slice(0, 2).join(', ')} +${titles.length - 2}` : titles.join(', ');
  const kinds = approvals.map((a) => a.decision?.kind ?? 'waiting');
  const verdict =
    kinds.length === 0
      ? ''
      : kinds.includes('waiting')
        ? ' · waiting for approval'
        : kinds.every((k) => k === 'approve')
          ? ' · approved'
          : kinds.includes('reject')
            ? ' · rejected'
            : ' · edited';
  return `${shown}${verdict}`;
}
