// The plan of one tool batch: what each tool call of a pending LLM response needs (replay from the
// effect journal, approval, policy denial, a clear error, or a run); batch.ts carries it out.
// The two-phase journal: a durable *intent* before a side-effecting tool runs, the *result* after.
// An intent without a result is *uncertain*: side-effecting tools go back to the user, never re-run
// silently (docs/design.md, resume semantics 6).
import type {
  Approval,
  ApprovalDecision,
  Damage,
  Effect,
  SandboxAccess,
  SandboxBlocked,
  SeenTool,
  ToolCall,
} from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { toolDrift } from '../tools/external';
import type { JudgedPaths } from '../tools/paths';
import { COMMAND_POLICY } from '../sandbox';
import type { CommandSandbox, PolicyVerdict } from '../tools/policy';
import type { ToolRegistry } from '../tools/registry';
import type { Tool } from '../tools/types';
import { grantedDomains, MAX_ATTEMPTS, retryReason, wantsRetry, withDomains } from './sandboxed';

export type CallPlan =
  | { kind: 'replay'; call: ToolCall; effect: Effect }
  | { kind: 'error'; call: ToolCall; output: string }
  | {
      kind: 'run';
      call: ToolCall;
      tool: Tool;
      args: unknown;
      hash: string;
      edited: boolean;
      approvedBy: 'policy' | 'user';
      /** The paths as the policy resolved them: the tool refuses one that now leads elsewhere. */
      judged?: JudgedPaths;
      /** A command runs in this OS sandbox (absent: outside it). */
      sandbox?: CommandSandbox;
      /** The call ran, the sandbox blocked it, and the user approved running it again with this access. */
      retry?: { access: SandboxAccess; blocked: SandboxBlocked | undefined };
    }
  | { kind: 'delegate'; call: ToolCall; tool: Tool; args: unknown; hash: string }
  | { kind: 'ask'; call: ToolCall; request: ApprovalRequest };

export interface ApprovalRequest {
  tool: Tool;
  args: unknown;
  hash: string;
  uncertain: boolean;
  reason: string;
  /** Asks to run a call the sandbox blocked again, with more access. */
  retry?: NonNullable<Approval['retry']>;
}

export interface PlanInputs {
  calls: readonly ToolCall[];
  tools: ToolRegistry;
  policy(tool: Tool, args: unknown): PolicyVerdict;
  approvals: ReadonlyMap<string, Approval>;
  effects: ReadonlyMap<string, Effect>;
  /** The run's damage records merged (null: never damaged), and the step being planned. */
  damage: Damage | null;
  step: number;
  /** Calls whose process was found still running on resume and waited for (their output is lost). */
  waited: ReadonlySet<string>;
  /** The external tools the model was offered for this response (LlmResponse.tools_seen). */
  seen?: readonly SeenTool[];
}

/** Decides every call of a batch. Pure: no I/O, so it is the same on first run and on resume. */
export function planBatch(p: PlanInputs): CallPlan[] {
  return p.calls.map((call) => planCall(call, p));
}

function planCall(call: ToolCall, p: PlanInputs): CallPlan {
  // Unknown tool, broken JSON, wrong arguments: a clear error result the model can correct.
  const prepared = p.tools.prepare(call);
  if (!prepared.ok) {
    const drift = toolDrift(call, prepared.tool, p.seen, p.effects.get(call.id));
    return { kind: 'error', call, output: drift ?? prepared.error.output };
  }
  const { tool } = prepared;

  const approval = p.approvals.get(call.id);
  const effect = p.effects.get(call.id);
  const retry = planRetry(call, tool, prepared.args, p, effect);
  if (retry) return retry;
  const bound = boundDecision(approval, tool, call, prepared.args, p.tools);
  const { decision, args, hash, edited } = bound;
  if (decision?.kind === 'reject') {
    const prefix = approval!.uncertain
      ? "Not run again (it may already have run before the interruption or the damage to the run's history)"
      : 'The user rejected this tool call';
    return { kind: 'error', call, output: `${prefix}: ${decision.reason ?? 'no reason given'}` };
  }
  if (tool.category === 'subagent') {
    // A subagent's journal is its child run (deterministic id): resuming never starts a second one.
    return { kind: 'delegate', call, tool, args, hash };
  }

  if (effect?.result && effect.input_hash === hash) return { kind: 'replay', call, effect };
  // An external tool that vanished or changed since the model was offered it is never called blind.
  const drift = toolDrift(call, tool, p.seen, effect);
  if (drift) return { kind: 'error', call, output: drift };
  const ask = (reason: string, uncertain: boolean): CallPlan => ({
    kind: 'ask',
    call,
    request: { tool, args, hash, uncertain, reason: bound.notApplied ? `${bound.notApplied} ${reason}` : reason },
  });
  if (effect && !effect.result && tool.sideEffecting) {
    const decidedAfterIntent = approval?.uncertain && decision && decision.decided_ms >= effect.intent_ms;
    if (decidedAfterIntent)
      return { kind: 'run', call, tool, args, hash, edited, approvedBy: 'user', ...sandboxOf(p, p.policy(tool, args)) };
    return ask(
      p.waited.has(call.id)
        ? 'This call was still running when the run resumed and was waited for; it has finished now, but its output was lost with the window. It has probably done its work: check before running it again.'
        : 'The window closed or crashed while this call was running or about to run, and its result was never recorded. It may already have run.',
      true,
    );
  }
  const damaged = !decision && tool.sideEffecting ? damageReason(p, hash) : null;
  if (damaged) return ask(damaged, true);
  // A decision that does not belong to this call: asked again, whatever the policy says.
  if (bound.notApplied) return ask('You are asked again.', approval!.uncertain);
  // Waiting for the user on exactly this call: it keeps waiting (a policy changed since does not decide it).
  if (approval && !decision) return ask(approval.reason, approval.uncertain);

  const policy = p.policy(tool, args);
  if (policy.verdict === 'deny') return { kind: 'error', call, output: `Denied by policy: ${policy.reason}` };
  if (policy.verdict === 'auto' || decision) {
    const approvedBy = decision ? 'user' : 'policy';
    return {
      kind: 'run',
      call,
      tool,
      args,
      hash,
      edited,
      approvedBy,
      ...(policy.judged ? { judged: policy.judged } : {}),
      ...sandboxOf(p, policy),
    };
  }
  return ask(policy.reason, false);
}

/** The verdict's sandbox, with the domains the user granted this run. */
function sandboxOf(p: PlanInputs, v: PolicyVerdict): { sandbox?: CommandSandbox } {
  return v.sandbox ? { sandbox: withDomains(v.sandbox, grantedDomains(p.approvals.values())) } : {};
}

/**
 * A command that ran in the sandbox and was blocked: asks to run it again with more access, or runs
 * it again as the user approved, or (rejected, or nothing more to allow) leaves it to the replay.
 * Never without a decision made after its result, for exactly its next attempt (the store checks too).
 */
function planRetry(call: ToolCall, tool: Tool, callArgs: unknown, p: PlanInputs, effect?: Effect): CallPlan | null {
  const blocked = effect?.result?.blocked;
  if (tool.category !== 'command' || !effect?.result || !effect.sandbox) return null;
  const attempt = (effect.attempts?.length ?? 0) + 2;
  const approval = p.approvals.get(call.id);
  const ran = ranArgs(p, tool, call, callArgs, effect, approval);
  if (!ran) return null;
  const request = { tool, args: ran.args, hash: ran.hash, uncertain: false };
  // Whatever else holds, the result stands: a retry approval replaced the approval of an edit.
  const replay: CallPlan = { kind: 'replay', call, effect };
  if (approval?.retry?.attempt === attempt && approval.input_hash === ran.hash) {
    const d = approval.decision;
    if (!d) return { kind: 'ask', call, request: { ...request, reason: approval.reason, retry: approval.retry } };
    if (d.kind !== 'approve' || !d.access) return replay;
    const base = p.policy(tool, ran.args);
    if (base.verdict === 'deny') return { kind: 'error', call, output: `Denied by policy: ${base.reason}` };
    const box = d.access.kind === 'domains' ? (base.sandbox ?? COMMAND_POLICY) : undefined;
    return {
      kind: 'run',
      call,
      ...request,
      edited: ran.edited,
      approvedBy: 'user',
      ...(box ? { sandbox: withDomains(box, grantedDomains(p.approvals.values())) } : {}),
      retry: { access: d.access, blocked },
    };
  }
  if (
    effect.sandbox.kind !== 'sandboxed' ||
    !wantsRetry(blocked) ||
    attempt > MAX_ATTEMPTS ||
    p.policy(tool, ran.args).verdict === 'deny'
  )
    return replay;
  return { kind: 'ask', call, request: { ...request, reason: retryReason(blocked), retry: { attempt, blocked } } };
}

/** The arguments the call ran with: its own, or the user's edit that its effect's hash names. */
function ranArgs(
  p: PlanInputs,
  tool: Tool,
  call: ToolCall,
  callArgs: unknown,
  effect: Effect,
  approval: Approval | undefined,
): { args: unknown; hash: string; edited: boolean } | null {
  const own = p.tools.inputHash(tool, callArgs);
  if (effect.input_hash === own) return { args: callArgs, hash: own, edited: false };
  const edit = approval?.decision?.kind === 'approve_edited' ? approval.decision.arguments : approval?.arguments;
  const edited = p.tools.prepareArgs(tool, call.id, edit, own);
  if (!edited.ok) return null;
  const hash = p.tools.inputHash(tool, edited.args);
  return hash === effect.input_hash ? { args: edited.args, hash, edited: true } : null;
}

interface BoundDecision {
  /** The stored decision when it belongs to this call as it stands, else null. */
  decision: ApprovalDecision | null;
  /** What runs: the call's own arguments, or the user's edited ones (validated here, never trusted from the record). */
  args: unknown;
  hash: string;
  edited: boolean;
  /** Why a stored decision was not applied (for the user, in the new request), or null. */
  notApplied: string | null;
}

/**
 * A stored decision applies only to the call it was made for: the approval's input_hash must be the
 * hash of the call as it stands (tool name + canonical arguments). Edited arguments go through the
 * tool's schema like the model's, and their hash is computed here. Records can come from anywhere
 * (an imported file, another store engine): nothing in them is taken on trust.
 */
function boundDecision(
  approval: Approval | undefined,
  tool: Tool,
  call: ToolCall,
  callArgs: unknown,
  tools: ToolRegistry,
): BoundDecision {
  const own = {
    decision: null,
    args: callArgs,
    hash: tools.inputHash(tool, callArgs),
    edited: false,
    notApplied: null,
  };
  if (!approval) return own;
  if (approval.input_hash !== own.hash || approval.tool_name !== tool.name) {
    const what = approval.decision ? `A decision (${approval.decision.kind.replace('_', ' ')})` : 'An approval';
    return { ...own, notApplied: `${what} was recorded for other arguments than this call's; it was not applied.` };
  }
  const decision = approval.decision;
  if (decision?.kind !== 'approve_edited') return { ...own, decision };
  const edited = tools.prepareArgs(tool, call.id, decision.arguments, own.hash);
  if (!edited.ok) return { ...own, notApplied: `The edited arguments were not applied: ${edited.error.output}` };
  return { decision, args: edited.args, hash: tools.inputHash(tool, edited.args), edited: true, notApplied: null };
}

/**
 * After damage to the run's history, a side-effecting call up to the step the run had reached may be
 * one whose records were lost: it goes to the user, marked as possibly run, with what is known.
 * Not when the lost part provably held no effect records (the witness counted them).
 */
function damageReason(p: PlanInputs, hash: string): string | null {
  const d = p.damage;
  if (!d || d.effects_lost === false || (d.step_before !== null && p.step > d.step_before)) return null;
  const lost = d.lost_calls.find((c) => c.input_hash === hash);
  const known = lost
    ? ` The lost history shows this exact call ${lost.finished ? 'ran to the end' : 'was started'} at step ${lost.step}.`
    : '';
  return `This run's history was damaged (${d.lost}): this call may already have run before the damage.${known}`;
}

/** The tool message content the model sees for an executed call. */
export function toolMessageContent(output: string, plan: { edited: boolean; args: unknown }): string {
  if (!plan.edited) return output;
  return `[The user edited the arguments before this ran: ${JSON.stringify(plan.args)}]\n${output}`;
}

/**
 * A pending approval that waits with other arguments than its call's (a record from elsewhere):
 * closed as not applied, with why, so the call can be asked about as it stands.
 */
export async function closeStaleApproval(
  store: Pick<CheckpointStore, 'decideApproval'>,
  runId: string,
  stale: Approval,
): Promise<void> {
  await store.decideApproval(runId, stale.tool_call_id, {
    kind: 'reject',
    reason: 'Not applied: this approval was for other arguments than the call; the call is asked about again.',
    input_hash: null,
  });
}

/**
 * Pending approvals of calls that cannot run any more (their tool vanished or changed, their
 * arguments no longer parse): closed with why, so no approval waits for a call the run has answered.
 */
export async function closeUnrunnable(
  store: Pick<CheckpointStore, 'decideApproval'>,
  runId: string,
  plans: readonly CallPlan[],
  approvals: ReadonlyMap<string, Approval>,
): Promise<Approval[]> {
  const closed: Approval[] = [];
  for (const plan of plans) {
    const pending = approvals.get(plan.call.id);
    if (plan.kind !== 'error' || !pending || pending.decision) continue;
    const why = plan.output.length > 1000 ? `${plan.output.slice(0, 1000)}…` : plan.output;
    closed.push(
      await store.decideApproval(runId, pending.tool_call_id, {
        kind: 'reject',
        reason: `Closed: the call cannot run any more. ${why}`,
        input_hash: null,
      }),
    );
  }
  return closed;
}
