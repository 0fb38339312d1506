// AgentRunner: start, resume, decide approvals, cancel. Owns one RunExecution per active run and
// holds the run's lease (one window per run) only while it executes. vscode-free.
import { errorMessage } from '../common/errors';
import { argumentsProblem } from '../common/jsonBounds';
import {
  type Approval,
  isTerminalState,
  LlmResponse,
  type InboxMessage,
  type RunState,
  type RunSummary,
  type RuntimeSnapshot,
  type SandboxAccess,
  type ToolCall,
} from '../store/api/schema';
import {
  AgentCheckpointCorruptionError,
  CheckpointNotFoundError,
  InvalidInputError,
  RunLockedError,
} from '../store/api/errors';
import { undoCondense } from './context/undo';
import type { CheckpointStore, OwnerInfo, ResumeSnapshot, RunLease } from '../store/api/types';
import type { DecidedBy } from '../store/api/schema';
import { localDecider } from './decider';
import { type Budget, DEFAULT_BUDGET } from './budget';
import { InvalidEditedArgumentsError, ResumeNeedsConfirmationError, StaleApprovalError } from './errors';
import { Emitter, type RunnerEvent } from './events';
import { sha256 } from './hash';
import { type DelegateOutcome, type LoopDeps, RunExecution, type RunOutcome } from './loop';
import { FileChangeRecorder, type FileChangeRecorderOptions } from './fileJournal/recorder';
import { modelLabel, parseModelLabel } from './modelRef';
import { type ChatProvider, PROVIDER_ADAPTER } from './provider/types';
import {
  continuationSnapshot,
  DEFAULT_SYSTEM_PROMPT,
  initialSnapshot,
  snapshotForWrite,
  type RunContext,
  type TerminalResult,
} from './runtime';
import type { PolicyVerdict } from './tools/policy';
import { type ContextSettings, DEFAULT_CONTEXT_SETTINGS } from './context/fit';
import type { ToolRegistry } from './tools/registry';
import type { Tool } from './tools/types';

export interface RunnerDeps {
  store: CheckpointStore;
  /**
   * A provider for a model of an adapter (`openai-compatible`: settings supply the base URL, the key
   * is read from SecretStorage each time; `vscode-lm`: VS Code's language models). A resumed run
   * asks for the adapter its checkpoints recorded.
   */
  provider(model: string, adapter: string): ChatProvider | Promise<ChatProvider>;
  tools: ToolRegistry;
  policy(tool: Tool, args: unknown): PolicyVerdict;
  /** The window's workspace folder: every run this runner drives works here, whatever its records name. */
  workspaceRoot: string;
  /** The extension's own storage folder (checkpoints): tools and restores never write into it. */
  storageDir?: string;
  owner: OwnerInfo;
  /**
   * Who decides approvals through this runner and from where, recorded with each decision (default:
   * this process's user on the owner's machine, in a window).
   */
  decidedBy?: DecidedBy;
  extensionVersion: string;
  /** Values or getters: a getter is read at each start, so settings changed since activation apply. */
  defaultModel: string | (() => string);
  defaultBudget?: Budget | (() => Budget);
  outputCap?: number | (() => number);
  /** Context management (threshold, keep-last-N, stub size, ask first, windows); read at each launch. */
  context?: Partial<ContextSettings> | (() => Partial<ContextSettings>);
  systemPrompt?: string;
  now?: () => number;
  /** The file journal's options (files.exclude, caps); false turns it off. Default: on. */
  files?: Omit<FileChangeRecorderOptions, 'workspaceRoot'> | false;
}

export interface StartOptions {
  task: string;
  title?: string;
  model?: string;
  /** Default: the OpenAI-compatible endpoint. */
  adapter?: string;
  budget?: Partial<Budget>;
  agentName?: string;
}

export interface ResumeOptions {
  /** Raised limits for a run paused on its budget. */
  budget?: Partial<Budget>;
  /** The user confirmed resuming despite a changed extension version or tool set. */
  confirmed?: boolean;
  /**
   * The run's lease, already held by the caller (a worker that claimed the run): used instead of
   * acquiring one, and released when the run stops, as the runner's own. A run that is not driven
   * (finished already) leaves it with the caller.
   */
  lease?: RunLease;
}

/** A run this runner started, resumed or continued, and its outcome to come. */
export interface StartedRun {
  runId: string;
  /** Resolves when the run finishes or pauses (never rejects). */
  done: Promise<RunOutcome>;
}

/** What became of a message the user sent to a run (see AgentRunner.send). */
export type SendOutcome =
  /** Stored in the run's inbox: delivered at its next step (`next-step`), or once its approvals are decided and it continues. */
  | { kind: 'queued'; runId: string; message: InboxMessage; when: 'next-step' | 'after-approvals' }
  /** The run had stopped: a follow-up turn started as a new run in the same thread. */
  | { kind: 'follow-up'; runId: string; handle: StartedRun };

/** `by`: who made this one decision, when not whoever the call's `by` names (a decision another client posted). */
export type DecisionInput = { toolCallId: string; inputHash: string; by?: DecidedBy } & (
  | { kind: 'approve'; access?: SandboxAccess }
  | { kind: 'reject'; reason: string }
  | { kind: 'approve_edited'; argumentsJson: string }
);

export class AgentRunner {
  readonly events = new Emitter<RunnerEvent>();
  private readonly active = new Map<
    string,
    { controller: AbortController; handle: StartedRun; ref: { exec?: RunExecution }; letGo?: string }
  >();
  private readonly now: () => number;
  /** What the model has streamed so far in each run's current call. */
  private readonly partial = new Map<string, { step: number; text: string; reasoning: string }>();

  constructor(private readonly deps: RunnerDeps) {
    this.now = deps.now ?? Date.now;
    this.events.on((e) => {
      if (e.type === 'llm') {
        if (e.status === 'start') this.partial.set(e.runId, { step: e.step, text: '', reasoning: '' });
        else this.partial.delete(e.runId);
      } else if (e.type === 'llm-delta') {
        const p = this.partial.get(e.runId);
        if (p && p.step === e.step) p[e.kind] += e.delta;
      }
    });
  }

  /** The text (and reasoning) the model has streamed so far in the run's current call, if one is under way: a view opened mid-stream starts from it. */
  partialResponse(runId: string): { step: number; text: string; reasoning: string } | undefined {
    const p = this.partial.get(runId);
    return p ? { ...p } : undefined;
  }

  /** Who this runner writes as (its window). */
  get owner(): OwnerInfo {
    return this.deps.owner;
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  activeRunIds(): string[] {
    return [...this.active.keys()];
  }

  async start(opts: StartOptions): Promise<StartedRun> {
    const model = opts.model ?? current(this.deps.defaultModel);
    const adapter = opts.adapter ?? PROVIDER_ADAPTER;
    const provider = await this.deps.provider(model, adapter);
    const title = opts.title ?? titleFrom(opts.task);
    const { run, lease } = await this.deps.store.createRun(
      {
        title,
        task: opts.task,
        agent_name: opts.agentName ?? 'agent-waypoints',
        model: modelLabel({ adapter, model }),
      },
      this.deps.owner,
    );
    return this.launch(run.run_id, lease, provider, this.freshSnapshot(opts.task, model, provider, opts.budget), {
      resumed: false,
    });
  }

  /**
   * A message from the user to a run (the run view's composer). A run working in this window gets
   * it at its next step; a run waiting for approvals gets it when it continues; a run that has
   * stopped (finished, paused, interrupted) is continued by a follow-up turn: a new run in the same
   * thread, from its latest checkpoint. A run another window holds refuses (RunLockedError).
   */
  async send(runId: string, text: string, opts: { id?: string } = {}): Promise<SendOutcome> {
    const active = this.active.get(runId);
    if (active) {
      const exec = active.ref.exec;
      // Its loop has not begun (it delivers at its first step), or it is working: the message waits in its inbox.
      if (!exec || exec.inbox.open) {
        const message = await (exec
          ? exec.inbox.post({ text, ...opts })
          : this.deps.store.postMessage(runId, { text, ...opts }));
        return { kind: 'queued', runId, message, when: 'next-step' };
      }
      await active.handle.done; // it is finishing: the message becomes the next turn
    }
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    const holder = await this.deps.store.owner(runId);
    if (holder && holder.owner_id !== this.deps.owner.owner_id) throw new RunLockedError(runId, holder);
    if (run.pending_approvals > 0) {
      const lease = await this.deps.store.acquire(runId, this.deps.owner);
      try {
        return {
          kind: 'queued',
          runId,
          message: await this.deps.store.postMessage(runId, { text, ...opts }),
          when: 'after-approvals',
        };
      } finally {
        await lease.release();
      }
    }
    const handle = await this.followUp(run, { text, ...opts });
    return { kind: 'follow-up', runId: handle.runId, handle };
  }

  /**
   * Resume semantics (docs/design.md): latest checkpoint → terminal returns the stored result (nothing
   * runs); otherwise the latest snapshot is restored (a copy) and the loop continues — a pending
   * LLM response goes straight to its tool calls.
   */
  async resume(runId: string, opts: ResumeOptions = {}): Promise<StartedRun> {
    const running = this.active.get(runId);
    if (running) return running.handle;
    const { store } = this.deps;
    const run = await store.getRun(runId);
    if (!run) throw new CheckpointNotFoundError(`Run ${runId} does not exist.`, runId);
    const latest = await store.latest(runId).catch(async (err: unknown) => {
      // No checkpoint at all: created, then the process died before run_started was durable (nothing
      // has run yet) — or every checkpoint was lost to damage (run.damage says so; handled below).
      if (err instanceof CheckpointNotFoundError && (await store.list(runId, { limit: 1 })).length === 0) return null;
      throw err;
    });
    if (latest?.phase === 'run_terminal' && 'terminal_result' in latest.payload) {
      const result = latest.payload.terminal_result as TerminalResult;
      const outcome: RunOutcome = {
        runId,
        state: result.state,
        detail: null,
        finalText: result.final_text,
        terminalResult: result,
      };
      return { runId, done: Promise.resolve(outcome) };
    }
    if (run.damage && isTerminalState(run.state)) {
      // It had finished, and its history was damaged afterwards: it stays finished, nothing runs.
      const outcome: RunOutcome = {
        runId,
        state: run.state,
        detail: run.state_detail,
        finalText: null,
        terminalResult: null,
      };
      return { runId, done: Promise.resolve(outcome) };
    }
    if (latest === null) return this.restartUnstarted(runId, opts.lease);
    const lease = opts.lease ?? (await store.acquire(runId, this.deps.owner));
    try {
      // As a resume needs it: on disk, a long run's history the model no longer sees stays there.
      const loaded = await store.loadResumeSnapshot(runId).catch(async (err: unknown) => {
        // Only run_started so far: no step began, so no model call and no tool ran.
        if (err instanceof CheckpointNotFoundError && latest.phase === 'run_started') return null;
        throw err;
      });
      if (loaded === null) return this.restartUnstarted(runId, lease);
      const rt = loaded.snapshot;
      if (rt.pending_llm_response !== null && !LlmResponse.safeParse(rt.pending_llm_response).success) {
        // Never a second LLM call for a response we received but cannot read.
        throw new AgentCheckpointCorruptionError(
          `Run ${runId}: the pending LLM response in checkpoint #${loaded.record.seq} cannot be read.`,
          runId,
        );
      }
      const ctx = rt.context as RunContext;
      const reasons = this.changedConditions(ctx);
      if (reasons.length > 0 && !opts.confirmed) throw new ResumeNeedsConfirmationError(runId, reasons);
      ctx.budget = { ...ctx.budget, ...opts.budget };
      ctx.extension_version = this.deps.extensionVersion;
      ctx.tool_schema_hash = this.deps.tools.schemaHash();
      // The checkpoint says which provider the run used; legacy adapter names fall back to the endpoint.
      return this.launch(
        runId,
        lease,
        await this.deps.provider(rt.requested_model, rt.provider_adapter || PROVIDER_ADAPTER),
        rt,
        // Paused to ask before condensing: resuming is the user's go-ahead. A snapshot taken inside a
        // step before its response (a crash, or damage that fell back there): that step is redone.
        {
          resumed: true,
          condenseApproved: latest.phase === 'pre_condense' && latest.payload.awaiting_consent === true,
          reenterStep: loaded.record.phase === 'step_started' || loaded.record.phase === 'post_condense',
          omitted: loaded.omitted,
        },
      );
    } catch (err) {
      await lease.release();
      throw err;
    }
  }

  /** A new run in the thread of `prev`, continuing from its latest checkpoint; `message` (and any it never delivered) in its inbox. */
  private async followUp(prev: RunSummary, message: { id?: string; text: string }): Promise<StartedRun> {
    const { store } = this.deps;
    const latest = await store.latest(prev.run_id);
    const { snapshot } = await store.loadSnapshot(prev.run_id);
    const undelivered = await store.listInbox(prev.run_id, { pendingOnly: true });
    const ref = parseModelLabel(prev.model);
    const provider = await this.deps.provider(ref.model, ref.adapter);
    const prevContext = snapshot.context as RunContext;
    // A new run records the folder it works in: this window's, whatever the previous turn recorded.
    const context: RunContext = { ...prevContext, ...this.freshContext() };
    const rt = continuationSnapshot(snapshot, {
      context,
      nowMs: this.now(),
      requestedModel: ref.model,
      normalizedModel: provider.normalized_model,
      providerAdapter: provider.provider_adapter,
    });
    const { run, lease } = await store.continueRun(
      {
        from: { run_id: prev.run_id, seq: latest.seq },
        title: titleFrom(message.text),
        task: message.text,
        agent_name: prev.agent_name,
        model: prev.model,
        first: {
          phase: 'run_started',
          step: 0,
          payload: this.startPayload(rt, { resumed: false, task: message.text }),
          snapshot: snapshotForWrite(rt),
        },
        messages: [...undelivered.map((m) => ({ id: m.id, text: m.text })), message],
      },
      this.deps.owner,
    );
    return this.launch(run.run_id, lease, provider, rt, { resumed: false, startRecorded: true });
  }

  /** A run whose first step never began (no LLM call, no tool): it starts over from its stored task. */
  private async restartUnstarted(runId: string, held?: RunLease): Promise<StartedRun> {
    const run = (await this.deps.store.getRun(runId))!;
    const lease = held ?? (await this.deps.store.acquire(runId, this.deps.owner));
    const ref = parseModelLabel(run.model);
    const provider = await this.deps.provider(ref.model, ref.adapter);
    const parent = run.parent_run_id ? { run_id: run.parent_run_id, tool_call_id: '' } : null;
    return this.launch(runId, lease, provider, this.freshSnapshot(run.task, ref.model, provider, undefined, parent), {
      resumed: false,
    });
  }

  /**
   * Writes decisions durably, then resumes the run when nothing is left waiting. With `lease` (a
   * worker that holds the run), writes under it and resumes with it; when something is still
   * waiting, the caller keeps it.
   */
  async decideApprovals(
    runId: string,
    decisions: DecisionInput[],
    opts: { by?: DecidedBy; lease?: RunLease } = {},
  ): Promise<StartedRun | undefined> {
    const by = opts.by ?? this.deps.decidedBy ?? localDecider(this.deps.owner.hostname);
    const { store } = this.deps;
    const pending = new Map((await store.listApprovals(runId, { pendingOnly: true })).map((a) => [a.tool_call_id, a]));
    // Edited arguments of an external tool are checked against its schema as its server gives it now.
    const unknownTool = decisions.some(
      (d) => d.kind === 'approve_edited' && !this.deps.tools.get(pending.get(d.toolCallId)?.tool_name ?? ''),
    );
    if (unknownTool) await this.deps.tools.refresh();
    const prepared = decisions.map((d) => {
      const approval = pending.get(d.toolCallId);
      if (!approval)
        throw new StaleApprovalError(
          runId,
          d.toolCallId,
          'it is not waiting for a decision (already decided, or never requested)',
        );
      if (approval.input_hash !== d.inputHash)
        throw new StaleApprovalError(runId, d.toolCallId, 'its arguments changed since it was shown');
      if (d.kind === 'approve') checkAccess(approval, d.access);
      else if (approval.retry && d.kind === 'approve_edited')
        throw new InvalidInputError(
          'A command the sandbox blocked runs again as it ran, or not at all: its arguments cannot be edited.',
        );
      if (d.kind !== 'approve_edited') return { d, args: undefined, hash: null };
      const tool = this.deps.tools.get(approval.tool_name);
      if (!tool) throw new InvalidEditedArgumentsError(`Unknown tool ${approval.tool_name}.`);
      const problem = argumentsProblem(d.argumentsJson);
      if (problem) throw new InvalidEditedArgumentsError(`The edited arguments are refused: ${problem}`);
      let json: unknown;
      try {
        json = JSON.parse(d.argumentsJson);
      } catch (err) {
        throw new InvalidEditedArgumentsError(`The edited arguments are not valid JSON: ${(err as Error).message}`);
      }
      const prepared = this.deps.tools.prepareArgs(tool, d.toolCallId, json, '');
      if (!prepared.ok) throw new InvalidEditedArgumentsError(prepared.error.output);
      return { d, args: prepared.args, hash: this.deps.tools.inputHash(tool, prepared.args) };
    });
    const lease = opts.lease ?? (await store.acquire(runId, this.deps.owner));
    try {
      for (const { d, args, hash } of prepared) {
        const approval = await store.decideApproval(runId, d.toolCallId, {
          kind: d.kind,
          reason: d.kind === 'reject' ? d.reason || 'Rejected by the user.' : null,
          input_hash: hash,
          ...(d.kind === 'approve_edited' ? { arguments: args } : {}),
          by: d.by ?? by,
          ...(d.kind === 'approve' && d.access ? { access: d.access } : {}),
        });
        this.events.emit({ type: 'approval-decided', runId, approval });
      }
    } finally {
      if (!opts.lease) await lease.release();
    }
    const left = await store.listApprovals(runId, { pendingOnly: true });
    if (left.length > 0) return undefined;
    return this.resume(runId, { confirmed: true, ...(opts.lease ? { lease: opts.lease } : {}) });
  }

  /**
   * Undo condense (context/undo.ts): the run's next request gets the context from before its latest
   * condense back. The run must be stopped (not running here, not finished).
   */
  async undoCondense(runId: string): Promise<string> {
    if (this.active.has(runId))
      throw new InvalidInputError('The run is working: cancel it first, then undo the condense.');
    return undoCondense(
      { store: this.deps.store, owner: this.deps.owner, tools: this.deps.tools.definitions() },
      runId,
    );
  }

  /** Kills the commands an active run waits for (still running from before a crash). False: none. */
  killLeftovers(runId: string): boolean {
    return this.active.get(runId)?.ref.exec?.killLeftovers() ?? false;
  }

  /**
   * Lets go of an active run at its next step boundary — the call under way finishes and is
   * recorded, nothing is cut short — leaving it `interrupted` with `detail` and its lease free, so
   * another owner (a worker, or the window that asked for it back) resumes it. False: not running here.
   */
  letGo(runId: string, detail: string): boolean {
    const a = this.active.get(runId);
    if (!a) return false;
    a.letGo = detail;
    a.ref.exec?.letGo(detail);
    return true;
  }

  /** Cancels an active run; it pauses with a checkpoint and can be resumed. */
  cancel(runId: string): boolean {
    const a = this.active.get(runId);
    a?.controller.abort('cancel');
    return a !== undefined;
  }

  /**
   * Runs left in `running` by a window that died (no live owner) become `interrupted`. Nothing
   * executes: resuming them is the user's choice.
   */
  async markInterrupted(): Promise<string[]> {
    const { store } = this.deps;
    const marked: string[] = [];
    let cursor: string | undefined;
    do {
      // Only running runs (the store answers from its index's head: never every run's summary).
      const page = await store.listRuns({ limit: 200, states: ['running'], ...(cursor ? { cursor } : {}) });
      for (const run of page.runs) {
        if (run.state !== 'running' || this.active.has(run.run_id) || (await store.owner(run.run_id))) continue;
        const lease = await store.acquire(run.run_id, this.deps.owner).catch(() => undefined);
        if (!lease) continue;
        try {
          // Loading it as its owner may have found damage and recorded it (a state of its own): keep that.
          if ((await store.getRun(run.run_id))?.state !== 'running') continue;
          await store.setRunState(
            run.run_id,
            'interrupted',
            `Interrupted at step ${run.step}: the window running it closed or crashed. Resume it to continue.`,
          );
          marked.push(run.run_id);
        } finally {
          await lease.release();
        }
      }
      cursor = page.cursor;
    } while (cursor);
    return marked;
  }

  /** Stops active runs as `interrupted` and waits for them (bounded); used on deactivate. */
  async shutdown(timeoutMs = 3000): Promise<void> {
    const done = [...this.active.values()].map((a) => {
      a.controller.abort('shutdown');
      return a.handle.done;
    });
    await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, timeoutMs))]);
    this.events.dispose();
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────
  /** `startRecorded`: the run's run_started checkpoint is already written (a follow-up's first, by continueRun). */
  private launch(
    runId: string,
    lease: RunLease,
    provider: ChatProvider,
    rt: RuntimeSnapshot,
    opts: {
      resumed: boolean;
      startRecorded?: boolean;
      condenseApproved?: boolean;
      reenterStep?: boolean;
      omitted?: ResumeSnapshot['omitted'];
    },
  ): StartedRun {
    const controller = new AbortController();
    const handleRef: { exec?: RunExecution } = {};
    const done = (async () => {
      try {
        const damage = (await this.deps.store.getRun(runId))?.damage ?? null;
        const exec = new RunExecution(this.loopDeps(provider), runId, lease, rt, controller.signal, {
          damage,
          condenseApproved: opts.condenseApproved ?? false,
          reenterStep: opts.reenterStep ?? false,
          ...(opts.omitted ? { omitted: opts.omitted } : {}),
        });
        handleRef.exec = exec;
        const wanted = this.active.get(runId)?.letGo;
        if (wanted) exec.letGo(wanted);
        await this.deps.store.setRunState(runId, 'running', null);
        this.events.emit({ type: 'state', runId, state: 'running', detail: null });
        if (!opts.startRecorded) {
          const record = await this.deps.store.append(runId, {
            phase: 'run_started',
            step: rt.step,
            payload: this.startPayload(rt, { resumed: opts.resumed, task: rt.messages[1]?.content ?? '' }),
          });
          this.events.emit({ type: 'phase', runId, record });
        }
        const outcome = await exec.drive();
        this.continueParent(rt.context as RunContext, outcome);
        return outcome;
      } catch (err) {
        const detail = `Could not start: ${errorMessage(err)}`;
        this.events.emit({ type: 'log', runId, level: 'error', message: detail });
        return { runId, state: 'paused_error' as RunState, detail, finalText: null, terminalResult: null };
      } finally {
        this.active.delete(runId);
        await lease.release().catch(() => undefined);
      }
    })();
    const handle = { runId, done };
    this.active.set(runId, { controller, handle, ref: handleRef });
    return handle;
  }

  private startPayload(rt: RuntimeSnapshot, p: { resumed: boolean; task: string }): Record<string, unknown> {
    const ctx = rt.context as RunContext;
    return {
      agent_name: 'agent-waypoints',
      resumed: p.resumed,
      task: p.task,
      extension_version: ctx.extension_version,
      tool_schema_hash: ctx.tool_schema_hash,
    };
  }

  /**
   * A subagent that finished after its parent had paused for it (its approvals were decided
   * later, in the panel) wakes the parent up. A parent that is running awaits the child itself.
   */
  private continueParent(ctx: RunContext, outcome: RunOutcome): void {
    const parentId = ctx.parent?.run_id;
    if (!parentId || this.active.has(parentId) || (outcome.state !== 'completed' && outcome.state !== 'failed')) return;
    void (async () => {
      const parent = await this.deps.store.getRun(parentId);
      if (parent?.state === 'awaiting_approval' && parent.pending_approvals === 0) {
        await this.resume(parentId, { confirmed: true });
      }
    })().catch((err) =>
      this.events.emit({
        type: 'log',
        runId: parentId,
        level: 'error',
        message: `could not continue the parent run: ${err}`,
      }),
    );
  }

  private loopDeps(provider: ChatProvider): LoopDeps {
    return {
      store: this.deps.store,
      provider,
      tools: this.deps.tools,
      policy: this.deps.policy,
      workspaceRoot: this.deps.workspaceRoot,
      ...(this.deps.storageDir ? { storageDir: this.deps.storageDir } : {}),
      events: this.events,
      outputCap: current(this.deps.outputCap) ?? 32 * 1024,
      context: { ...DEFAULT_CONTEXT_SETTINGS, ...current(this.deps.context) },
      ...(this.deps.files === false
        ? {}
        : {
            files: new FileChangeRecorder({
              workspaceRoot: this.deps.workspaceRoot,
              ...(this.deps.storageDir ? { storageDir: this.deps.storageDir } : {}),
              ...this.deps.files,
            }),
          }),
      now: this.now,
      delegate: (parent, call, task) => this.delegate(parent, call, task),
    };
  }

  private freshContext(budget?: Partial<Budget>, parent?: RunContext['parent']): RunContext {
    return {
      workspace_root: this.deps.workspaceRoot,
      budget: { ...(current(this.deps.defaultBudget) ?? DEFAULT_BUDGET), ...budget },
      active_ms: 0,
      extension_version: this.deps.extensionVersion,
      tool_schema_hash: this.deps.tools.schemaHash(),
      parent: parent ?? null,
    };
  }

  private freshSnapshot(
    task: string,
    model: string,
    provider: ChatProvider,
    budget?: Partial<Budget>,
    parent?: RunContext['parent'],
  ): RuntimeSnapshot {
    const context = this.freshContext(budget, parent);
    return initialSnapshot({
      systemPrompt: this.deps.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      task,
      context,
      requestedModel: model,
      normalizedModel: provider.normalized_model,
      providerAdapter: provider.provider_adapter,
      nowMs: this.now(),
    });
  }

  private changedConditions(ctx: RunContext): string[] {
    const reasons: string[] = [];
    if (ctx.extension_version !== this.deps.extensionVersion) {
      reasons.push(
        `the run started with Agent Waypoints ${ctx.extension_version}, this is ${this.deps.extensionVersion}`,
      );
    }
    if (ctx.tool_schema_hash !== this.deps.tools.schemaHash())
      reasons.push('the tools available to the agent changed since the run started');
    return reasons;
  }

  /** A delegate call's child run: deterministic id, so a resumed parent resumes (never restarts) it. */
  private async delegate(parent: RunExecution, call: ToolCall, task: string): Promise<DelegateOutcome> {
    const childId = `sub-${sha256(`${parent.runId}/${call.id}`).slice(0, 20)}`;
    const existing = await this.deps.store.getRun(childId);
    let handle: StartedRun;
    if (existing) {
      handle = await this.resume(childId, { confirmed: true });
    } else {
      const ref = { model: parent.rt.requested_model, adapter: parent.rt.provider_adapter || PROVIDER_ADAPTER };
      const model = ref.model;
      const provider = await this.deps.provider(ref.model, ref.adapter);
      const { run, lease } = await this.deps.store.createRun(
        {
          run_id: childId,
          title: `Subagent: ${titleFrom(task)}`,
          task,
          agent_name: 'agent-waypoints/subagent',
          model: modelLabel(ref),
          parent_run_id: parent.runId,
        },
        this.deps.owner,
      );
      const budget = {
        ...(parent.context.budget as Budget),
        max_steps: Math.min(10, parent.context.budget.max_steps ?? 10),
      };
      handle = this.launch(
        run.run_id,
        lease,
        provider,
        this.freshSnapshot(task, model, provider, budget, { run_id: parent.runId, tool_call_id: call.id }),
        { resumed: false },
      );
    }
    // Cancelling the parent cancels the child.
    const onAbort = () => this.active.get(childId)?.controller.abort(parent.signal.reason);
    parent.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const out = await handle.done;
      return { childRunId: childId, state: out.state, finalText: out.finalText, detail: out.detail };
    } finally {
      parent.signal.removeEventListener('abort', onAbort);
    }
  }
}

function titleFrom(task: string): string {
  const line = task.trim().split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'Agent run';
}

function current<T>(v: T | (() => T)): T {
  return typeof v === 'function' ? (v as () => T)() : v;
}

/**
 * A retry of a command the sandbox blocked needs its access chosen — domains among those it was
 * refused, or one run outside the sandbox — and nothing else takes one.
 */
function checkAccess(approval: Approval, access: SandboxAccess | undefined): void {
  if (!approval.retry) {
    if (access) throw new InvalidInputError(`${approval.tool_call_id} is not a retry: no access can be granted to it.`);
    return;
  }
  if (!access)
    throw new InvalidInputError(
      'The sandbox blocked this command: choose what it may do (allow its domains, or run it once outside the sandbox).',
    );
  const asked = new Set(approval.retry.blocked.domains);
  const other = access.kind === 'domains' ? access.domains.find((d) => !asked.has(d)) : undefined;
  if (other !== undefined)
    throw new InvalidInputError(`The command was not refused ${other}: only its refused domains can be allowed.`);
}
