// "What happened in step N", once for both views: the Runs tree labels a step with it ("Step 3 ·
// edit_file src/slugify.js · approved") and the run view's waypoint says the same words. Each view
// gathers the facts from what it has read (the tree from checkpoint headers, the run view from the
// conversation); the judgement and the wording are here. The approval words of a call are here too,
// for the tree's tooltips and the run view's cards. vscode-free.
import type { Approval, RunState } from '../../store/api/schema';
import { STATE_LABELS } from './runs';
import { toolTitle } from './toolCalls';

/** What became of a call: its approval's decision, or "auto" when it needed none. */
export type CallDecision = 'waiting' | 'rejected' | 'edited' | 'approved' | 'auto';

export function callDecision(approval: Pick<Approval, 'decision'> | undefined): CallDecision {
  if (!approval) return 'auto';
  if (approval.decision === null) return 'waiting';
  return approval.decision.kind === 'approve'
    ? 'approved'
    : approval.decision.kind === 'reject'
      ? 'rejected'
      : 'edited';
}

/** A call's decision in a sentence (tooltips). */
export const DECISION_WORDS: Record<CallDecision, string> = {
  waiting: 'waiting for approval',
  rejected: 'rejected',
  edited: 'approved with edited arguments',
  approved: 'approved',
  auto: 'ran without asking',
};

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

export interface StepCall {
  id: string;
  /** "edit_file src/slugify.js" */
  title: string;
  decision: CallDecision;
  /** The reason given with a rejection. */
  reason: string | null;
}

/** What a view knows of one step. */
export interface StepFacts {
  step: number;
  /** The calls the model asked for in this step, in its order. */
  calls: readonly { id: string; name: string; args: Record<string, unknown> | null }[];
  /** The run's approvals by tool_call_id. */
  approvals: ReadonlyMap<string, Approval>;
  /** The model's answer of this step is recorded (its post_llm checkpoint). */
  answered: boolean;
  /** The step's tool (or subagent) batch finished. */
  batchEnded: boolean;
  /** The run ended in this step (its run_terminal checkpoint). */
  terminal: boolean;
  /** Calls that failed in the batch (rejected ones included, as the batch counts them). */
  failures: number;
  /** Calls satisfied from the effect journal instead of running again. */
  replayed: number;
  /** The run's latest step: an unfinished one says what the run is doing, or why it stopped. */
  latest: boolean;
  runState: RunState;
}

export interface StepSummary {
  outcome: StepOutcome;
  calls: StepCall[];
  /** Failed calls, rejections apart (a rejection is said once, as rejected). */
  failures: number;
  replayed: number;
  /** "edit_file src/slugify.js · approved", "read_file a.js, search_text x +1 · auto", "final answer". */
  text: string;
}

const TITLE_CHARS = 48;
const SHOWN_CALLS = 2;

export function summarizeStep(f: StepFacts): StepSummary {
  const calls = f.calls.map((c) => {
    const a = f.approvals.get(c.id);
    return {
      id: c.id,
      title: toolTitle(c.name, c.args, TITLE_CHARS),
      decision: callDecision(a),
      reason: a?.decision?.reason ?? null,
    };
  });
  const rejected = calls.filter((c) => c.decision === 'rejected').length;
  const failures = Math.max(0, f.failures - rejected);
  const { outcome, verdict } = judge(f, calls, failures);
  const parts = [...(calls.length > 0 ? [callsTitle(calls)] : []), ...(verdict ? [verdict] : [])];
  return { outcome, calls, failures, replayed: f.replayed, text: outcome === 'start' ? 'start' : parts.join(' · ') };
}

function judge(f: StepFacts, calls: readonly StepCall[], failures: number): { outcome: StepOutcome; verdict: string } {
  if (f.step === 0 && !f.answered) return { outcome: 'start', verdict: '' };
  // Unfinished: the latest step says what the run is doing (or why it stopped).
  const unfinished = (working: string) =>
    f.latest && f.runState === 'running'
      ? { outcome: 'working' as const, verdict: working }
      : { outcome: 'stopped' as const, verdict: f.latest ? STATE_LABELS[f.runState] : 'interrupted' };
  if (calls.length === 0) {
    if (!f.answered) return unfinished('thinking…');
    return f.terminal ? { outcome: 'final', verdict: 'final answer' } : { outcome: 'answer', verdict: 'answer' };
  }
  const decisions = new Set(calls.map((c) => c.decision));
  if (decisions.has('waiting')) return { outcome: 'waiting', verdict: 'waiting for approval' };
  if (!f.batchEnded) {
    if (decisions.size === 1 && decisions.has('rejected')) return { outcome: 'rejected', verdict: 'rejected' };
    return unfinished('running tools…');
  }
  const said = (['rejected', 'edited', 'approved'] as const).filter((d) => decisions.has(d));
  const words: string[] = said.length > 0 ? [...said] : ['auto'];
  const all = calls.length;
  if (f.replayed > 0) words.push(f.replayed >= all ? 'replayed' : `${f.replayed} replayed`);
  if (failures > 0) words.push(failures >= all ? 'failed' : `${failures} failed`);
  const outcome: StepOutcome =
    said[0] === 'rejected' ? 'rejected' : failures > 0 ? 'failed' : f.replayed > 0 ? 'replayed' : (said[0] ?? 'auto');
  return { outcome, verdict: words.join(', ') };
}

function callsTitle(calls: readonly StepCall[]): string {
  const shown = calls.slice(0, SHOWN_CALLS).map((c) => c.title);
  return calls.length > SHOWN_CALLS ? `${shown.join(', ')} +${calls.length - SHOWN_CALLS}` : shown.join(', ');
}
