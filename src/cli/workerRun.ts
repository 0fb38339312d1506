// One run a worker has claimed and holds the lease of: the decisions clients posted for it are
// judged against what the run waits for (bound to the call and its arguments' hash; anything else
// is refused, saying why) and recorded under the worker's lease, then the run is driven until it
// stops. Where it stopped goes back on its hand-off row — waiting for a decision, or stopped — so
// the workers take it again only when there is something to do.
import { describeDecider } from '../runner/decider';
import type { DecisionInput, StartedRun } from '../runner/runner';
import { errorMessage } from '../common/errors';
import { InvalidEditedArgumentsError, StaleApprovalError } from '../runner/errors';
import { InvalidInputError } from '../store/api/errors';
import { isTerminalState, type Approval, type RunState } from '../store/api/schema';
import type { RunLease } from '../store/api/types';
import type { HandOffStatus, PostedDecision } from '../store/pg/handoffs';
import type { CliContext } from './compose';
import type { PgStore } from '../store/pg/store';

export interface Checkout {
  /** The checkout's folder. */
  dir: string;
  /** Its workspace identity: the key of its runs in the shared store. */
  workspace: string;
  ctx: CliContext;
  store: PgStore;
}

/** What the hand-off row says after the run stopped in `state`. */
export function statusAfter(state: RunState): HandOffStatus {
  if (state === 'awaiting_approval') return 'waiting';
  // Let go (brought back, the worker stopping): another owner goes on with it at once.
  if (state === 'interrupted') return 'ready';
  return 'stopped';
}

/** Settles the decisions posted for the run: those that fit what it waits for are returned for recording. */
export async function judgeDecisions(
  c: Checkout,
  runId: string,
): Promise<{ use: { posted: PostedDecision; input: DecisionInput }[]; pending: Approval[] }> {
  const handoffs = c.store.engine.handoffs;
  const [posted, approvals] = await Promise.all([handoffs.openDecisions(runId), c.store.listApprovals(runId)]);
  const pending = approvals.filter((a) => a.decision === null);
  const use: { posted: PostedDecision; input: DecisionInput }[] = [];
  for (const p of posted) {
    const why = refusal(p, approvals, use);
    if (why === 'recorded') await handoffs.settle(p.id, 'recorded', 'already recorded in the run');
    else if (why) await handoffs.settle(p.id, 'refused', why);
    else use.push({ posted: p, input: toInput(p) });
  }
  return { use, pending };
}

function refusal(
  p: PostedDecision,
  approvals: Approval[],
  taken: { posted: PostedDecision }[],
): string | 'recorded' | null {
  const a = approvals.find((x) => x.tool_call_id === p.toolCallId);
  if (!a) return `${p.toolCallId} is not a call this run asked about`;
  if (a.decision) {
    // A worker that recorded it and died before saying so: it is in the run.
    const same =
      a.input_hash === p.inputHash && a.decision.kind === p.decision.kind && a.decision.by?.user === p.by.user;
    if (same && a.decision.by?.host === p.by.host) return 'recorded';
    return `${p.toolCallId} was decided already${a.decision.by ? ` by ${describeDecider(a.decision.by)}` : ''}`;
  }
  if (a.input_hash !== p.inputHash)
    return `the arguments of ${p.toolCallId} are not the ones shown (hash ${p.inputHash.slice(0, 12)}; now ${a.input_hash.slice(0, 12)}): look again`;
  if (taken.some((t) => t.posted.toolCallId === p.toolCallId)) return `another decision on ${p.toolCallId} came first`;
  return null;
}

function toInput(p: PostedDecision): DecisionInput {
  const base = { toolCallId: p.toolCallId, inputHash: p.inputHash, by: p.by };
  const d = p.decision;
  if (d.kind === 'reject') return { ...base, kind: 'reject', reason: d.reason };
  if (d.kind === 'approve_edited') return { ...base, kind: 'approve_edited', argumentsJson: d.argumentsJson };
  return { ...base, kind: 'approve', ...(d.access ? { access: d.access } : {}) };
}

/**
 * Takes the claimed run on: records what was decided for it and resumes it with the worker's lease.
 * undefined: nothing to drive (finished, or still waiting) — its status is set and the lease let go.
 */
export async function takeOn(
  c: Checkout,
  runId: string,
  lease: RunLease,
  token: string,
  log: (line: string) => void,
): Promise<StartedRun | undefined> {
  const handoffs = c.store.engine.handoffs;
  const park = async (status: HandOffStatus, detail: string | null) => {
    await handoffs.setStatus(runId, token, status, detail);
    await lease.release();
    return undefined;
  };
  const run = await c.store.getRun(runId);
  if (!run || isTerminalState(run.state)) return park('stopped', run ? `${run.state}` : 'deleted');
  // Driven from here on: should this worker die, the next one takes it without waiting for a decision.
  await handoffs.setStatus(runId, token, 'ready', null);
  const { use, pending } = await judgeDecisions(c, runId);
  if (pending.length === 0) return c.ctx.runner.resume(runId, { confirmed: true, lease });
  if (use.length === 0) return park('waiting', run.state_detail);
  let handle: StartedRun | undefined;
  try {
    handle = await c.ctx.runner.decideApprovals(
      runId,
      use.map((u) => u.input),
      { lease },
    );
  } catch (err) {
    // What the run refuses is said to whoever decided; a store that failed under us leaves them open.
    const refused =
      err instanceof StaleApprovalError ||
      err instanceof InvalidEditedArgumentsError ||
      err instanceof InvalidInputError;
    if (!refused) throw err;
    for (const u of use) await handoffs.settle(u.posted.id, 'refused', errorMessage(err));
    log(`run ${runId}: decisions refused: ${errorMessage(err)}`);
    return park('waiting', run.state_detail);
  }
  for (const u of use) await handoffs.settle(u.posted.id, 'recorded', null);
  log(`run ${runId}: recorded ${use.map((u) => `${u.input.kind} ${u.input.toolCallId}`).join(', ')}`);
  return handle ?? park('waiting', run.state_detail);
}
