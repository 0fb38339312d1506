// A run's checkpoints as the tree shows them: grouped by step, each step labelled the way a user
// reads it ("Step 3 · edit_file src/slugify.js · approved"). The label comes from what the records
// already hold — the tool calls in the post_llm snapshot header, the batch's failure count, the
// replay counter — plus the run's approvals, so no step's snapshot lists are ever loaded. vscode-free.
import type { Approval, CheckpointRecord, RunSummary, ToolCall } from '../../store/api/schema';
import { toolTitle } from '../run/transcript';
import { STATE_LABELS } from './format';

export interface StepRecords {
  step: number;
  /** Oldest first, as the phases happened. */
  records: CheckpointRecord[];
}

/** Records, newest first (as the store pages them) → steps, newest first. */
export function groupBySteps(newestFirst: readonly CheckpointRecord[]): StepRecords[] {
  const steps: StepRecords[] = [];
  for (const r of newestFirst) {
    const current = steps[steps.length - 1];
    if (current?.step === r.step) current.records.unshift(r);
    else steps.push({ step: r.step, records: [r] });
  }
  return steps;
}

/** What a step came to, most telling first; the tree picks its icon from it. */
export type StepOutcome =
  | 'start'
  | 'working'
  | 'waiting'
  | 'stopped'
  | 'rejected'
  | 'failed'
  | 'replayed'
  | 'edited'
  | 'approved'
  | 'auto'
  | 'answer'
  | 'final';

export type CallDecision = 'waiting' | 'rejected' | 'edited' | 'approved' | 'auto';

export interface StepCall {
  id: string;
  /** "edit_file src/slugify.js" */
  title: string;
  decision: CallDecision;
  /** The reason given with a rejection. */
  reason: string | null;
}

export interface StepView {
  runId: string;
  step: number;
  label: string;
  outcome: StepOutcome;
  calls: StepCall[];
  failures: number;
  replayed: number;
  /** Oldest first. */
  records: CheckpointRecord[];
}

export interface StepFacts {
  run: RunSummary;
  /** The run's approvals by tool_call_id. */
  approvals: ReadonlyMap<string, Approval>;
}

const TITLE_CHARS = 48;
const SHOWN_CALLS = 2;

/**
 * Labels steps (newest first; the first is the run's latest, pages start at the newest). The newer
 * neighbour tells how many calls of a step were replayed.
 */
export function describeSteps(steps: readonly StepRecords[], facts: StepFacts): StepView[] {
  return steps.map((s, i) => describeStep(s, facts, { newer: steps[i - 1], latest: i === 0 }));
}

function describeStep(
  s: StepRecords,
  facts: StepFacts,
  at: { newer: StepRecords | undefined; latest: boolean },
): StepView {
  const find = (phase: CheckpointRecord['phase']) => s.records.findLast((r) => r.phase === phase);
  const postLlm = find('post_llm');
  const calls = stepCalls(s, postLlm, facts.approvals);
  const batchEnd = find('post_tool_batch') ?? find('post_subagent_batch');
  const rejected = calls.filter((c) => c.decision === 'rejected').length;
  // A rejected call counts as a failed one in the batch's payload; it is said once, as rejected.
  const failures = Math.max(0, num(batchEnd?.payload.tool_failures ?? batchEnd?.payload.subagent_failures) - rejected);
  const replayed = replayedIn(s, postLlm, at.newer);
  const view = { runId: facts.run.run_id, step: s.step, calls, failures, replayed, records: s.records };
  const { outcome, verdict } = judge(s, {
    calls,
    failures,
    replayed,
    ended: Boolean(batchEnd),
    postLlm,
    run: facts.run,
    latest: at.latest,
  });
  if (outcome === 'start') return { ...view, outcome, label: 'Start' };
  const parts = [`Step ${s.step}`];
  if (calls.length > 0) parts.push(callsTitle(calls));
  if (verdict) parts.push(verdict);
  return { ...view, outcome, label: parts.join(' · ') };
}

/** The step's tool calls: from the model's response (post_llm), else from its approvals. */
function stepCalls(
  s: StepRecords,
  postLlm: CheckpointRecord | undefined,
  approvals: ReadonlyMap<string, Approval>,
): StepCall[] {
  const fromResponse: ToolCall[] = postLlm?.snapshot?.pending_llm_response?.message.tool_calls ?? [];
  const byId = new Map(
    fromResponse.map((c) => [c.id, { name: c.function.name, args: parseArgs(c.function.arguments) }]),
  );
  if (!postLlm)
    for (const a of approvals.values())
      if (a.step === s.step) byId.set(a.tool_call_id, { name: a.tool_name, args: asRecord(a.arguments) });
  return [...byId].map(([id, c]) => {
    const a = approvals.get(id);
    const decision: CallDecision = !a
      ? 'auto'
      : a.decision === null
        ? 'waiting'
        : a.decision.kind === 'approve'
          ? 'approved'
          : a.decision.kind === 'reject'
            ? 'rejected'
            : 'edited';
    return { id, title: toolTitle(c.name, c.args, TITLE_CHARS), decision, reason: a?.decision?.reason ?? null };
  });
}

/** Calls of this step satisfied from the effect journal: the replay counter from its response to the next snapshot. */
function replayedIn(s: StepRecords, postLlm: CheckpointRecord | undefined, newer: StepRecords | undefined): number {
  const before = postLlm?.snapshot?.replayed_effect_count;
  const after = [...s.records.filter((r) => r.seq > (postLlm?.seq ?? Infinity)), ...(newer?.records ?? [])].find(
    (r) => r.snapshot,
  )?.snapshot?.replayed_effect_count;
  return before === undefined || after === undefined ? 0 : Math.max(0, after - before);
}

interface Judged {
  outcome: StepOutcome;
  verdict: string;
}

function judge(
  s: StepRecords,
  f: {
    calls: StepCall[];
    failures: number;
    replayed: number;
    ended: boolean;
    postLlm: CheckpointRecord | undefined;
    run: RunSummary;
    latest: boolean;
  },
): Judged {
  const has = (phase: CheckpointRecord['phase']) => s.records.some((r) => r.phase === phase);
  if (s.step === 0 && !f.postLlm) return { outcome: 'start', verdict: '' };
  // Unfinished: the latest step says what the run is doing (or why it stopped).
  const unfinished = (working: string): Judged =>
    f.latest && f.run.state === 'running'
      ? { outcome: 'working', verdict: working }
      : { outcome: 'stopped', verdict: f.latest ? STATE_LABELS[f.run.state] : 'interrupted' };
  if (f.calls.length === 0) {
    if (!f.postLlm) return unfinished('thinking…');
    return has('run_terminal')
      ? { outcome: 'final', verdict: 'final answer' }
      : { outcome: 'answer', verdict: 'answer' };
  }
  const decisions = new Set(f.calls.map((c) => c.decision));
  if (decisions.has('waiting')) return { outcome: 'waiting', verdict: 'waiting for approval' };
  if (!f.ended) {
    if (decisions.size === 1 && decisions.has('rejected')) return { outcome: 'rejected', verdict: 'rejected' };
    return unfinished('running tools…');
  }
  const said = (['rejected', 'edited', 'approved'] as const).filter((d) => decisions.has(d));
  const words: string[] = said.length > 0 ? [...said] : ['auto'];
  const all = f.calls.length;
  if (f.replayed > 0) words.push(f.replayed >= all ? 'replayed' : `${f.replayed} replayed`);
  if (f.failures > 0) words.push(f.failures >= all ? 'failed' : `${f.failures} failed`);
  const outcome: StepOutcome =
    said[0] === 'rejected' ? 'rejected' : f.failures > 0 ? 'failed' : f.replayed > 0 ? 'replayed' : (said[0] ?? 'auto');
  return { outcome, verdict: words.join(', ') };
}

function callsTitle(calls: readonly StepCall[]): string {
  const shown = calls.slice(0, SHOWN_CALLS).map((c) => c.title);
  return calls.length > SHOWN_CALLS ? `${shown.join(', ')} +${calls.length - SHOWN_CALLS}` : shown.join(', ');
}

function parseArgs(json: string): Record<string, unknown> | null {
  try {
    return asRecord(JSON.parse(json));
  } catch {
    return null;
  }
}

function asRecord(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** How many of `newestFirst` make up its first `n` whole steps; -1 when it holds no more than n steps (the last may be cut). */
export function endOfSteps(newestFirst: readonly CheckpointRecord[], n: number): number {
  let seen = 0;
  for (let i = 0; i < newestFirst.length; i++) {
    if (i === 0 || newestFirst[i]!.step !== newestFirst[i - 1]!.step) seen++;
    if (seen > n) return i;
  }
  return -1;
}
