// The in-memory runtime of one run: a RuntimeSnapshot (docs/design.md) that the loop mutates and
// checkpoints. The store is the source of truth; this is rebuilt from it on resume.
import type { ChatMessage, RunState, RuntimeSnapshot } from '../store/api/schema';
import type { Budget } from './budget';

export interface RunContext extends Record<string, unknown> {
  workspace_root: string;
  budget: Budget;
  /** Time spent running (not paused), for the wall-time budget. */
  active_ms: number;
  extension_version: string;
  tool_schema_hash: string;
  /** Set on subagent runs: the parent's run id and tool call. */
  parent?: { run_id: string; tool_call_id: string } | null;
}

export interface TerminalResult {
  state: RunState;
  final_text: string;
  final_structured: unknown;
  steps: number;
  llm_calls: number;
  tool_calls: number;
  usage: RuntimeSnapshot['usage'];
  total_cost_usd: number | null;
  replayed_effect_count: number;
}

export function initialSnapshot(opts: {
  systemPrompt: string;
  task: string;
  context: RunContext;
  requestedModel: string;
  normalizedModel: string;
  providerAdapter: string;
  nowMs: number;
}): RuntimeSnapshot {
  const messages: ChatMessage[] = [
    { role: 'system', content: opts.systemPrompt },
    { role: 'user', content: opts.task },
  ];
  return {
    messages,
    step: 0,
    state: 'running',
    context: opts.context,
    llm_calls: 0,
    tool_calls: 0,
    started_at_s: opts.nowMs / 1000,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    total_cost_usd: 0,
    session_token: null,
    checkpoint_token: null,
    pending_llm_response: null,
    tool_executions: [],
    subagent_executions: [],
    requested_model: opts.requestedModel,
    normalized_model: opts.normalizedModel,
    provider_adapter: opts.providerAdapter,
    final_text: '',
    final_structured: null,
    replayed_effect_count: 0,
  };
}

/**
 * The runtime a follow-up turn starts with: the previous run's conversation (and its pending LLM
 * response, whose finished calls replay), with this run's own counters, budget and clock. The
 * follow-up message itself arrives through the new run's inbox at its first step.
 */
export function continuationSnapshot(
  prev: RuntimeSnapshot,
  opts: {
    context: RunContext;
    nowMs: number;
    requestedModel: string;
    normalizedModel: string;
    providerAdapter: string;
  },
): RuntimeSnapshot {
  return {
    ...prev,
    messages: prev.messages.slice(),
    step: 0,
    state: 'running',
    context: opts.context,
    llm_calls: 0,
    tool_calls: 0,
    started_at_s: opts.nowMs / 1000,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    total_cost_usd: 0,
    tool_executions: [],
    subagent_executions: [],
    requested_model: opts.requestedModel,
    normalized_model: opts.normalizedModel,
    provider_adapter: opts.providerAdapter,
    final_text: '',
    final_structured: null,
    replayed_effect_count: 0,
  };
}

export function terminalResult(rt: RuntimeSnapshot): TerminalResult {
  return {
    state: rt.state,
    final_text: rt.final_text,
    final_structured: rt.final_structured,
    steps: rt.step,
    llm_calls: rt.llm_calls,
    tool_calls: rt.tool_calls,
    usage: { ...rt.usage },
    total_cost_usd: rt.total_cost_usd,
    replayed_effect_count: rt.replayed_effect_count,
  };
}

/**
 * What the store receives for a snapshot: the lists as copies of their current length (the loop
 * keeps appending to its own arrays) and the small mutable objects cloned, so a write that is
 * queued behind never sees later changes.
 */
export function snapshotForWrite(rt: RuntimeSnapshot): RuntimeSnapshot {
  return {
    ...rt,
    context: structuredClone(rt.context),
    usage: { ...rt.usage },
    pending_llm_response: rt.pending_llm_response ? structuredClone(rt.pending_llm_response) : null,
    messages: rt.messages.slice(),
    tool_executions: rt.tool_executions.slice(),
    subagent_executions: rt.subagent_executions.slice(),
  };
}

export const DEFAULT_SYSTEM_PROMPT = [
  "You are a careful coding agent working inside the user's VS Code workspace.",
  'Use the tools to read, search, edit files and run commands; paths are relative to the workspace root.',
  "Prefer small, exact edits (edit_file) over rewriting whole files. Run the project's tests after changes when there are any.",
  "Write and command tools may need the user's approval; if a call is rejected, read the reason and adapt.",
  'When the task is done, answer with a short summary of what you changed and how you checked it.',
].join('\n');
