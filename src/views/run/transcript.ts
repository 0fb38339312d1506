// Store records → the run view's transcript (vscode-free, unit-tested): one run's conversation as
// the user reads it — the task, what the agent said, each tool call with its arguments, result and
// approval, a waypoint per step with its checkpoints, and why the run stopped. Inherited messages
// of a follow-up turn are not repeated: the thread shows them in the earlier turn.
//
// A run is *planned* in one cheap pass (each item's key, height estimate and how to build it) and
// its items are built only when a page of the view needs them: a 1000-step run has ≈ 3,600 items,
// of which the view shows a few dozen. A plan of the newest checkpoints alone (`newestOnly`) is the
// end of the whole run's plan: what the view paints first, before the older checkpoints are read.
import type { ChatMessage, ToolCall } from '../../store/api/schema';
import { whyNotResume } from '../../actions/guards';
import { summarizeStep } from '../shared/stepSummary';
import { parseToolArgs } from '../shared/toolCalls';
import { boundItem } from './bounds';
import { condenseItems } from './condenseItems';
import {
  estimateHeight,
  type ItemKind,
  toolCardHeight,
  type TranscriptItem,
  WAYPOINT_HEIGHT,
  type WaypointItem,
} from './items';
import { placeRestores } from './restores';
import type { RunData, RunRecord } from './runData';
import { isPending, orphanCall, type ToolContext, toolContext, toolItem } from './toolItem';

export { OUTPUT_PREVIEW_CHARS } from './toolItem';

/** One item of the transcript before it is built: enough to lay out the list and place it. */
export interface PlannedItem {
  key: string;
  kind: ItemKind;
  runId: string;
  /** A waypoint's step (restore cards are placed by it). */
  step?: number;
  height: number;
  /** A tool call waiting for the user's decision. */
  pending: boolean;
  /** The item, made on first call and kept. */
  build(): TranscriptItem;
}

export function buildRunItems(d: RunData): TranscriptItem[] {
  return planRunItems(d).map((p) => p.build());
}

export function planRunItems(d: RunData): PlannedItem[] {
  const runId = d.run.run_id;
  const continued = Boolean(d.run.continued_from);
  const out: PlannedItem[] = [
    made({ kind: 'turn', key: `${runId}:turn`, runId, turn: d.turn, title: d.run.title, continued }),
  ];
  // The snapshot's messages; a run's end holds them from `messagesFrom` on (message i is tail[i - from]).
  const tail = d.snapshot?.messages ?? [];
  const from = d.messagesFrom ?? 0;
  const total = from + tail.length;
  const message = (i: number): ChatMessage | undefined => (i >= from ? tail[i - from] : undefined);
  const first = Math.max(from, continued && !d.newestOnly ? (d.records[0]?.snapshot?.message_count ?? total) : 1);
  if (total === 0) out.push(made({ kind: 'user', key: `${runId}:task`, runId, text: d.run.task, queued: false }));
  const steps = stepIndex(d, message);
  const ctx = toolContext({ ...d, messages: tail });
  // A plan of the newest checkpoints starts at the first step they hold whole; what lies before is cut.
  const fromStep = d.newestOnly ? (d.records[0]?.step ?? 0) + 1 : -Infinity;
  const condensed = condenseItems(d).filter((c) => c.step >= fromStep);
  const placeCondenses = (step: number) => {
    for (const c of condensed) {
      if (c.step > step || c.placed) continue;
      c.placed = true;
      out.push(made(c.item));
    }
  };
  const shownCalls = new Set<string>();
  const tool = (step: number, call: ToolCall) => {
    shownCalls.add(call.id);
    out.push(toolEntry(ctx, step, call));
  };
  let lastStep = -1;
  let lastAssistant = -1;
  for (let i = first; i < total; i++) {
    const m = message(i)!;
    if (m.role === 'user')
      out.push(made({ kind: 'user', key: `${runId}:u:${i}`, runId, text: m.content, queued: false }));
    if (m.role === 'tool' && !shownCalls.has(m.tool_call_id))
      tool(d.run.step, ctx.callById.get(m.tool_call_id) ?? orphanCall(m.tool_call_id));
    if (m.role !== 'assistant') continue;
    const step = steps.stepOf.get(i) ?? lastStep;
    if (step !== lastStep) {
      out.push(waypointEntry(d, step, steps, ctx));
      placeCondenses(step);
    }
    lastStep = step;
    if (m.content || m.reasoning) {
      lastAssistant = out.length;
      out.push(assistantEntry(runId, i, step, m));
    }
    for (const call of m.tool_calls ?? []) tool(step, call);
  }
  placeCondenses(Number.MAX_SAFE_INTEGER);
  const last = out[lastAssistant]?.build();
  if (d.run.state === 'completed' && last?.kind === 'assistant' && lastAssistant === out.length - 1) last.final = true;
  for (const m of d.inbox) {
    if (!m.delivered) out.push(made({ kind: 'user', key: `${runId}:q:${m.id}`, runId, text: m.text, queued: true }));
  }
  // Why the run stopped (a wait for approval is said by the header and the cards themselves).
  if (d.run.state !== 'completed' && d.run.state !== 'running' && d.run.state !== 'awaiting_approval') {
    out.push(
      made({
        kind: 'status',
        key: `${runId}:status`,
        runId,
        state: d.run.state,
        detail: d.run.state_detail,
        resumable: whyNotResume({ run: d.run, active: d.live.active }) === null,
      }),
    );
  }
  // No step held whole by the newest checkpoints: nothing of the end can be planned from them.
  const cut = d.newestOnly ? out.findIndex((p) => p.kind === 'waypoint' && p.step! >= fromStep) : 0;
  if (cut < 0) return [];
  const fromSeq = d.newestOnly ? (d.records.find((r) => r.step >= fromStep)?.seq ?? Infinity) : 0;
  return placeRestores(
    out.slice(cut),
    d.restores.filter((r) => r.checkpoint_seq >= fromSeq),
    [...(d.restoreTargets ?? []), ...d.records],
    (item) => made(item),
  );
}

/** An item that is as cheap to make as to plan (text by reference): made now, cut to what the view is sent. */
function made(whole: TranscriptItem): PlannedItem {
  const item = boundItem(whole);
  return {
    key: item.key,
    kind: item.kind,
    runId: item.runId,
    ...('step' in item ? { step: item.step } : {}),
    height: estimateHeight(item),
    pending: false,
    build: () => item,
  };
}

function lazy(base: Omit<PlannedItem, 'build'>, make: () => TranscriptItem): PlannedItem {
  let item: TranscriptItem | undefined;
  return { ...base, build: () => (item ??= boundItem(make())) };
}

function assistantEntry(
  runId: string,
  i: number,
  step: number,
  m: Extract<ChatMessage, { role: 'assistant' }>,
): PlannedItem {
  return made({
    kind: 'assistant',
    key: `${runId}:a:${i}`,
    runId,
    step,
    text: m.content ?? '',
    reasoning: m.reasoning ?? null,
    final: false,
  });
}

/** A tool card is the costly item (arguments, diff, result preview): built when its page is. */
function toolEntry(ctx: ToolContext, step: number, call: ToolCall): PlannedItem {
  if (isPending(ctx, call.id)) return { ...made(toolItem(ctx, step, call)), pending: true }; // its height depends on it
  return lazy(
    {
      key: `${ctx.runId}:t:${call.id}`,
      kind: 'tool',
      runId: ctx.runId,
      step,
      height: toolCardHeight(null),
      pending: false,
    },
    () => toolItem(ctx, step, call),
  );
}

interface StepIndex {
  /** Index of each assistant message → the step whose post_llm checkpoint holds it. */
  stepOf: Map<number, number>;
  /** Each step's checkpoints, oldest first. */
  records: Map<number, RunRecord[]>;
  /** Each step's tool calls, in the model's order. */
  calls: Map<number, { id: string; name: string; args: string }[]>;
  latest: number;
}

function stepIndex(d: RunData, message: (i: number) => ChatMessage | undefined): StepIndex {
  const stepOf = new Map<number, number>();
  const records = new Map<number, RunRecord[]>();
  for (const r of d.records) {
    if (r.phase === 'post_llm' && r.snapshot) stepOf.set(r.snapshot.message_count - 1, r.step);
    const list = records.get(r.step);
    if (list) list.push(r);
    else records.set(r.step, [r]);
  }
  const calls = new Map<number, { id: string; name: string; args: string }[]>();
  for (const [i, step] of stepOf) {
    const m = message(i);
    if (m?.role !== 'assistant') continue;
    const list = calls.get(step) ?? [];
    for (const c of m.tool_calls ?? []) list.push({ id: c.id, name: c.function.name, args: c.function.arguments });
    calls.set(step, list);
  }
  return { stepOf, records, calls, latest: d.records[d.records.length - 1]?.step ?? 0 };
}

/**
 * The marker of a step: its checkpoints and what happened in it (the same words as the Runs tree).
 * "Here" is the step's first checkpoint: where the marker stands, before the step's model call and
 * tools, so restoring files (or forking with them) to it undoes what the step changed.
 */
function waypointEntry(d: RunData, step: number, steps: StepIndex, ctx: ToolContext): PlannedItem {
  const runId = d.run.run_id;
  const key = `${runId}:w:${step}`;
  const base = { key, kind: 'waypoint' as const, runId, step, height: WAYPOINT_HEIGHT, pending: false };
  return lazy(base, (): WaypointItem => {
    const records = steps.records.get(step) ?? [];
    const phases = records.map((r) => ({ seq: r.seq, phase: r.phase }));
    const seq = phases[0]?.seq ?? null;
    const batchEnd = records.findLast((r) => r.phase === 'post_tool_batch' || r.phase === 'post_subagent_batch');
    const calls = steps.calls.get(step) ?? [];
    const summary = summarizeStep({
      step,
      calls: calls.map((c) => ({ id: c.id, name: c.name, args: parseToolArgs(c.args) })),
      approvals: ctx.approvals,
      answered: records.some((r) => r.phase === 'post_llm'),
      batchEnded: Boolean(batchEnd),
      terminal: records.some((r) => r.phase === 'run_terminal'),
      failures: count(batchEnd?.payload?.tool_failures ?? batchEnd?.payload?.subagent_failures),
      replayed: calls.filter((c) => ctx.execs.get(c.id)?.replayed).length,
      latest: step === steps.latest,
      runState: d.run.state,
    });
    return {
      kind: 'waypoint',
      key,
      runId,
      step,
      summary: summary.text,
      phases,
      seq,
      filesAfter: seq !== null && ctx.lastChangeSeq !== null && seq <= ctx.lastChangeSeq,
      running: d.live.active,
    };
  });
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
