// Turns what a server sent (a stream of chunks, or one JSON body) into the stored shapes. Written
// defensively: local servers differ in small ways (tool calls in one chunk, no index, `stop` with
// tool calls), and a misbehaving one must give a clear error or a repaired call, never a crash.
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { AssistantMessage, ToolCall, Usage } from '../../store/api/schema';
import { ProviderError } from './errors';
import { type ReasoningFrom, reasoningBeside, splitContent } from './parts';

export interface Assembled {
  id: string | null;
  model: string | null;
  finish_reason: string | null;
  message: AssistantMessage;
  usage: Usage | null;
  /** Repairs made to what the server sent (missing ids, names …), for the log. */
  warnings: string[];
}

/**
 * The text, reasoning and tool-call arguments of one streamed answer, in characters: as much as the
 * fetch reads of one response body (guardedFetch.ts), and many times the longest answer a model writes.
 */
export const MAX_ANSWER_CHARS = 8 * 1024 * 1024;

/** Maps the finish reasons servers use onto OpenAI's set; tool calls present always means `tool_calls`. */
export function normalizeFinishReason(raw: string | null | undefined, hasToolCalls: boolean): string | null {
  const r = raw == null ? null : String(raw).toLowerCase();
  if (hasToolCalls && (r === null || r === 'stop' || r === 'tool_calls' || r === 'function_call')) return 'tool_calls';
  if (r === 'eos' || r === 'eos_token' || r === 'stop_sequence' || r === 'end_turn') return 'stop';
  if (r === 'max_tokens' || r === 'model_length') return 'length';
  if (r === 'function_call') return 'tool_calls';
  return r;
}

export function toUsage(
  u:
    | {
        prompt_tokens?: number;
        completion_tokens?: number;
        total_tokens?: number;
        prompt_tokens_details?: { cached_tokens?: number } | null;
        completion_tokens_details?: { reasoning_tokens?: number } | null;
      }
    | null
    | undefined,
): Usage | null {
  if (!u || typeof u !== 'object') return null;
  const input = nonNeg(u.prompt_tokens);
  const output = nonNeg(u.completion_tokens);
  const usage: Usage = {
    input_tokens: input,
    output_tokens: output,
    total_tokens: nonNeg(u.total_tokens) || input + output,
  };
  // The ledger's cached and reasoning parts, where the server reports them (OpenAI, DeepSeek, vLLM …).
  const cached = u.prompt_tokens_details?.cached_tokens;
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof cached === 'number') usage.cached_tokens = nonNeg(cached);
  if (typeof reasoning === 'number') usage.reasoning_tokens = nonNeg(reasoning);
  return usage;
}
const nonNeg = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

interface PartialCall {
  id: string | null;
  name: string | null;
  args: string;
}

/** What one chunk added, for live display. */
export interface ChunkDeltas {
  text: string;
  reasoning: string;
}

/** Accumulates stream chunks; tool-call deltas are joined by `index` into complete calls. */
export class StreamAssembler {
  private id: string | null = null;
  private model: string | null = null;
  private text = '';
  private sawText = false;
  private reasoning = '';
  private reasoningFrom: ReasoningFrom | null = null;
  private finish: string | null = null;
  private sawChoice = false;
  private usage: Usage | null = null;
  private readonly calls = new Map<number, PartialCall>();
  private readonly unknownParts = new Set<string>();
  private size = 0;

  push(chunk: ChatCompletionChunk): ChunkDeltas {
    if (!chunk || typeof chunk !== 'object')
      throw new ProviderError('bad_response', 'Malformed stream: a chunk is not an object.');
    // The first non-empty id/model: Azure's first chunk carries only prompt filter results, with id "" and model "".
    this.id ||= typeof chunk.id === 'string' && chunk.id ? chunk.id : null;
    this.model ||= typeof chunk.model === 'string' && chunk.model ? chunk.model : null;
    // The last usage wins: vLLM repeats a running total on every chunk, Groq sends it twice.
    if (chunk.usage) this.usage = toUsage(chunk.usage);
    const deltas: ChunkDeltas = { text: '', reasoning: '' };
    // Only choice 0: we never ask for n > 1.
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => (c?.index ?? 0) === 0) : undefined;
    if (!choice) return deltas;
    this.sawChoice = true;
    const delta = choice.delta ?? {};
    const split = splitContent(delta.content);
    split.unknown.forEach((t) => this.unknownParts.add(t));
    if (split.text !== null) {
      this.text += split.text;
      this.sawText = true;
      deltas.text = split.text;
    }
    const beside = reasoningBeside(delta);
    deltas.reasoning = split.reasoning + beside.text;
    if (deltas.reasoning) {
      this.reasoning += deltas.reasoning;
      this.reasoningFrom ??= split.reasoning ? 'thinking_parts' : beside.from;
    }
    if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((tc, i) => this.pushToolDelta(tc, i));
    if (choice.finish_reason) this.finish = choice.finish_reason;
    this.grow(deltas.text.length + deltas.reasoning.length);
    return deltas;
  }

  /** Counts what the answer holds; past MAX_ANSWER_CHARS the stream is given up, not kept growing. */
  private grow(chars: number): void {
    this.size += chars;
    if (this.size <= MAX_ANSWER_CHARS) return;
    throw new ProviderError(
      'bad_response',
      `The model's answer passed ${MAX_ANSWER_CHARS.toLocaleString('en-US')} characters of text and tool-call arguments; the rest was not read and nothing of it was used. Resume to ask again.`,
    );
  }

  private pushToolDelta(tc: ChatCompletionChunk.Choice.Delta.ToolCall, position: number): void {
    // Some servers omit `index` and send each call whole: fall back to the id, then to position.
    let index = typeof tc.index === 'number' ? tc.index : undefined;
    if (index === undefined && tc.id) index = [...this.calls].find(([, c]) => c.id === tc.id)?.[0] ?? this.calls.size;
    // Neither index nor id (Gemini sends `id: ""`): a delta with a name where a named call already is starts a new call.
    if (index === undefined && tc.function?.name && this.calls.get(position)?.name) index = this.calls.size;
    index ??= position;
    const call = this.calls.get(index) ?? { id: null, name: null, args: '' };
    if (tc.id) call.id = tc.id;
    // The name comes whole in the first delta; later deltas carry only argument fragments.
    if (tc.function?.name && !call.name) call.name = tc.function.name;
    if (typeof tc.function?.arguments === 'string') {
      call.args += tc.function.arguments;
      this.grow(tc.function.arguments.length);
    }
    this.calls.set(index, call);
  }

  result(): Assembled {
    if (!this.sawChoice) {
      throw new ProviderError('empty_response', 'The model returned no choices (empty response).');
    }
    if (this.finish === null) {
      throw new ProviderError(
        'bad_response',
        'Malformed stream: it ended before a finish_reason (connection cut or server error).',
      );
    }
    const warnings = [...this.unknownParts].map((t) => `ignored content part of type "${t}"`);
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([i, c]) => completeCall(c, i, this.id, warnings));
    return {
      id: this.id,
      model: this.model,
      finish_reason: normalizeFinishReason(this.finish, toolCalls.length > 0),
      message: assistant(this.sawText ? this.text : null, toolCalls, {
        text: this.reasoning,
        from: this.reasoningFrom,
      }),
      usage: this.usage,
      warnings,
    };
  }
}

/** A non-streamed body → the same shape as a stream. */
export function assembleCompletion(body: ChatCompletion): Assembled {
  if (!body || typeof body !== 'object')
    throw new ProviderError('bad_response', 'Malformed response: the body is not a JSON object.');
  if (!Array.isArray(body.choices) || body.choices.length === 0) {
    throw new ProviderError('empty_response', 'The model returned no choices (empty response).');
  }
  const choice = body.choices.find((c) => (c?.index ?? 0) === 0) ?? body.choices[0];
  const msg = choice?.message;
  if (!msg || typeof msg !== 'object')
    throw new ProviderError('bad_response', 'Malformed response: choices[0] has no message.');
  const split = splitContent(msg.content);
  const warnings = split.unknown.map((t) => `ignored content part of type "${t}"`);
  const raw = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
  const toolCalls = raw.map((tc, i) => {
    const fn = (tc as { function?: { name?: string; arguments?: unknown } }).function;
    const args =
      typeof fn?.arguments === 'string' ? fn.arguments : fn?.arguments == null ? '' : JSON.stringify(fn.arguments);
    return completeCall({ id: tc.id || null, name: fn?.name || null, args }, i, body.id ?? null, warnings);
  });
  return {
    id: typeof body.id === 'string' ? body.id : null,
    model: typeof body.model === 'string' && body.model ? body.model : null,
    finish_reason: normalizeFinishReason(choice?.finish_reason, toolCalls.length > 0),
    message: assistant(
      split.text,
      toolCalls,
      split.reasoning ? { text: split.reasoning, from: 'thinking_parts' } : reasoningBeside(msg),
    ),
    usage: toUsage(body.usage),
    warnings,
  };
}

/**
 * A call missing its id gets a deterministic one (derived from the response id and position) so the
 * tool result can still be matched; a missing name stays '' and the tool registry answers the model
 * with a clear "unknown tool" error.
 */
function completeCall(c: PartialCall, index: number, responseId: string | null, warnings: string[]): ToolCall {
  let id = c.id;
  if (!id) {
    id = `call_${responseId ?? 'noid'}_${index}`;
    warnings.push(`tool call #${index} had no id; assigned ${id}`);
  }
  if (!c.name) warnings.push(`tool call ${id} had no function name`);
  return { id, type: 'function', function: { name: c.name ?? '', arguments: c.args } };
}

/** The stored message; `reasoning` only when the server sent some (kept apart from the answer). */
function assistant(
  content: string | null,
  toolCalls: ToolCall[],
  reasoning: { text: string; from: ReasoningFrom | null },
): AssistantMessage {
  const message: AssistantMessage =
    toolCalls.length > 0
      ? { role: 'assistant', content, tool_calls: toolCalls }
      : { role: 'assistant', content: content ?? '' };
  if (reasoning.text) {
    message.reasoning = reasoning.text;
    if (reasoning.from) message.reasoning_from = reasoning.from;
  }
  return message;
}
