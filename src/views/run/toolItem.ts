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
import { describeDecider } from '../../runner/decider';
import { callDecision } from '../shared/stepSummary';
import { parseToolArgs, toolTitle } from '../shared/toolCalls';
import { count } from '../../common/format';
import { errorMessage } from '../../common/errors';
import {
  compactJson,
  cut,
  EDIT_MAX_CHARS,
  FIELD_MAX_CHARS,
  JSON_MAX_DEPTH,
  LIST_MAX,
  PARSE_MAX_CHARS,
  prettyJson,
} from './bounds';
import type { ToolItem } from './items';

export const OUTPUT_PREVIEW_CHARS = 4000;
const DIFF_MAX_LINES = 400;
const DIFF_LINE_MAX_CHARS = 1000;
/** Longer edits are not compared here (the comparison grows with the product of their lengths). */
const DIFF_INPUT_MAX_CHARS = 200_000;
const DIFF_TIMEOUT_MS = 50;

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
  try {
    return fullItem(ctx, step, call);
  } catch (err) {
    // Whatever the model sent, the call keeps its card — and a waiting one its approval.
    const value = cut(call.function.arguments, FIELD_MAX_CHARS);
    return { ...bareItem(ctx, step, call), args: [{ name: `arguments (not read: ${errorMessage(err)})`, value }] };
  }
}

function fullItem(ctx: ToolContext, step: number, call: ToolCall): ToolItem {
  const decision = ctx.approvals.get(call.id)?.decision;
  // What ran: the user's edit of the arguments, when they edited them.
  const raw =
    decision?.kind === 'approve_edited'
      ? (compactJson(decision.arguments) ?? '"(the edited arguments nest too deep to print)"')
      : call.function.arguments;
  const args = raw.length <= PARSE_MAX_CHARS ? parseToolArgs(raw) : null;
  return {
    ...bareItem(ctx, step, call),
    ...shownArgs(args, raw),
    title: toolTitle(call.function.name, args),
    diff: editDiff(call.function.name, args),
  };
}

/** The card without what is read from the arguments: what every call has, however malformed. */
function bareItem(ctx: ToolContext, step: number, call: ToolCall): ToolItem {
  const { runId } = ctx;
  const name = call.function.name;
  const approval = ctx.approvals.get(call.id);
  const effect = ctx.effects.get(call.id);
  const exec = ctx.execs.get(call.id);
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
    title: name,
    args: [],
    argumentsJson: cut(call.function.arguments, EDIT_MAX_CHARS),
    argumentsEditable: false,
    status,
    output: output === null ? null : output.slice(0, OUTPUT_PREVIEW_CHARS),
    outputChars: output?.length ?? 0,
    exitCode: name === 'run_command' && output ? exitCodeOf(output) : null,
    durationMs: exec?.finished_ms != null ? exec.finished_ms - exec.started_ms : null,
    replayed: exec?.replayed ?? false,
    uncertain: approval?.uncertain ?? false,
    approval: approval ? toolApproval(approval) : null,
    diff: null,
    external: approval?.category === 'external' || Boolean(effect?.result?.raw_blob),
    rich: Boolean(effect?.result?.raw_blob),
    progress: status === 'running' ? (ctx.live.progress?.get(call.id) ?? null) : null,
    sandbox: effect?.sandbox ? cut(whereItRan(effect.sandbox), FIELD_MAX_CHARS) : null,
    changedFiles: (effect?.result ? (effect.files ?? []) : []).slice(0, 20).map((f) => cut(f.path, FIELD_MAX_CHARS)),
    changedFilesTotal: effect?.result ? (effect.files?.length ?? 0) : 0,
  };
}

function whereItRan(s: NonNullable<Effect['sandbox']>): string {
  return s.kind === 'sandboxed' ? `Ran in the sandbox: ${s.summary}` : `Ran outside the sandbox: ${s.reason}`;
}

/**
 * The arguments as the card lists them, each printed by name, and as the editor holds them.
 * What cannot be listed (not an object, nested too deep, too many) is shown as the raw text.
 */
function shownArgs(
  args: Record<string, unknown> | null,
  raw: string,
): Pick<ToolItem, 'args' | 'argumentsJson' | 'argumentsEditable'> {
  const rawArg = { name: args ? 'raw arguments' : 'arguments', value: cut(raw, FIELD_MAX_CHARS) };
  const asRaw = { argumentsJson: cut(raw, EDIT_MAX_CHARS), argumentsEditable: raw.length <= EDIT_MAX_CHARS };
  if (!args) return { args: raw.trim() === '' ? [] : [rawArg], ...asRaw };
  const entries = Object.entries(args);
  let whole = entries.length <= LIST_MAX;
  const list = entries.slice(0, LIST_MAX).map(([name, v]) => {
    const value = typeof v === 'string' ? v : prettyJson(v, { maxChars: FIELD_MAX_CHARS })?.text;
    whole &&= value !== undefined;
    return { name, value: value ?? `(nested more than ${JSON_MAX_DEPTH} levels deep: see the raw arguments)` };
  });
  if (!whole) list.push(rawArg);
  const json = prettyJson(args, { maxChars: EDIT_MAX_CHARS });
  if (!json) return { args: list, ...asRaw };
  return { args: list, argumentsJson: json.text, argumentsEditable: json.whole };
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
    ...(a.decision?.by ? { decidedBy: `${VERB[a.decision.kind]} by ${describeDecider(a.decision.by)}` } : {}),
    retry: a.retry
      ? { domains: a.retry.blocked.domains, writes: a.retry.blocked.writes, unixSockets: a.retry.blocked.unix_sockets }
      : null,
  };
}

const VERB = { approve: 'approved', approve_edited: 'approved with edits', reject: 'rejected' } as const;

function toolStatus(
  ctx: ToolContext,
  id: string,
  output: string | null,
  r: { approval?: Approval; effect?: Effect; exec?: ToolExecutionRecord },
): ToolItem['status'] {
  if (r.approval?.decision?.kind === 'reject' && !r.approval.retry) return 'rejected';
  // A blocked command's result is in, and it waits to run again: the decision is what matters now.
  if (r.approval?.retry && r.approval.decision === null) return 'awaiting';
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
  const patch =
    before.length + after.length <= DIFF_INPUT_MAX_CHARS
      ? structuredPatch(args.path, args.path, before, after, '', '', { context: 3, timeout: DIFF_TIMEOUT_MS })
      : undefined;
  if (!patch) return startsOf(before, after);
  const lines: string[] = [];
  for (const h of patch.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) if (lines.length < DIFF_MAX_LINES) lines.push(cut(l, DIFF_LINE_MAX_CHARS, ' '));
  }
  if (lines.length >= DIFF_MAX_LINES) lines.push(`… (diff cut at ${DIFF_MAX_LINES} lines)`);
  return lines;
}

/** Texts too long to compare here: the start of each (Show diff opens the whole change in the editor). */
function startsOf(before: string, after: string): string[] {
  const half = DIFF_MAX_LINES / 2;
  return [
    `@@ too long to compare here (${count(before.length)} → ${count(after.length)} characters): the start of each @@`,
    ...firstLines(before, half).map((l) => `-${l}`),
    ...firstLines(after, half).map((l) => `+${l}`),
  ];
}

/** The first `n` lines of `s`, each cut to a line's bound (`s` is at most the parsed arguments' bound). */
function firstLines(s: string, n: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (out.length < n && from < s.length) {
    const nl = s.indexOf('\n', from);
    const end = nl < 0 ? s.length : nl;
    out.push(cut(s.slice(from, end), DIFF_LINE_MAX_CHARS, ' '));
    from = end + 1;
  }
  return out;
}
