// The run view's header and composer hint: the run's state and detail, its actions, the context
// meter, its notices (imported, recorded in another folder), and what the composer will do with a
// message — kept with the view that shows them.
import { awaitingApprovalDetail } from '../../runner/loop';
import { type Approval, isTerminalState, type RunSummary, type RuntimeSnapshot } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { STATE_LABELS } from '../shared/runs';
import type { RunAction } from './items';
import type { RunHeader } from './protocol';
import type { RunData } from './runData';
import { ContextSize } from '../../store/api/schema';
import { formatWindow } from '../../runner/context/window';
import { runReasons, type RunGuardReasons } from '../../actions/guards';
import { localMinute } from '../../common/format';
import { cut, FIELD_MAX_CHARS } from './bounds';

export interface RunHeaderOptions {
  /** The run executes in this window. */
  active: boolean;
  /** The folder of this window, where the run works (whatever its records name); a run recorded in another folder (imported, moved) says so. */
  workspaceRoot?: string | undefined;
  /** The guards' answers for the run (actions/guards.ts); default: from the summary and `active` alone. */
  whyNot?: RunGuardReasons;
}

/** What a run's header shows beyond its summary: its latest snapshot, waiting calls, newest checkpoints. */
export interface HeaderData {
  snapshot: RuntimeSnapshot | null;
  pending: readonly Pick<Approval, 'tool_call_id' | 'input_hash' | 'retry'>[];
  /** The newest checkpoints (a dozen is plenty), newest first: the context meter's latest figure. */
  newestFirst: readonly { payload?: Record<string, unknown> }[];
}

/** The header's data from what the transcript read of the run (no second read). */
export function headerDataOf(d: RunData): HeaderData {
  return {
    snapshot: d.snapshot,
    pending: d.approvals.filter((a) => a.decision === null),
    newestFirst: d.records.slice(-12).reverse(),
  };
}

/** The header's data read from the store (a run the transcript has not read whole yet). */
export async function readHeaderData(store: CheckpointStore, run: RunSummary): Promise<HeaderData> {
  const [snap, pending, newestFirst] = await Promise.all([
    store.loadSnapshot(run.run_id).catch(() => undefined),
    run.pending_approvals > 0 ? store.listApprovals(run.run_id, { pendingOnly: true }) : [],
    store.list(run.run_id, { limit: 12 }).catch(() => []),
  ]);
  return { snapshot: snap?.snapshot ?? null, pending, newestFirst };
}

/** A run's header read from the store. */
export async function runHeader(store: CheckpointStore, run: RunSummary, o: RunHeaderOptions): Promise<RunHeader> {
  return headerOf(run, await readHeaderData(store, run), o);
}

export function headerOf(run: RunSummary, h: HeaderData, o: RunHeaderOptions): RunHeader {
  const whyNot = o.whyNot ?? runReasons({ run, active: o.active });
  const s = h.snapshot;
  const budget = (
    s?.context as
      { budget?: { max_steps?: number | null; max_cost_usd?: number | null; max_tokens?: number | null } } | undefined
  )?.budget;
  const limits = [
    budget?.max_steps ? `${budget.max_steps} steps` : '',
    budget?.max_tokens ? `${budget.max_tokens} tokens` : '',
    budget?.max_cost_usd ? `$${budget.max_cost_usd}` : '',
  ].filter(Boolean);
  return {
    runId: run.run_id,
    title: cut(run.title, FIELD_MAX_CHARS),
    state: run.state,
    stateLabel: STATE_LABELS[run.state],
    detail: cutOrNull(stateDetail(run)),
    model: run.model,
    step: run.step,
    tokens: s?.usage.total_tokens ?? 0,
    context: contextMeter(h.newestFirst),
    usage: {
      prompt: s?.usage.input_tokens ?? 0,
      cached: s?.usage.cached_tokens ?? null,
      completion: s?.usage.output_tokens ?? 0,
      reasoning: s?.usage.reasoning_tokens ?? null,
      estimated: s?.usage.estimated ?? false,
    },
    costUsd: s ? s.total_cost_usd : null,
    budget: limits.length > 0 ? limits.join(' · ') : null,
    pendingApprovals: run.pending_approvals,
    // A blocked command's retry is answered on its card (which access), never by Approve all.
    pendingCalls: h.pending
      .filter((a) => !a.retry)
      .map((a) => ({ toolCallId: a.tool_call_id, inputHash: a.input_hash })),
    actions: runActions(o.active, whyNot),
    whyNot: { restore: whyNot.restore, resume: whyNot.resume },
    notices: [
      ...(whyNot.withWorkers ? [whyNot.withWorkers] : []),
      ...runNotices(run, (s?.context as { workspace_root?: unknown } | undefined)?.workspace_root, o.workspaceRoot),
    ].map((n) => cut(n, FIELD_MAX_CHARS)),
  };
}

/** A run's own words (an error's text) within the bound of what the view is sent. */
function cutOrNull(s: string | null): string | null {
  return s === null ? null : cut(s, FIELD_MAX_CHARS);
}

/** The newest request size a checkpoint recorded (pre_llm, or a condense's result): "context: 41% of 128k". */
export function contextMeter(newestFirst: readonly { payload?: Record<string, unknown> }[]): RunHeader['context'] {
  for (const r of newestFirst) {
    const size = ContextSize.safeParse(r.payload?.context);
    if (!size.success) continue;
    const { tokens, window, estimated } = size.data;
    const pct = Math.round((100 * tokens) / window);
    return { tokens, window, estimated, label: `context: ${pct}% of ${formatWindow(window)}` };
  }
  return null;
}

/** What the user should know before acting on this run: what its import reset, and where it works now. */
export function runNotices(run: RunSummary, recordedRoot: unknown, workspaceRoot: string | undefined): string[] {
  const notices: string[] = [];
  if (run.imported) {
    notices.push([`Imported ${localMinute(run.imported.ms)}.`, ...run.imported.notes].join(' '));
  }
  if (typeof recordedRoot === 'string' && workspaceRoot && !sameFolder(recordedRoot, workspaceRoot))
    notices.push(`This run was recorded in ${recordedRoot}; it works in this workspace now.`);
  return notices;
}

function sameFolder(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/[\\/]+$/, '');
  return norm(a) === norm(b);
}

/** While calls wait, the count is today's, not the one stored when the run paused (some may be decided). */
export function stateDetail(run: RunSummary): string | null {
  if (run.state !== 'awaiting_approval') return run.state_detail;
  return run.pending_approvals > 0
    ? awaitingApprovalDetail(run.pending_approvals)
    : 'Decisions recorded; the run continues.';
}

/**
 * The header's buttons: Cancel while it executes here, Resume, Continue in background and Bring
 * back here where their guards allow them.
 */
export function runActions(
  active: boolean,
  whyNot: Pick<RunGuardReasons, 'resume' | 'handOff' | 'takeBack'>,
): RunAction[] {
  const actions: RunAction[] = [];
  if (active) actions.push('cancel');
  else if (whyNot.resume === null) actions.push('resume');
  if (whyNot.handOff === null) actions.push('continueInBackground');
  if (whyNot.takeBack === null) actions.push('bringBack');
  actions.push('fork', 'export', 'openInTree');
  return actions;
}

/** What Send does for the thread's latest run, said before the user sends. */
export function composerHint(run: RunSummary, active: boolean, withWorkers = false): string {
  if (active) return 'The agent is working: your message joins the conversation at its next step.';
  if (withWorkers) return 'The workers have this run: bring it back here to send it a message.';
  if (run.pending_approvals > 0)
    return 'Queued until the waiting tool calls are decided; the run then continues with it.';
  return isTerminalState(run.state)
    ? 'Send a follow-up: the conversation continues as a new run in this thread.'
    : 'Send a message to continue from where this run stopped (a new run in this thread).';
}
