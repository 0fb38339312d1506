// The benchmark's synthetic run (bench/README.md, "What runs"): seeded and
// deterministic, so every contender and every machine sees byte-for-byte the same run. Each step
// mutates a RuntimeSnapshot exactly as src/runner/loop.ts and calls/ do and emits the store calls the loop
// makes, in the loop's order, with the durability it asks for (docs/design.md, "Durable barriers"):
//   step_started(snapshot) → makeDurable (before any request: the last batch's results ride on it)
//   → the model's answer (`model`: off the clock; ours lets a compaction started at that barrier finish,
//     as it would while a real model answers) → pre_llm → post_llm(snapshot, pending response: rides on the next barrier) → pre_tool_batch
//   → the intents that go ahead of the batch (a command's; a write's unless an earlier call of the
//     batch is a command or names its path), then makeDurable (one barrier: carries the response)
//   → per call: side-effecting [recordIntent unless it went ahead (a barrier) → (tool runs) →
//     recordResult (rides on the next barrier; written ahead of it, unsynced, when another call of
//     the batch follows)], read-only [makeDurable if the response has not been carried yet →
//     (tool runs)] → post_tool_batch
// Reads the loop makes (listApprovals/listEffects before a tool batch) are not persistence and
// are left out. Nothing here is timed: a step's calls are generated before the contenders run them.
// The peers make every write durable as they always do; `barrier` is a no-op for them.
import { inputHash, outputHash, sha256 } from '../src/runner/hash';
import { initialSnapshot, type RunContext, snapshotForWrite } from '../src/runner/runtime';
import type { AssistantMessage, EffectResult, LlmResponse, RuntimeSnapshot, ToolCall } from '../src/store/api/schema';
import type {
  AppendInput,
  CheckpointStore,
  NewEffectIntent,
  NewRunInput,
  OwnerInfo,
  WriteOptions,
} from '../src/store/api/types';
import { createMemoryStore, openDiskStoreReady } from '../src/store';
import fs from 'node:fs';
import { codeText, mulberry32, type Rng } from './text';

export type Op =
  | { kind: 'append'; input: AppendInput; durability?: WriteOptions['durability'] }
  | { kind: 'intent'; intent: NewEffectIntent; durability?: 'next-barrier' }
  | {
      kind: 'result';
      toolCallId: string;
      result: Omit<EffectResult, 'finished_ms'>;
      durability?: 'next-barrier' | 'written';
    }
  /** The runner's makeDurable(): before any request, and (`toolsNext`) before the batch's tools run. */
  | { kind: 'barrier'; toolsNext?: true }
  /** The model answering (not timed): the store's background work may run meanwhile. */
  | { kind: 'model' }
  /** The runner's assertOwner(): the lease proven just before a side-effecting call starts. */
  | { kind: 'fence' };

export interface StepPlan {
  step: number;
  ops: Op[];
  /**
   * Bytes of new content the store was handed in this step: JSON of the list items that appear
   * for the first time in this step's snapshots (the previous step's tool messages and executions,
   * which the runner first passes in this step_started snapshot, plus this step's assistant
   * message). Effect outputs repeat tool messages and checkpoint headers are metadata: both count
   * as overhead, not content.
   */
  contentBytes: number;
}

/** Tools the synthetic model calls. 1 call in 3 is side-effecting (journaled), as the brief asks. */
const READ_TOOLS = ['read_file', 'search_text', 'list_files'] as const;
const WRITE_TOOLS = ['write_file', 'edit_file', 'run_command'] as const;

/** Size distribution of one tool result (fixed; see bench/README.md for the resulting totals). */
export const SIZES = {
  smallMin: 512,
  smallMax: 4096,
  bigMin: 50 * 1024,
  bigMax: 200 * 1024,
  /** Share of read_file results that are a large file read. */
  bigShareOfReadFile: 1 / 20,
};

const MODEL = 'gpt-4.1-mini';
const PROVIDER = 'openai';
const T0 = 1_750_000_000_000; // fake clock: timestamps are part of the bytes, so they are seeded too

export interface WorkloadOptions {
  emptyToolOutputs?: boolean;
  condenseEvery?: number;
}

export class Workload {
  readonly runInput: NewRunInput;
  readonly runStarted: AppendInput;
  private readonly rng: Rng;
  private readonly rt: RuntimeSnapshot;
  private step = 0;
  /** List lengths already handed to the store in a snapshot (for contentBytes). */
  private given = { messages: 0, tool_executions: 0, subagent_executions: 0 };
  /** Running JSON size of the conversation (messages), to print the real size at the end. */
  conversationBytes = 0;
  /** Sum of contentBytes over all steps. */
  totalContentBytes = 0;
  /** Messages in the newest snapshot handed over: what every contender must give back on resume. */
  lastSnapshotMessages = 0;
  /** Checkpoints appended (run_started included), effect records written, tool calls made. */
  checkpointCount = 1;
  effectCount = 0;
  toolCallCount = 0;
  /** The state before step 1 (LangGraph's "input" checkpoint needs it). */
  readonly initial: RuntimeSnapshot;

  /**
   * `emptyToolOutputs`: every tool returns "" (the fixed-bytes figure: what a step costs beyond its content).
   * `condenseEvery`: context management condenses the conversation every that many steps (the scale run).
   */
  constructor(
    seed: number,
    runId: string,
    private readonly opts: WorkloadOptions = {},
  ) {
    this.rng = mulberry32(seed);
    const context: RunContext = {
      workspace_root: '/home/dev/projects/shop-api',
      budget: { max_steps: null, max_cost_usd: null, max_tokens: null, max_wall_ms: null },
      active_ms: 0,
      extension_version: '0.1.0',
      tool_schema_hash: sha256('bench-tools-v1'),
    };
    const task =
      'Add pagination to the /orders endpoint, update the OpenAPI spec and the tests, then run the test suite.';
    this.rt = initialSnapshot({
      systemPrompt: "You are a careful coding agent working inside the user's VS Code workspace. ".repeat(8),
      task,
      context,
      requestedModel: MODEL,
      normalizedModel: MODEL,
      providerAdapter: PROVIDER,
      nowMs: T0,
    });
    for (const m of this.rt.messages) this.conversationBytes += jsonBytes(m);
    this.initial = snapshotForWrite(this.rt);
    this.runInput = {
      run_id: runId,
      title: 'bench: paginate /orders',
      task,
      agent_name: 'agent-waypoints',
      model: MODEL,
    };
    this.runStarted = {
      phase: 'run_started',
      step: 0,
      payload: {
        agent_name: 'agent-waypoints',
        resumed: false,
        task,
        extension_version: '0.1.0',
        tool_schema_hash: context.tool_schema_hash,
      },
    };
  }

  /** Generates step `this.step + 1`: its store calls and the content bytes it hands over. */
  nextStep(): StepPlan {
    const rt = this.rt;
    const ops: Op[] = [];
    let contentBytes = 0;
    const snap = (): RuntimeSnapshot => {
      contentBytes += this.newContentBytes();
      (rt.context as RunContext).active_ms = this.now() - T0;
      this.lastSnapshotMessages = rt.messages.length;
      return snapshotForWrite(rt);
    };

    this.step += 1;
    rt.step = this.step;
    rt.state = 'running';
    ops.push(this.append('step_started', { state: rt.state, message_count: rt.messages.length }, snap()));
    const every = this.opts.condenseEvery;
    if (every && this.step % every === 0) contentBytes += this.condense(ops, snap);
    ops.push({ kind: 'barrier' });
    ops.push({ kind: 'model' });
    ops.push(this.append('pre_llm', { model: MODEL, provider: PROVIDER, message_count: rt.messages.length }));

    // The "LLM call": an assistant message with 1–3 tool calls.
    const calls = this.toolCalls();
    const message: AssistantMessage = {
      role: 'assistant',
      content: this.rng() < 0.6 ? codeText(this.rng, 80 + this.int(0, 400)) : null,
      tool_calls: calls,
    };
    const usage = {
      input_tokens: Math.round(this.conversationBytes / 4),
      output_tokens: 60 + this.int(0, 400),
      total_tokens: 0,
    };
    usage.total_tokens = usage.input_tokens + usage.output_tokens;
    const response: LlmResponse = {
      id: `chatcmpl-${this.step}`,
      model: MODEL,
      finish_reason: 'tool_calls',
      message,
      usage,
      received_ms: this.now(),
    };
    rt.llm_calls += 1;
    rt.usage.input_tokens += usage.input_tokens;
    rt.usage.output_tokens += usage.output_tokens;
    rt.usage.total_tokens += usage.total_tokens;
    rt.total_cost_usd = (rt.total_cost_usd ?? 0) + (usage.input_tokens * 0.4 + usage.output_tokens * 1.6) / 1e6;
    rt.messages.push(message);
    this.conversationBytes += jsonBytes(message);
    rt.pending_llm_response = response;
    ops.push({
      ...this.append(
        'post_llm',
        {
          model: MODEL,
          provider: PROVIDER,
          finish_reason: 'tool_calls',
          tool_call_count: calls.length,
          session_token: null,
          checkpoint_token: null,
          total_cost_usd: rt.total_cost_usd,
        },
        snap(),
      ),
      durability: 'next-barrier',
    } as Op);
    let responseOwed = true;

    // The tool batch: the intents that can go ahead of it first, with the response, in one barrier.
    ops.push(this.append('pre_tool_batch', { tool_call_count: calls.length }));
    const intentOf = (call: ToolCall): NewEffectIntent => ({
      tool_call_id: call.id,
      step: this.step,
      tool_name: call.function.name,
      input_hash: inputHash(call.function.name, JSON.parse(call.function.arguments)),
      side_effecting: true,
    });
    const ahead = intentsAhead(calls);
    for (const call of calls)
      if (ahead.has(call.id)) ops.push({ kind: 'intent', intent: intentOf(call), durability: 'next-barrier' });
    if (ahead.size > 0) {
      ops.push({ kind: 'barrier', toolsNext: true });
      responseOwed = false;
    }
    for (const [i, call] of calls.entries()) {
      const name = call.function.name;
      const sideEffecting = (WRITE_TOOLS as readonly string[]).includes(name);
      const hash = inputHash(name, JSON.parse(call.function.arguments));
      const started = this.now();
      if (sideEffecting && !ahead.has(call.id)) ops.push({ kind: 'intent', intent: intentOf(call) });
      else if (!sideEffecting && responseOwed) ops.push({ kind: 'barrier', toolsNext: true });
      responseOwed = false;
      if (sideEffecting) ops.push({ kind: 'fence' });
      const content = codeText(this.rng, this.resultSize(name));
      const outHash = outputHash(content);
      if (sideEffecting)
        ops.push({
          kind: 'result',
          toolCallId: call.id,
          result: { output: content, output_hash: outHash, is_error: false, blob: null },
          durability: i < calls.length - 1 ? 'written' : 'next-barrier',
        });
      const toolMessage = { role: 'tool' as const, tool_call_id: call.id, content };
      rt.messages.push(toolMessage);
      this.conversationBytes += jsonBytes(toolMessage);
      rt.tool_calls += 1;
      rt.tool_executions.push({
        tool_call_id: call.id,
        tool_name: name,
        step: this.step,
        input_hash: hash,
        output_hash: outHash,
        is_error: false,
        replayed: false,
        started_ms: started,
        finished_ms: this.now(),
      });
    }
    ops.push(this.append('post_tool_batch', { tool_calls_total: rt.tool_calls, tool_failures: 0 }));
    rt.pending_llm_response = null; // no checkpoint here: the next step_started carries it (as in the loop)

    this.totalContentBytes += contentBytes;
    for (const op of ops) {
      if (op.kind === 'append') this.checkpointCount += 1;
      else if (op.kind === 'intent' || op.kind === 'result') this.effectCount += 1;
    }
    this.toolCallCount += calls.length;
    return { step: this.step, ops, contentBytes };
  }

  /**
   * A condense as context management makes it before a request (src/runner/context/fit.ts): pre_condense,
   * the summary call (the model answering), post_condense with the snapshot whose model context now
   * sends messages[head, through) as the summary. The messages list itself is never changed. Returns
   * the summary's bytes: new content of the step.
   */
  private condense(ops: Op[], snap: () => RuntimeSnapshot): number {
    const rt = this.rt;
    const context = {
      tokens: Math.round(this.conversationBytes / 4),
      window: 128_000,
      window_source: 'family',
      estimated: true,
    };
    const preSeq = this.checkpointCount + ops.filter((o) => o.kind === 'append').length + 1;
    ops.push(this.append('pre_condense', { reason: 'threshold', context, awaiting_consent: false }));
    ops.push({ kind: 'model' });
    const before = rt.model_context ?? null;
    const through = Math.max(2, rt.messages.length - 12);
    const summary = codeText(this.rng, 1500 + this.int(0, 4500));
    rt.model_context = {
      stub_before: through,
      stub_chars: 2000,
      learned_window: null,
      hold: false,
      condense: { id: `condense-${preSeq}`, pre_seq: preSeq, head: 2, through, summary, step: this.step },
    };
    const payload = {
      condense_id: `condense-${preSeq}`,
      before,
      context: { ...context, tokens: 20_000 },
      usage: {
        input_tokens: context.tokens,
        output_tokens: Math.round(summary.length / 4),
        total_tokens: context.tokens + Math.round(summary.length / 4),
      },
      cost_usd: 0.01,
    };
    ops.push(this.append('post_condense', payload, snap()));
    return jsonBytes(summary);
  }

  private append(phase: AppendInput['phase'], payload: Record<string, unknown>, snapshot?: RuntimeSnapshot): Op {
    return { kind: 'append', input: { phase, step: this.step, payload, ...(snapshot ? { snapshot } : {}) } };
  }

  private newContentBytes(): number {
    let n = 0;
    for (const field of ['messages', 'tool_executions', 'subagent_executions'] as const) {
      const list = this.rt[field];
      for (let i = this.given[field]; i < list.length; i++) n += jsonBytes(list[i]);
      this.given[field] = list.length;
    }
    return n;
  }

  private toolCalls(): ToolCall[] {
    const n = 1 + this.int(0, 2);
    const calls: ToolCall[] = [];
    for (let k = 0; k < n; k++) {
      const sideEffecting = this.rng() < 1 / 3;
      const name = sideEffecting ? this.pick(WRITE_TOOLS) : this.pick(READ_TOOLS);
      const file = `src/${this.pick(['orders', 'api', 'db', 'util', 'auth'])}/${this.pick(['index', 'routes', 'model', 'service', 'paginate'])}${this.int(0, 40)}.ts`;
      const args =
        name === 'write_file'
          ? { path: file, content: codeText(this.rng, 200 + this.int(0, 1200)) }
          : name === 'edit_file'
            ? {
                path: file,
                old: codeText(this.rng, 40 + this.int(0, 200)),
                new: codeText(this.rng, 40 + this.int(0, 300)),
              }
            : name === 'run_command'
              ? { command: this.pick(['npm test', 'npm run lint', 'git status', 'npx tsc --noEmit']) }
              : name === 'search_text'
                ? { query: this.pick(['paginate', 'cursor', 'limit', 'OrderRow']), glob: 'src/**/*.ts' }
                : { path: file };
      calls.push({
        id: `call_${this.step}_${k}_${Math.floor(this.rng() * 1e9).toString(36)}`,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      });
    }
    return calls;
  }

  private resultSize(tool: string): number {
    if (this.opts.emptyToolOutputs) return 0;
    if (tool === 'read_file' && this.rng() < SIZES.bigShareOfReadFile) return this.int(SIZES.bigMin, SIZES.bigMax);
    return this.int(SIZES.smallMin, SIZES.smallMax);
  }

  private now(): number {
    return T0 + this.step * 4_000 + this.int(0, 999);
  }

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rng() * (hi - lo + 1));
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)]!;
  }
}

/**
 * The calls whose intents the loop writes ahead of their batch (src/runner/calls/batch.ts, intentsAhead): a
 * command's; a write's unless an earlier side-effecting call of the batch is a command or names its path.
 */
function intentsAhead(calls: readonly ToolCall[]): Set<string> {
  const ahead = new Set<string>();
  let anyWriter = false;
  const named = new Set<string>();
  for (const call of calls) {
    const name = call.function.name;
    if (!(WRITE_TOOLS as readonly string[]).includes(name)) continue;
    if (name === 'run_command') {
      ahead.add(call.id);
      anyWriter = true;
      continue;
    }
    if (anyWriter) continue;
    const file = (JSON.parse(call.function.arguments) as { path: string }).path.toLowerCase();
    if (!named.has(file)) ahead.add(call.id);
    named.add(file);
  }
  return ahead;
}

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** One workload op through the CheckpointStore interface, as the runner would make it. */
export async function applyOp(store: CheckpointStore, runId: string, op: Op): Promise<void> {
  const opts = 'durability' in op && op.durability ? { durability: op.durability } : undefined;
  if (op.kind === 'append') await store.append(runId, op.input, opts);
  else if (op.kind === 'intent') await store.recordIntent(runId, op.intent, opts);
  else if (op.kind === 'result') await store.recordResult(runId, op.toolCallId, op.result, opts);
  else if (op.kind === 'model') await store.whenIdle(runId);
  else if (op.kind === 'fence') await store.assertOwner(runId);
  else await store.makeDurable(runId, op.toolsNext ? { toolsNext: true } : undefined);
}

/**
 * The seeded run of `steps` steps, finished, written in memory and imported into a disk store at
 * `dir` (as a run is on disk after it was let go: one import, compacted as it finished when long).
 */
export async function writeFinishedRun(
  dir: string,
  runId: string,
  steps: number,
  owner: OwnerInfo,
): Promise<{ dir: string; workload: Workload }> {
  const workload = new Workload(20240601, runId);
  const mem = createMemoryStore({ deferMs: 60_000 });
  const { lease } = await mem.createRun({ ...workload.runInput, run_id: runId }, owner);
  await mem.append(runId, workload.runStarted);
  for (let s = 0; s < steps; s++) for (const op of workload.nextStep().ops) await applyOp(mem, runId, op);
  await mem.setRunState(runId, 'completed', null);
  await lease.release();
  const exported = await mem.exportRun(runId);
  await mem.close();
  fs.mkdirSync(dir, { recursive: true });
  const writer = await openDiskStoreReady(dir);
  await writer.importRun(exported, owner);
  await writer.close();
  return { dir, workload };
}
