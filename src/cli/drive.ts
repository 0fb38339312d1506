// The commands that make a run go: run, resume, approve, reject. Each waits for the run to stop
// (finished, waiting for an approval, paused) and says where it stopped; the exit code says it too.
import { ResumeNeedsConfirmationError } from '../runner/errors';
import type { DecisionInput, StartedRun } from '../runner/runner';
import { isTerminalState, type Approval, type RunSummary, type SandboxAccess } from '../store/api/schema';
import type { CliContext } from './compose';
import { finalText, resolveRun } from './inspect';
import { approvalJson, Exit, exitFor, pendingText, runJson } from './output';
import { UsageError, type Out } from './out';
import { decideForWorkers } from './handoff';

/** The run the command is driving, so Ctrl-C can stop it at a safe point. */
export interface Driving {
  current: StartedRun | undefined;
}

export async function runTask(ctx: CliContext, out: Out, task: string, driving: Driving): Promise<number> {
  if (!task.trim()) throw new UsageError('the task is empty');
  const handle = await ctx.runner.start({ task });
  out.progress(`started run ${handle.runId} in ${ctx.where}`);
  return finish(ctx, out, handle, driving);
}

export async function resumeRun(
  ctx: CliContext,
  out: Out,
  idOrPrefix: string,
  o: { yes: boolean; maxSteps: number | undefined },
  driving: Driving,
): Promise<number> {
  const run = await resolveRun(ctx.store, idOrPrefix, ctx.where);
  if (isTerminalState(run.state) || run.pending_approvals > 0) return report(ctx, out, run);
  const raise =
    o.maxSteps ?? (run.state === 'paused_budget' ? run.step + (ctx.settings.budget.max_steps ?? 25) : undefined);
  if (raise !== undefined && raise <= run.step)
    throw new UsageError(`--max-steps must be above the run's step (${run.step})`);
  if (raise !== undefined) out.progress(`step limit raised to ${raise}`);
  let handle: StartedRun;
  try {
    handle = await ctx.runner.resume(run.run_id, {
      confirmed: o.yes,
      ...(raise ? { budget: { max_steps: raise } } : {}),
    });
  } catch (err) {
    if (!(err instanceof ResumeNeedsConfirmationError)) throw err;
    out.problem(`Resuming ${run.run_id} needs your confirmation: ${err.reasons.join('; ')}.`);
    out.problem('Run the command again with --yes to resume anyway.');
    return Exit.error;
  }
  out.progress(`resuming run ${run.run_id}`);
  return finish(ctx, out, handle, driving);
}

export async function decide(
  ctx: CliContext,
  out: Out,
  idOrPrefix: string,
  o: DecideOptions,
  driving: Driving,
): Promise<number> {
  const run = await resolveRun(ctx.store, idOrPrefix, ctx.where);
  const pending = await ctx.store.listApprovals(run.run_id, { pendingOnly: true });
  if (pending.length === 0) throw new UsageError(`run ${run.run_id} is not waiting for any approval (${run.state})`);
  const chosen = choose(run.run_id, pending, o);
  if (o.hash && !chosen[0]!.input_hash.startsWith(o.hash))
    throw new UsageError(
      `the arguments of ${chosen[0]!.tool_call_id} are not the ones with hash ${o.hash}: look again with show`,
    );
  const decisions: DecisionInput[] = chosen.map((a) =>
    o.reject !== undefined
      ? { kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: o.reject }
      : { kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash, ...retryAccess(a, o.access) },
  );
  const forWorkers = await decideForWorkers(ctx, out, run.run_id, decisions);
  if (forWorkers !== null) return forWorkers;
  const handle = await ctx.runner.decideApprovals(run.run_id, decisions);
  const verb = o.reject !== undefined ? 'rejected' : 'approved';
  out.progress(`${verb} ${chosen.map((a) => a.tool_call_id).join(', ')}`);
  if (!handle) return report(ctx, out, (await ctx.store.getRun(run.run_id))!);
  return finish(ctx, out, handle, driving);
}

export interface DecideOptions {
  call: string | undefined;
  all: boolean;
  hash: string | undefined;
  reject: string | undefined;
  /** For a command the sandbox blocked: run it again with the domains it was refused, or once outside. */
  access?: 'domains' | 'outside' | undefined;
}

/**
 * The access an approval of a retry runs with: a command the sandbox blocked runs again only with
 * the access the user chose here, never with more than it was refused.
 */
function retryAccess(a: Approval, access: DecideOptions['access']): { access?: SandboxAccess } {
  if (!a.retry) {
    if (access)
      throw new UsageError(
        `${a.tool_call_id} is not a command the sandbox blocked: approve it without --allow-domains or --outside-sandbox`,
      );
    return {};
  }
  const domains = a.retry.blocked.domains;
  if (!access)
    throw new UsageError(
      `the sandbox blocked ${a.tool_call_id}${domains.length ? ` (it was refused ${domains.join(', ')})` : ''}: approve it with --allow-domains (those domains, for the rest of the run) or --outside-sandbox (this once, with no sandbox)`,
    );
  if (access === 'outside') return { access: { kind: 'unsandboxed' } };
  if (domains.length === 0)
    throw new UsageError(`the sandbox refused ${a.tool_call_id} no domain to allow: --outside-sandbox, or reject it`);
  return { access: { kind: 'domains', domains, always: false } };
}

function choose(runId: string, pending: Approval[], o: DecideOptions): Approval[] {
  if (o.all) {
    if (o.call || o.hash || o.reject !== undefined)
      throw new UsageError('--all decides every waiting call: name no call, no --hash');
    return pending;
  }
  if (o.call) {
    const a = pending.find((p) => p.tool_call_id === o.call);
    if (!a)
      throw new UsageError(
        `${o.call} is not waiting for a decision in run ${runId}\n${pendingText(runId, pending.map(approvalJson))}`,
      );
    return [a];
  }
  if (pending.length === 1 && o.reject === undefined) return pending;
  throw new UsageError(`name the call to decide\n${pendingText(runId, pending.map(approvalJson))}`);
}

/** Waits for the run to stop, then says how it stopped. */
async function finish(ctx: CliContext, out: Out, handle: StartedRun, driving: Driving): Promise<number> {
  driving.current = handle;
  try {
    await handle.done;
  } finally {
    driving.current = undefined;
  }
  return report(ctx, out, (await ctx.store.getRun(handle.runId))!);
}

/** Where the run is now: its state, its answer, the calls it waits for; the exit code for it. */
export async function report(ctx: CliContext, out: Out, run: RunSummary): Promise<number> {
  const pending =
    run.pending_approvals > 0
      ? (await ctx.store.listApprovals(run.run_id, { pendingOnly: true })).map(approvalJson)
      : [];
  const answer = await finalText(ctx.store, run);
  if (out.json) {
    out.result({ run: runJson(run), pending, final_text: answer });
  } else {
    const lines = [`${run.state}  ${run.run_id}  ${run.title}`];
    if (run.state_detail) lines.push(`  ${run.state_detail}`);
    if (answer) lines.push(answer);
    if (pending.length > 0) lines.push(pendingText(run.run_id, pending));
    else if (!isTerminalState(run.state)) lines.push(`Continue: agent-waypoints resume ${run.run_id}`);
    out.result(lines.join('\n'));
  }
  return exitFor(run.state);
}
