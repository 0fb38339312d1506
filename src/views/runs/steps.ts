// A run's checkpoints as the tree shows them: grouped by step, each step labelled the way a user
// reads it ("Step 3 · edit_file src/slugify.js · approved"). The label comes from what the records
// already hold — the tool calls in the post_llm snapshot header, the batch's failure count, the
// replay counter — plus the run's approvals, so no step's snapshot lists are ever loaded. vscode-free.
import type { Approval, CheckpointRecord, RunSummary, ToolCall } from '../../store/api/schema';
import { summarizeStep, type StepCall, type StepFacts, type StepOutcome } from '../shared/stepSummary';
import { asRecord, parseToolArgs } from '../shared/toolCalls';

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

export type { StepOutcome, StepCall, CallDecision } from '../shared/stepSummary';

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

export interface TreeStepFacts {
  run: RunSummary;
  /** The run's approvals by tool_call_id. */
  approvals: ReadonlyMap<string, Approval>;
}

/**
 * Labels steps (newest first; the first is the run's latest, pages start at the newest). The newer
 * neighbour tells how many calls of a step were replayed.
 */
export function describeSteps(steps: readonly StepRecords[], facts: TreeStepFacts): StepView[] {
  return steps.map((s, i) => describeStep(s, facts, { newer: steps[i - 1], latest: i === 0 }));
}

function describeStep(
  s: StepRecords,
  facts: TreeStepFacts,
  at: { newer: StepRecords | undefined; latest: boolean },
): StepView {
  const find = (phase: CheckpointRecord['phase']) => s.records.findLast((r) => r.phase === phase);
  const postLlm = find('post_llm');
  const batchEnd = find('post_tool_batch') ?? find('post_subagent_batch');
  const summary = summarizeStep({
    step: s.step,
    calls: stepCalls(s, postLlm, facts.approvals),
    approvals: facts.approvals,
    answered: Boolean(postLlm),
    batchEnded: Boolean(batchEnd),
    terminal: s.records.some((r) => r.phase === 'run_terminal'),
    failures: num(batchEnd?.payload.tool_failures ?? batchEnd?.payload.subagent_failures),
    replayed: replayedIn(s, postLlm, at.newer),
    latest: at.latest,
    runState: facts.run.state,
  });
  return {
    runId: facts.run.run_id,
    step: s.step,
    label: summary.outcome === 'start' ? 'Start' : `Step ${s.step} · ${summary.text}`,
    outcome: summary.outcome,
    calls: summary.calls,
    failures: summary.failures,
    replayed: summary.replayed,
    records: s.records,
  };
}

/** The step's tool calls: from the model's response (post_llm), else from its approvals. */
function stepCalls(
  s: StepRecords,
  postLlm: CheckpointRecord | undefined,
  approvals: ReadonlyMap<string, Approval>,
): StepFacts['calls'] {
  const fromResponse: ToolCall[] = postLlm?.snapshot?.pending_llm_response?.message.tool_calls ?? [];
  const calls = fromResponse.map((c) => ({
    id: c.id,
    name: c.function.name,
    args: parseToolArgs(c.function.arguments),
  }));
  if (!postLlm)
    for (const a of approvals.values())
      if (a.step === s.step) calls.push({ id: a.tool_call_id, name: a.tool_name, args: asRecord(a.arguments) });
  return calls;
}

/** Calls of this step satisfied from the effect journal: the replay counter from its response to the next snapshot. */
function replayedIn(s: StepRecords, postLlm: CheckpointRecord | undefined, newer: StepRecords | undefined): number {
  const before = postLlm?.snapshot?.replayed_effect_count;
  const after = [...s.records.filter((r) => r.seq > (postLlm?.seq ?? Infinity)), ...(newer?.records ?? [])].find(
    (r) => r.snapshot,
  )?.snapshot?.replayed_effect_count;
  return before === undefined || after === undefined ? 0 : Math.max(0, after - before);
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
