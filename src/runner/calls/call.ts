// One tool call of a batch, with its durability steps: the two-phase effect journal (a durable
// *intent* before a side-effecting tool runs, its *result* after), the file journal around the tool
// (pre-images before the intent, what changed with the result), or the result replayed from the
// journal on resume — and the call's answer appended to the conversation.
import type { ChatMessage, Effect, RuntimeSnapshot, ToolCall } from '../../store/api/schema';
import { StoreWriteError } from '../../store/api/errors';
import { errorMessage } from '../errors';
import type { FileWatch } from '../fileJournal/recorder';
import { idempotencyKey, inputHashFromRaw, outputHash } from '../hash';
import type { Tool } from '../tools/types';
import { type CallPlan, toolMessageContent } from './plan';
import { blockedOf, composeChanges, retriedContent, sandboxRun } from './sandboxed';
import type { Ahead, CallScope, RunPlan } from './scope';

export class CallRunner {
  constructor(private readonly s: CallScope) {}

  /**
   * Executes (or replays) one call and appends its tool message. Returns false for an error result.
   * `more`: another call of the batch runs after this one.
   */
  async run(plan: CallPlan, opts: { ahead: Map<string, Ahead>; more: boolean }): Promise<boolean> {
    const { call } = plan;
    const { rt, deps } = this.s;
    const startedMs = deps.now();
    if (plan.kind === 'replay') {
      const r = plan.effect.result!;
      rt.replayed_effect_count += 1;
      deps.events.emit({
        type: 'effect-replayed',
        runId: this.s.runId,
        toolCallId: call.id,
        toolName: call.function.name,
      });
      recordToolResult(rt, {
        call,
        content: r.output,
        inputHash: plan.effect.input_hash,
        outputHash: r.output_hash,
        isError: r.is_error,
        replayed: true,
        startedMs,
        finishedMs: deps.now(),
      });
      return !r.is_error;
    }
    if (plan.kind === 'error') {
      recordToolResult(rt, {
        call,
        content: plan.output,
        inputHash: inputHashFromRaw(call.function.name, call.function.arguments),
        outputHash: outputHash(plan.output),
        isError: true,
        replayed: false,
        startedMs,
        finishedMs: deps.now(),
      });
      return false;
    }
    if (plan.kind !== 'run') return true;
    return this.execute(plan, { ...opts, startedMs });
  }

  /** intent → the tool → result, with the file journal around the tool. */
  private async execute(
    plan: RunPlan,
    { ahead, more, startedMs }: { ahead: Map<string, Ahead>; more: boolean; startedMs: number },
  ): Promise<boolean> {
    const { call, tool } = plan;
    const { watch, intentFiles } = await this.start(plan, ahead);
    if (tool.sideEffecting) {
      // Fail closed: a side effect starts only while this window provably holds the run, so an owner
      // cut off or stopped mid-batch never runs a call the window that took over runs too.
      await this.s.deps.store.assertOwner(this.s.runId);
      ahead.delete(call.id); // from here on it has started: never withdrawn
    }
    this.emitTool(plan, 'start');
    const { result, storageError } = await this.invoke(plan);
    this.emitTool(plan, 'end', result.is_error);
    const retry = plan.retry;
    const output = retry ? retriedContent(retry.blocked, retry.access, result.output) : result.output;
    const content = toolMessageContent(output, plan);
    const blocked = blockedOf(result.sandbox);
    // A failure to record the result throws: the intent stays without a result, so resume asks (may already have run).
    if (tool.sideEffecting) {
      const journaled: Partial<Pick<Effect, 'files' | 'file_scan'>> = watch
        ? await this.finishWatch(watch, intentFiles)
        : {};
      // A retry's changes join the earlier attempts': restore takes the files back to before the first.
      if (retry && journaled.files) journaled.files = composeChanges(intentFiles, journaled.files);
      // Durable at the next barrier (the next call's intent, or the one before the next request).
      // When another call follows it is written first, so a crash of the window during that call
      // cannot turn this answered call into one that "may already have run".
      await this.s.deps.store.recordResult(
        this.s.runId,
        call.id,
        {
          output: content,
          output_hash: outputHash(content),
          is_error: result.is_error,
          blob: result.blob,
          ...(result.raw_blob ? { raw_blob: result.raw_blob } : {}),
          ...(blocked ? { blocked } : {}),
          ...journaled,
        },
        { durability: more ? 'written' : 'next-barrier' },
      );
    }
    if (storageError) throw storageFailure(tool, storageError, await this.resultStored(tool));
    recordToolResult(this.s.rt, {
      call,
      content,
      inputHash: plan.hash,
      outputHash: outputHash(content),
      isError: result.is_error,
      replayed: false,
      startedMs,
      finishedMs: this.s.deps.now(),
    });
    return !result.is_error;
  }

  /** The call's intent, durable before its tool runs (written ahead, or now), and its pre-images. */
  private async start(
    plan: RunPlan,
    ahead: Map<string, Ahead>,
  ): Promise<{ watch?: FileWatch; intentFiles: Effect['files'] }> {
    const early = ahead.get(plan.call.id);
    if (plan.retry) {
      // Run again as the user approved after the sandbox blocked it: the earlier attempts' changes stand.
      const watch = await watchFiles(this.s, plan);
      const again = await this.s.deps.store.recordRetry(this.s.runId, plan.call.id, {
        input_hash: plan.hash,
        sandbox: sandboxRun(plan.sandbox, plan.approvedBy, plan.retry.access),
      });
      this.s.response.carried();
      return { watch, intentFiles: again.files };
    }
    if (early) {
      // Its intent went ahead (durable): a command's scan is taken now, just before it runs.
      const watch = early.watch ?? (await watchFiles(this.s, plan));
      return { watch, intentFiles: early.files };
    }
    if (plan.tool.sideEffecting) {
      // Pre-images are stored before the intent that refers to them; the intent is durable before
      // the tool runs: if we crash while it runs, resume knows it may have run and restore knows
      // what the files were.
      const watch = await watchFiles(this.s, plan);
      const intent = await this.s.deps.store.recordIntent(this.s.runId, intentOf(this.s.rt.step, plan, watch));
      this.s.response.carried(); // the intent's barrier carried the response
      ahead.set(plan.call.id, { plan, watch, files: intent.files }); // withdrawn if the lease is not proven
      return { watch, intentFiles: intent.files };
    }
    await this.s.response.makeDurable();
    return { intentFiles: undefined };
  }

  /** Runs the tool. A blob the store could not keep is remembered: the pause then names the disk, not the tool. */
  private async invoke(plan: RunPlan) {
    const { call, tool } = plan;
    const { deps, runId } = this.s;
    const { store } = deps;
    let storageError: Error | null = null;
    const keep = async (put: () => Promise<string>): Promise<string> => {
      try {
        return await put();
      } catch (err) {
        storageError ??= err as Error;
        throw err;
      }
    };
    let processRecorded: Promise<unknown> = Promise.resolve();
    const prepared = { ok: true as const, tool_call_id: call.id, tool, args: plan.args, input_hash: plan.hash };
    const result = await deps.tools.run(prepared, {
      workspaceRoot: deps.workspaceRoot,
      storageDir: deps.storageDir,
      signal: this.s.signal,
      idempotencyKey: idempotencyKey(runId, this.s.rt.step, call.id),
      approvedBy: plan.approvedBy,
      judged: plan.judged,
      ...(plan.sandbox
        ? { sandbox: { ...plan.sandbox, workspaceRoot: deps.workspaceRoot, storageDir: deps.storageDir } }
        : {}),
      outputCap: deps.outputCap,
      history: {
        // (not among the messages held: a run resumed from its resume point reads them whole)
        toolOutput: async (id) =>
          toolOutput(this.s.rt.messages, id) ?? toolOutput((await store.loadSnapshot(runId)).snapshot.messages, id),
      },
      putBlob: (content) => keep(() => store.putBlob(runId, content)),
      putBlobBytes: (content, hash) => keep(() => store.putBlob(runId, content, hash)),
      onProgress: (p) => deps.events.emit({ type: 'tool-progress', runId, toolCallId: call.id, ...p }),
      onSpawn: tool.sideEffecting
        ? (pid) => {
            const proc = { pid, hostname: this.s.lease.owner.hostname, started_ms: deps.now() };
            processRecorded = store
              .recordProcess(runId, call.id, proc)
              .catch((err: unknown) =>
                this.s.log('warn', `could not record the process of ${call.id}: ${errorMessage(err)}`),
              );
          }
        : undefined,
    });
    await processRecorded;
    return { result, storageError: storageError as Error | null };
  }

  private emitTool(plan: RunPlan, status: 'start' | 'end', isError?: boolean): void {
    this.s.deps.events.emit({
      type: 'tool',
      runId: this.s.runId,
      step: this.s.rt.step,
      toolCallId: plan.call.id,
      toolName: plan.tool.name,
      status,
      ...(status === 'end' ? { isError } : {}),
    });
  }

  /** Whether the result just recorded is on disk now (a barrier): what the pause may promise about it. */
  private async resultStored(tool: Tool): Promise<boolean> {
    if (!tool.sideEffecting) return false;
    return this.s.deps.store.makeDurable(this.s.runId).then(
      () => true,
      () => false,
    );
  }

  /** What the call changed. A journal that fails is reported in the record, never in place of the result. */
  private async finishWatch(
    watch: FileWatch,
    intentFiles: Effect['files'],
  ): Promise<Awaited<ReturnType<FileWatch['finish']>>> {
    try {
      return await watch.finish(intentFiles);
    } catch (err) {
      this.s.log('warn', `the file journal could not record what the call changed: ${errorMessage(err)}`);
      return {
        files: [],
        file_scan: { files: 0, ms: 0, complete: false, note: `the file journal failed: ${errorMessage(err)}` },
      };
    }
  }
}

/** The call's intent as the effect journal records it, with the pre-images taken for it. */
export function intentOf(step: number, plan: RunPlan, watch: FileWatch | undefined) {
  return {
    tool_call_id: plan.call.id,
    step,
    tool_name: plan.tool.name,
    input_hash: plan.hash,
    side_effecting: true,
    ...(watch && watch.files.length > 0 ? { files: watch.files } : {}),
    ...(plan.tool.category === 'command' ? { sandbox: sandboxRun(plan.sandbox, plan.approvedBy) } : {}),
  };
}

/** The file journal's watch over what the call may change (absent: no journal in this runner). */
export async function watchFiles(s: CallScope, plan: RunPlan): Promise<FileWatch | undefined> {
  const { files, store } = s.deps;
  if (!files) return undefined;
  return files.watch(plan.tool, plan.args, {
    put: (content, hash) => store.putBlob(s.runId, content, hash),
    effects: () => store.listEffects(s.runId),
    signal: s.signal,
  });
}

export interface ToolResult {
  call: ToolCall;
  /** The tool message the model sees. */
  content: string;
  inputHash: string;
  outputHash: string;
  isError: boolean;
  /** Taken from the effect journal, not run again. */
  replayed: boolean;
  startedMs: number;
  finishedMs: number;
}

/** A call's answer joins the conversation and the run's tool executions. */
export function recordToolResult(rt: RuntimeSnapshot, r: ToolResult): void {
  rt.messages.push({ role: 'tool', tool_call_id: r.call.id, content: r.content });
  rt.tool_calls += 1;
  rt.tool_executions.push({
    tool_call_id: r.call.id,
    tool_name: r.call.function.name,
    step: rt.step,
    input_hash: r.inputHash,
    output_hash: r.outputHash,
    is_error: r.isError,
    replayed: r.replayed,
    started_ms: r.startedMs,
    finished_ms: r.finishedMs,
  });
}

/**
 * The tool did its work but the disk failed under it: pause with the disk's error, never a tool error.
 * What it says of the result is what a reopened store will hold (`stored`: its barrier went through).
 */
function storageFailure(tool: Tool, cause: Error, stored: boolean): StoreWriteError {
  const after = !tool.sideEffecting
    ? 'It only reads, so resuming runs it again.'
    : stored
      ? 'Its result is recorded and is replayed on resume: it does not run again.'
      : 'Its result could not be stored either, so resuming may ask you whether to run it again: it did run.';
  const code = (cause as { code?: string }).code;
  return new StoreWriteError(
    `${tool.name} ran, but its full output could not be stored (${cause.message}). ${after} Free disk space, then resume.`,
    null,
    code,
    { cause },
  );
}

function toolOutput(messages: readonly ChatMessage[], toolCallId: string): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]; // (a hole: what a resume left out)
    if (m?.role === 'tool' && m.tool_call_id === toolCallId) return m.content;
  }
  return undefined;
}
