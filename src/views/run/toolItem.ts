// A tool call as the run view's card (vscode-free): its arguments (as the user approved them), the
// edit as a unified diff, the result cut to a preview, its status from the approval, the effect
// journal and what runs now. Built only for the cards of the page the view shows.
import { structuredPatch } from 'diff';
import { lastJournaledSeq } from '../../actions/restore/plan';
import type {
  Approval,
  ChatMessage,
  Effect,
  RestoreRecord,
  RuntimeSnapshot,
  ToolCall,
  ToolExecutionRecord,
} from '../../store/api/schema';
import { callDecision } from '../shared/stepSummary';
import { parseToolArgs, toolTitle } from '../shared/toolCalls';
import type { ToolItem } from './items';

export const OUTPUT_PREVIEW_CHARS = 4000;
/** Arguments that could not be parsed are shown as the model sent them, cut to this many characters. */
export const RAW_ARGUMENTS_PREVIEW_CHARS = 4000;
const DIFF_MAX_LINES = 400;

/** What the run view knows of one run's calls; made once per read of the run, shared by its cards. */
export interface ToolContext {
  runId: string;
  live: { active: boolean; runningCalls: ReadonlySet<string>; progress?: ReadonlyMap<string, string> };
  /** The newest checkpoint with a journaled file change after it (null: none). */
  lastChangeSeq: number | null;
  callById: Map<string, ToolCall>;
  results: Map<string, string>;
  execs: Map<string, ToolExecutionRecord>;
  approvals: Map<string, Approval>;
  effects: Map<string, Effect>;
}

export function toolContext(d: {
  run: { run_id: string };
  snapshot: Pick<RuntimeSnapshot, 'tool_executions'> | null;
  approvals: readonly Approval[];
  effects: readonly Effect[];
  restores: readonly RestoreRecord[];
  live: ToolContext['live'];
  messages: readonly ChatMessage[];
}): ToolContext {
  const callById = new Map<string, ToolCall>();
  const results = new Map<string, string>();
  for (const m of d.messages) {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) callById.set(c.id, c);
    if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  }
  return {
    runId: d.run.run_id,
    live: d.live,
    lastChangeSeq: lastJournaledSeq(d.effects, d.restores),
    callById,
    results,
    execs: new Map((d.snapshot?.tool_executions ?? []).map((e) => [e.tool_call_id, e])),
    approvals: new Map(d.approvals.map((a) => [a.tool_call_id, a])),
    effects: new Map(d.effects.map((e) => [e.tool_call_id, e])),
  };
}

export function orphanCall(id: string): ToolCall {
  return { id, type: 'function', function: { name: 'tool', arguments: '{}' } };
}

export function toolItem(ctx: ToolContext, step: number, call: ToolCall): ToolItem {
  const { runId } = ctx;
  const name = call.function.name;
  const approval = ctx.approvals.get(call.id);
  const effect = ctx.effects.get(call.id);
  const exec = ctx.execs.get(call.id);
  const args = parseToolArgs(
    approval?.decision?.kind === 'approve_edited' ? storedJson(approval.decision.arguments) : call.function.arguments,
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
    argumentsJson: args ? JSON.stringify(args, null, 2) : rawPreview(call.function.arguments),
    status,
    output: output === null ? null : output.slice(0, OUTPUT_PREVIEW_CHARS),
    outputChars: output?.length ?? 0,
    exitCode: name === 'run_command' && output ? exitCodeOf(output) : null,
    durationMs: exec?.finished_ms != null ? exec.finished_ms - exec.started_ms : null,
    replayed: exec?.replayed ?? false,
    uncertain: approval?.uncertain ?? false,
    approval: approval ? toolApproval(approval) : null,
    diff: editDiff(name, args),
    external: approval?.category === 'external' || Boolean(effect?.result?.raw_blob),
    rich: Boolean(effect?.result?.raw_blob),
    progress: status === 'running' ? (ctx.live.progress?.get(call.id) ?? null) : null,
  };
}

/** A record's value as JSON; a value too deep to write (a forged record) reads as none. */
function storedJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}

function rawPreview(raw: string): string {
  if (raw.length <= RAW_ARGUMENTS_PREVIEW_CHARS) return raw;
  const more = (raw.length - RAW_ARGUMENTS_PREVIEW_CHARS).toLocaleString('en-US');
  return `${raw.slice(0, RAW_ARGUMENTS_PREVIEW_CHARS)}… (${more} more characters)`;
}

/** The call waits for the user's decision (its card is open and tall). */
export function isPending(ctx: ToolContext, callId: string): boolean {
  return ctx.approvals.get(callId)?.decision === null;
}

function toolApproval(a: Approval): NonNullable<ToolItem['approval']> {
  const decision = callDecision(a);
  return {
    pending: decision === 'waiting',
    inputHash: a.input_hash,
    reason: a.reason,
    decision: decision === 'waiting' || decision === 'auto' ? null : decision,
    decisionReason: a.decision?.reason ?? null,
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
  if (ctx.live.runningCalls.has(id)) return 'running';
  // Live, the host's events say which call runs: an intent without a result that has not started was
  // written ahead of its batch and waits its turn. Not live, the run stopped while it ran or was next.
  if (r.effect && !r.effect.result) return ctx.live.active ? 'waiting' : 'interrupted';
  return ctx.live.active ? 'waiting' : 'not-run';
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
