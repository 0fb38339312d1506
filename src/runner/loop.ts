// The agent loop as an explicit state machine over the AFK phases (docs/design.md). Every phase
// boundary is a checkpoint; the store decides which are durable before the call returns.
//   step_started → pre_llm → [LLM] → post_llm(pending response) → tool batch → subagent batch → next step
//   … → run_terminal
// Resume enters the same machine: a pending response skips the LLM call and goes to its tool calls.
// The loop plans a batch and checkpoints around it; each call's durability steps are in calls/.
import type {
  Approval,
  ChatMessage,
  Damage,
  Effect,
  RunState,
  RuntimeSnapshot,
  ToolCall,
  Usage,
} from '../store/api/schema';
import type { CheckpointStore, ResumeSnapshot, RunLease, WriteOptions } from '../store/api/types';
import type { CheckpointRecord } from '../store/api/schema';
import { Breather } from '../common/breather';
import { budgetBeforeRequest, budgetExceeded } from './budget';
import { ContextFitter, type ContextSettings, type Fitted } from './context/fit';
import { contextOverflow } from './context/overflow';
import { addUsage } from './context/summarize';
import { counterFor, type TokenCounter } from './context/tokens';
import { errorMessage } from './errors';
import { RunInbox } from './inbox';
import { outputHash } from './hash';
import type { ChatProvider, ToolDefinition } from './provider/types';
import { ProviderError } from './provider/errors';
import { makeToolCallIdsUnique } from './provider/ids';
import { type RunContext, snapshotForWrite, terminalResult, type TerminalResult } from './runtime';
import { BatchRunner } from './calls/batch';
import { recordToolResult } from './calls/call';
import { type CallPlan, closeStaleApproval, closeUnrunnable, planBatch } from './calls/plan';
import { type CallDeps, OwedResponse } from './calls/scope';
import type { PolicyVerdict } from './tools/policy';
import { findLeftovers, killLeftovers, waitForLeftovers, type Leftover } from './tools/leftovers';
import { loadShellGrammar } from './tools/shell/grammar';
import type { Tool } from './tools/types';

/** The state detail of a run that waits for `n` decisions (also recomputed by the approval panel). */
export function awaitingApprovalDetail(n: number): string {
  return `${n} tool call${n > 1 ? 's' : ''} waiting for approval.`;
}

export interface LoopDeps extends CallDeps {
  provider: ChatProvider;
  policy(tool: Tool, args: unknown): PolicyVerdict;
  /** How the conversation is fitted into the model's window (context/fit.ts). */
  context: ContextSettings;
  /** Runs (or resumes) the child run of a delegate call; supplied by the runner. */
  delegate(parent: RunExecution, call: ToolCall, task: string): Promise<DelegateOutcome>;
}

export interface DelegateOutcome {
  childRunId: string;
  state: RunState;
  finalText: string | null;
  detail: string | null;
}

export interface RunOutcome {
  runId: string;
  state: RunState;
  detail: string | null;
  finalText: string | null;
  terminalResult: TerminalResult | null;
}

type Stop = { stop: true; state: RunState; detail: string | null };
const CONTINUE = { stop: false } as const;

export interface ExecutionOptions {
  /** The run's damage records merged (RunSummary.damage): calls that may have run before it go to the user. */
  damage: Damage | null;
  /** The run paused to ask before condensing, and the user resumed it: condense without asking again. */
  condenseApproved?: boolean;
  /** Resumed from inside a step that never got its response: that step is redone, under its own number. */
  reenterStep?: boolean;
  /**
   * Resumed from the run's resume point (CheckpointStore.loadResumeSnapshot): the list items it left
   * out are holes in the runtime's lists — the messages a condense summarised and the executions of
   * calls before them, which the model no longer sees.
   */
  omitted?: ResumeSnapshot['omitted'];
}

export class RunExecution {
  private sessionStartMs: number;
  private readonly activeBaseMs: number;
  /** Messages the user sends while this run works, delivered at its step boundaries. */
  readonly inbox: RunInbox;
  /** Commands still running from before this resume, while the run waits for them. */
  private leftovers: Leftover[] = [];
  /** The model's response until a barrier carries it: before any tool runs, and before the next request. */
  private readonly response: OwedResponse;
  private readonly batch: BatchRunner;
  private reenterStep: boolean;
  private readonly counter: TokenCounter;
  private readonly fitter: ContextFitter;
  /** The tools offered to the model: taken again before each request (MCP servers start and change). */
  private toolDefs: ToolDefinition[];

  constructor(
    readonly deps: LoopDeps,
    readonly runId: string,
    readonly lease: RunLease,
    readonly rt: RuntimeSnapshot,
    readonly signal: AbortSignal,
    private readonly opts: ExecutionOptions = { damage: null },
  ) {
    this.sessionStartMs = deps.now();
    this.reenterStep = opts.reenterStep ?? false;
    this.activeBaseMs = this.context.active_ms ?? 0;
    this.inbox = new RunInbox(deps.store, runId);
    this.response = new OwedResponse(deps.store, runId);
    this.batch = new BatchRunner({
      deps,
      runId,
      lease,
      rt,
      signal,
      response: this.response,
      log: (level, message) => this.log(level, message),
    });
    const { provider } = deps;
    this.counter = counterFor(
      rt.requested_model,
      provider.countTokens ? (text) => provider.countTokens!(text, signal) : undefined,
    );
    this.toolDefs = deps.tools.definitions();
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the fitter reads the loop's current tool list
    const loop = this;
    this.fitter = new ContextFitter({
      rt,
      provider,
      counter: this.counter,
      get tools() {
        return loop.toolDefs;
      },
      settings: deps.context,
      signal,
      condenseApproved: opts.condenseApproved ?? false,
      checkpoint: async (phase, payload) =>
        (await this.checkpoint(phase, payload, { snapshot: phase === 'post_condense' })).seq,
      log: (level, message) => this.log(level, message),
    });
  }

  /** Stops the run at its next step boundary as `interrupted`, with `detail` (AgentRunner.letGo). */
  letGo(detail: string): void {
    this.letGoDetail ??= detail;
  }
  private letGoDetail: string | null = null;
  private readonly breather = new Breather();

  /** Kills the commands this run waits for (still running from before a crash); the wait then ends. */
  killLeftovers(): boolean {
    killLeftovers(this.leftovers);
    return this.leftovers.length > 0;
  }

  get context(): RunContext {
    return this.rt.context as RunContext;
  }

  /** Drives the run until it finishes or pauses. Never throws: every failure becomes a resumable pause. */
  async drive(): Promise<RunOutcome> {
    try {
      for (;;) {
        // A step's parts chain as microtasks (a response parsed, checkpointed, its calls planned and
        // recorded, the next request built): with large content they would hold the thread as one.
        await this.breather.tick();
        const r = this.rt.pending_llm_response ? await this.toolPhase() : await this.llmStep();
        if (r.stop) return await this.pause(r.state, r.detail);
      }
    } catch (err) {
      if (this.signal.aborted) return await this.pause(this.abortState(), this.abortDetail());
      const detail = `The run stopped because of an error and can be resumed: ${errorMessage(err)}`;
      this.log('error', detail);
      return await this.pause('paused_error', detail);
    }
  }

  // ── one LLM step ─────────────────────────────────────────────────────────────────────────────
  private async llmStep(): Promise<Stop | typeof CONTINUE> {
    // A step redone after a resume keeps its number: the budget counts it once, and the damage check
    // meets its calls at the step the lost history had them.
    const step = this.reenterStep ? this.rt.step : this.rt.step + 1;
    this.reenterStep = false;
    const over = budgetExceeded(this.context.budget, { ...this.rt, step }, this.activeMs());
    if (over)
      return {
        stop: true,
        state: 'paused_budget',
        detail: `Paused: ${over}. Resume with a higher budget to continue.`,
      };
    if (this.signal.aborted) return { stop: true, state: this.abortState(), detail: this.abortDetail() };
    if (this.letGoDetail !== null) return { stop: true, state: 'interrupted', detail: this.letGoDetail };

    this.rt.step = step;
    this.rt.state = 'running';
    // The step boundary: what the user sent meanwhile joins the conversation, delivered with this checkpoint.
    const messages = await this.inbox.waiting();
    for (const m of messages) this.rt.messages.push({ role: 'user', content: m.text });
    await this.checkpoint(
      'step_started',
      { state: this.rt.state, message_count: this.rt.messages.length },
      { snapshot: true, deliver: messages.map((m) => m.id) },
    );
    // Barrier before any request (a condense's too): the last batch's results and this step's start (docs/design.md).
    await this.deps.store.makeDurable(this.runId);
    this.response.carried();
    const { provider } = this.deps;
    // External tools (MCP servers start lazily here): the list the model is offered is fitted with the
    // request and recorded with its response.
    await this.deps.tools.refresh(this.signal);
    this.toolDefs = this.deps.tools.definitions();
    const toolsSeen = this.deps.tools.seen();
    let fitted = await this.fitter.fit();
    if (fitted.kind === 'stop') return { stop: true, state: fitted.state, detail: fitted.detail };
    const tooDear = budgetBeforeRequest(this.context.budget, this.rt, {
      promptTokens: fitted.size.tokens,
      promptCostUsd: provider.promptCostUsd?.(fitted.size.tokens) ?? null,
    });
    if (tooDear)
      return {
        stop: true,
        state: 'paused_budget',
        detail: `Paused: ${tooDear}. Resume with a higher budget to continue.`,
      };
    await this.preLlm(fitted, false);

    this.deps.events.emit({ type: 'llm', runId: this.runId, step: this.rt.step, status: 'start' });
    let result;
    try {
      for (let retried = false; ; retried = true) {
        const r = await this.request(fitted);
        if ('result' in r) {
          result = r.result;
          break;
        }
        // The provider refused the request as too long: condense and retry once, never the same request.
        if (retried) return { stop: true, state: 'paused_error', detail: overflowAgain(r.detail) };
        const learned = r.window ?? Math.floor(fitted.size.tokens * 0.85);
        const mc = this.fitter.context();
        this.rt.model_context = { ...mc, learned_window: Math.min(learned, mc.learned_window ?? learned) };
        this.log('warn', `the model refused ${fitted.size.tokens} tokens as too long (${r.detail}); condensing`);
        const refit: Fitted = await this.fitter.fit(fitted.size.tokens);
        if (refit.kind === 'stop') return { stop: true, state: refit.state, detail: refit.detail };
        fitted = refit;
        await this.preLlm(fitted, true);
      }
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'cancelled') {
        return { stop: true, state: this.abortState(), detail: this.abortDetail() };
      }
      const detail = `The model call failed and the run was paused; resume to try again. ${errorMessage(err)}`;
      return { stop: true, state: 'paused_error', detail };
    } finally {
      this.deps.events.emit({ type: 'llm', runId: this.runId, step: this.rt.step, status: 'end' });
    }
    const { response } = result;
    const renamed = makeToolCallIdsUnique(
      response.message,
      this.rt.messages,
      this.rt.step,
      await this.callsInHistory(response.message),
    );
    for (const w of [...result.warnings, ...renamed]) this.log('warn', `model response repaired: ${w}`);
    this.rt.llm_calls += 1;
    // The ledger: what the provider reported, or our own count (labelled estimated) when it reported nothing.
    const usage = response.usage ?? (await this.estimatedUsage(fitted, response.message));
    this.rt.usage = addUsage(this.rt.usage, usage) ?? this.rt.usage;
    // Unknown price → the total is unknown from now on (never a made-up zero).
    this.rt.total_cost_usd =
      this.rt.total_cost_usd === null || result.cost_usd === null ? null : this.rt.total_cost_usd + result.cost_usd;
    this.rt.normalized_model = result.normalized_model;
    this.rt.messages.push(response.message);
    this.rt.pending_llm_response = toolsSeen.length > 0 ? { ...response, tools_seen: toolsSeen } : response;
    // The pending response rides on the next barrier, made before any tool runs (the first call's
    // intent, or OwedResponse.makeDurable()): a crash after that never calls the model again for this step.
    this.response.handedOver();
    await this.checkpoint(
      'post_llm',
      {
        model: response.model,
        provider: result.provider_adapter,
        finish_reason: response.finish_reason,
        tool_call_count: response.message.tool_calls?.length ?? 0,
        session_token: this.rt.session_token,
        checkpoint_token: this.rt.checkpoint_token,
        total_cost_usd: this.rt.total_cost_usd,
        usage,
        cost_usd: result.cost_usd,
      },
      { snapshot: true, durability: 'next-barrier' },
    );
    return CONTINUE;
  }

  private async preLlm(fitted: Extract<Fitted, { kind: 'send' }>, retry: boolean): Promise<void> {
    const { provider } = this.deps;
    await this.checkpoint('pre_llm', {
      model: provider.requested_model,
      provider: provider.provider_adapter,
      message_count: this.rt.messages.length,
      context: fitted.size,
      ...(retry ? { retry: 'context_length_exceeded' } : {}),
    });
  }

  /** One model call; a "context length exceeded" refusal is returned (the caller condenses), anything else thrown. */
  private async request(
    fitted: Extract<Fitted, { kind: 'send' }>,
  ): Promise<{ result: Awaited<ReturnType<ChatProvider['complete']>> } | { window: number | null; detail: string }> {
    const step = this.rt.step;
    const delta = (kind: 'text' | 'reasoning') => (d: string) =>
      this.deps.events.emit({ type: 'llm-delta', runId: this.runId, step, kind, delta: d });
    try {
      return {
        result: await this.deps.provider.complete({
          messages: fitted.messages,
          tools: this.toolDefs,
          signal: this.signal,
          onText: delta('text'),
          onReasoning: delta('reasoning'),
        }),
      };
    } catch (err) {
      const overflow = contextOverflow(err);
      if (!overflow) throw err;
      return { window: overflow.window, detail: errorMessage(err) };
    }
  }

  private async estimatedUsage(fitted: Extract<Fitted, { kind: 'send' }>, message: ChatMessage): Promise<Usage> {
    const output = Math.max(0, (await this.counter.count([message], [])) - 7);
    return {
      input_tokens: fitted.size.tokens,
      output_tokens: output,
      total_tokens: fitted.size.tokens + output,
      estimated: true,
    };
  }

  // ── the tool calls of the pending response ───────────────────────────────────────────────────
  private async toolPhase(): Promise<Stop | typeof CONTINUE> {
    const response = this.rt.pending_llm_response!;
    const calls = response.message.tool_calls ?? [];
    if (calls.length === 0) {
      // The user wrote while the model answered: answer that too instead of finishing.
      if (await this.inbox.holdsMessagesBeforeFinishing()) {
        this.rt.pending_llm_response = null;
        return CONTINUE;
      }
      return this.finish(response.message.content ?? '');
    }

    // (this batch's calls only: a run resumed from its resume point answers from memory)
    const ids = calls.map((c) => c.id);
    const [approvals, effects] = await Promise.all([
      this.deps.store.listApprovals(this.runId, { calls: ids }),
      this.deps.store.listEffects(this.runId, { calls: ids }),
    ]);
    const waited = await this.awaitLeftovers(effects, calls);
    await loadShellGrammar(); // the command policy reads command lines with it (synchronously, once loaded)
    if (this.signal.aborted) return { stop: true, state: this.abortState(), detail: this.abortDetail() };
    // A call to an external tool (e.g. on resume): its server's tools as they are now.
    if (calls.some((c) => !this.deps.tools.isOwn(c.function.name))) await this.deps.tools.refresh(this.signal);
    const [approvalOf, effectOf] = [byCall(approvals), byCall(effects)];
    const plans = planBatch({
      calls,
      tools: this.deps.tools,
      policy: (t, a) => this.deps.policy(t, a),
      approvals: approvalOf,
      effects: effectOf,
      damage: this.opts.damage,
      step: this.rt.step,
      waited,
      seen: response.tools_seen,
    });
    await closeUnrunnable(this.deps.store, this.runId, plans, approvalOf);
    const asks = plans.filter((p) => p.kind === 'ask');
    if (asks.length > 0) {
      await this.requestApprovals(asks, approvalOf); // durable: carries the response
      this.response.carried();
      return { stop: true, state: 'awaiting_approval', detail: awaitingApprovalDetail(asks.length) };
    }

    const toolPlans = plans.filter((p) => p.kind !== 'delegate');
    const delegates = plans.filter((p) => p.kind === 'delegate');
    if (toolPlans.length > 0) {
      await this.checkpoint('pre_tool_batch', { tool_call_count: toolPlans.length });
      const ran = await this.batch.run(toolPlans, { effects: effectOf, delegatesFollow: delegates.length > 0 });
      if (ran.aborted) return { stop: true, state: this.abortState(), detail: this.abortDetail() };
      const retries = await this.retriesWanted(calls, toolPlans);
      if (retries > 0) return { stop: true, state: 'awaiting_approval', detail: awaitingApprovalDetail(retries) };
      await this.checkpoint('post_tool_batch', { tool_calls_total: this.rt.tool_calls, tool_failures: ran.failures });
    }
    if (delegates.length > 0) {
      const stop = await this.subagentBatch(delegates);
      if (stop) return stop;
    }
    this.rt.pending_llm_response = null;
    return CONTINUE;
  }

  /**
   * A call of this batch whose command is still running (the window died, its process group did
   * not): wait for it before anything is asked, so "may already have run" is asked about something
   * that has finished. Cancel stops the wait; killLeftovers() ends it.
   */
  private async awaitLeftovers(effects: Effect[], calls: readonly ToolCall[]): Promise<Set<string>> {
    const ids = new Set(calls.map((c) => c.id));
    const open = effects.filter((e) => ids.has(e.tool_call_id));
    this.leftovers = await findLeftovers(open);
    if (this.leftovers.length === 0) return new Set();
    const names = this.leftovers.map((l) => {
      const call = calls.find((c) => c.id === l.toolCallId);
      return `${call?.function.name ?? 'a command'} (pid ${l.pids.join(', ')})`;
    });
    const detail = `Waiting for ${names.join(' and ')}, still running from before the window closed. Cancel the run to stop waiting, or kill it.`;
    this.log('warn', detail);
    this.deps.events.emit({
      type: 'leftovers',
      runId: this.runId,
      status: 'waiting',
      leftovers: this.leftovers,
      detail,
    });
    await waitForLeftovers(open, this.signal);
    const waited = new Set(this.leftovers.map((l) => l.toolCallId));
    this.leftovers = [];
    this.deps.events.emit({ type: 'leftovers', runId: this.runId, status: 'done', leftovers: [], detail: null });
    return waited;
  }

  /**
   * A command the sandbox blocked asks, before the model sees its result, whether to run it again
   * with more access: the batch is planned again over what it recorded, and the run waits. Resume
   * replays what ran and then carries out the decision.
   */
  private async retriesWanted(calls: readonly ToolCall[], ran: readonly CallPlan[]): Promise<number> {
    if (!ran.some((p) => p.kind === 'run' && (p.sandbox || p.retry))) return 0;
    const ids = calls.map((c) => c.id);
    const [approvals, effects] = await Promise.all([
      this.deps.store.listApprovals(this.runId, { calls: ids }),
      this.deps.store.listEffects(this.runId, { calls: ids }),
    ]);
    const approvalOf = byCall(approvals);
    const asks = planBatch({
      calls,
      tools: this.deps.tools,
      policy: (t, a) => this.deps.policy(t, a),
      approvals: approvalOf,
      effects: byCall(effects),
      damage: this.opts.damage,
      step: this.rt.step,
      waited: new Set(),
      seen: this.rt.pending_llm_response?.tools_seen,
    }).filter((p) => p.kind === 'ask' && p.request.retry);
    if (asks.length > 0) await this.requestApprovals(asks, approvalOf);
    return asks.length;
  }

  /**
   * The response's call ids the run used before, in what a resume left out of the runtime's messages
   * (calls with an effect record: the store knows them; makeToolCallIdsUnique sees the rest).
   */
  private async callsInHistory(message: { tool_calls?: readonly { id: string }[] | null }): Promise<Set<string>> {
    const o = this.opts.omitted?.messages;
    const ids = (message.tool_calls ?? []).map((c) => c.id);
    if (!o || o.from >= o.to || ids.length === 0) return new Set();
    const known = await this.deps.store.listEffects(this.runId, { calls: ids });
    return new Set(known.map((e) => e.tool_call_id));
  }

  private async requestApprovals(asks: CallPlan[], existing: Map<string, Approval>): Promise<void> {
    for (const p of asks) {
      if (p.kind !== 'ask') continue;
      const prior = existing.get(p.call.id);
      // Already waiting for exactly this decision (e.g. a resume while still awaiting): do not re-ask.
      if (prior && !prior.decision && prior.input_hash === p.request.hash && prior.uncertain === p.request.uncertain)
        continue;
      if (prior && !prior.decision && prior.input_hash !== p.request.hash)
        await closeStaleApproval(this.deps.store, this.runId, prior);
      const approval = await this.deps.store.requestApproval(this.runId, {
        tool_call_id: p.call.id,
        step: this.rt.step,
        tool_name: p.request.tool.name,
        category: p.request.tool.category,
        arguments: p.request.args,
        input_hash: p.request.hash,
        uncertain: p.request.uncertain,
        reason: p.request.reason,
        ...(p.request.retry ? { retry: p.request.retry } : {}),
      });
      this.deps.events.emit({ type: 'approval-requested', runId: this.runId, approval });
    }
  }

  // ── delegate calls: child runs with their own checkpoints ───────────────────────────────────
  private async subagentBatch(plans: CallPlan[]): Promise<Stop | null> {
    await this.checkpoint('pre_subagent_batch', { subagent_count: plans.length });
    await this.response.makeDurable();
    let failures = 0;
    for (const plan of plans) {
      if (plan.kind !== 'delegate') continue;
      if (this.rt.messages.some((m) => m.role === 'tool' && m.tool_call_id === plan.call.id)) continue; // done before a pause
      const task = String((plan.args as { task?: unknown }).task ?? '');
      const started = this.deps.now();
      const out = await this.deps.delegate(this, plan.call, task);
      if (out.state !== 'completed' && out.state !== 'failed') {
        const detail =
          `Waiting for subagent run ${out.childRunId} (${out.state.replace(/_/g, ' ')}). ${out.detail ?? ''}`.trim();
        return { stop: true, state: out.state === 'awaiting_approval' ? 'awaiting_approval' : 'paused_error', detail };
      }
      const isError = out.state === 'failed';
      if (isError) failures += 1;
      const text = out.finalText ?? (isError ? `Subagent failed: ${out.detail ?? 'no detail'}` : '');
      recordToolResult(this.rt, {
        call: plan.call,
        content: text,
        inputHash: plan.hash,
        outputHash: outputHash(text),
        isError,
        replayed: false,
        startedMs: started,
        finishedMs: this.deps.now(),
      });
      this.rt.subagent_executions.push({
        tool_call_id: plan.call.id,
        child_run_id: out.childRunId,
        step: this.rt.step,
        state: out.state,
        final_text: out.finalText,
        started_ms: started,
        finished_ms: this.deps.now(),
      });
    }
    await this.checkpoint('post_subagent_batch', {
      subagents_total: this.rt.subagent_executions.length,
      subagent_failures: failures,
    });
    return null;
  }

  // ── endings ──────────────────────────────────────────────────────────────────────────────────
  private async finish(text: string): Promise<Stop> {
    this.rt.final_text = text;
    this.rt.pending_llm_response = null;
    this.rt.state = 'completed';
    const result = terminalResult(this.rt);
    await this.checkpoint(
      'run_terminal',
      {
        state: 'completed',
        final_text: text,
        requested_model: this.rt.requested_model,
        normalized_model: this.rt.normalized_model,
        provider_adapter: this.rt.provider_adapter,
        terminal_result: result,
      },
      { snapshot: true },
    );
    return { stop: true, state: 'completed', detail: null };
  }

  /** Records the state (durably) and returns the outcome. A failing store here is logged, not thrown. */
  private async pause(state: RunState, detail: string | null): Promise<RunOutcome> {
    this.rt.state = state;
    try {
      await this.deps.store.setRunState(this.runId, state, detail);
      await this.deps.store.flush();
    } catch (err) {
      this.log('error', `could not record state ${state}: ${errorMessage(err)}; the last durable checkpoint stands`);
    }
    const terminal = state === 'completed' || state === 'failed';
    this.deps.events.emit({
      type: 'state',
      runId: this.runId,
      state,
      detail,
      finalText: terminal ? this.rt.final_text : null,
      subagent: Boolean(this.context.parent),
    });
    return {
      runId: this.runId,
      state,
      detail,
      finalText: terminal ? this.rt.final_text : null,
      terminalResult: terminal ? terminalResult(this.rt) : null,
    };
  }

  private async checkpoint(
    phase: Parameters<CheckpointStore['append']>[1]['phase'],
    payload: Record<string, unknown>,
    opts: { snapshot?: boolean; deliver?: string[]; durability?: WriteOptions['durability'] } = {},
  ): Promise<CheckpointRecord> {
    if (opts.snapshot) this.context.active_ms = this.activeMs();
    const record = await this.deps.store.append(
      this.runId,
      {
        phase,
        step: this.rt.step,
        payload,
        ...(opts.snapshot ? { snapshot: snapshotForWrite(this.rt) } : {}),
        ...(opts.deliver?.length ? { deliver: opts.deliver } : {}),
      },
      opts.durability ? { durability: opts.durability } : undefined,
    );
    this.deps.events.emit({ type: 'phase', runId: this.runId, record });
    return record;
  }

  private activeMs(): number {
    return this.activeBaseMs + (this.deps.now() - this.sessionStartMs);
  }

  private abortState(): RunState {
    return this.signal.reason === 'shutdown' ? 'interrupted' : 'paused_cancelled';
  }

  private abortDetail(): string {
    return this.signal.reason === 'shutdown'
      ? 'VS Code closed while the run was working. Resume it to continue.'
      : 'Cancelled by the user. Resume it to continue.';
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.deps.events.emit({ type: 'log', runId: this.runId, level, message });
  }
}

function overflowAgain(detail: string): string {
  return `The model refused the request as longer than its context window again, after the conversation was condensed (${detail}). Set the model's window (agentWaypoints.context.windows) or fork from an earlier checkpoint; resuming condenses again first.`;
}

function byCall<T extends { tool_call_id: string }>(items: T[]): Map<string, T> {
  return new Map(items.map((i) => [i.tool_call_id, i]));
}
