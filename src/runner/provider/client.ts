// The one provider adapter: any OpenAI-compatible Chat Completions server through the `openai` SDK.
// OpenAI, Azure, Ollama, LM Studio, vLLM and llama.cpp differ only in configuration (README.md).
import OpenAI from 'openai';
import type { ChatCompletionCreateParams, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { Breather } from '../../common/breather';
import type { ChatMessage } from '../../store/api/schema';
import { assembleCompletion, StreamAssembler, type Assembled } from './assemble';
import { toProviderError, ProviderError, type ErrorContext } from './errors';
import { guardedFetch } from './guardedFetch';
import { originOf } from './keyOrigin';
import { costUsd, DEFAULT_PRICES, normalizeModel, priceFor, type PriceTable } from './pricing';
import { modelsWindow } from './window';
import {
  PROVIDER_ADAPTER,
  type ChatProvider,
  type CompletionRequest,
  type ProviderConfig,
  type ProviderResult,
} from './types';

/** Sent when no key is needed (local servers); they ignore the Authorization header. */
export const PLACEHOLDER_API_KEY = 'no-key-required';
const DEFAULT_TIMEOUT_MS = 120_000;

export function createProvider(config: ProviderConfig): ChatProvider {
  if (!config.baseURL) throw new TypeError('createProvider: baseURL is required');
  if (!config.model) throw new TypeError('createProvider: model is required');
  const apiKey = config.apiKey || PLACEHOLDER_API_KEY;
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string | null> = { ...config.defaultHeaders };
  if (config.authHeader === 'api-key') {
    headers['api-key'] = apiKey;
    headers['Authorization'] = null; // a null default header removes the SDK's Bearer header
  }
  const options = {
    baseURL: config.baseURL,
    apiKey,
    maxRetries: config.maxRetries ?? 2,
    timeout: timeoutMs,
    defaultQuery: config.defaultQuery,
    defaultHeaders: headers,
    logLevel: config.logLevel ?? 'off', // failures surface as ProviderError; the SDK must not write to the host's console
  } as const;
  // Requests (and the key, whatever its header) go to the base URL's origin only, redirects included;
  // the streaming client's answers are bounded as streams, the other's as one body.
  const origin = originOf(config.baseURL) ?? config.baseURL; // not a URL: the SDK refuses it before any request
  const client = new OpenAI({ ...options, fetch: guardedFetch({ origin, stream: false }) });
  const streamClient = new OpenAI({ ...options, fetch: guardedFetch({ origin, stream: true }) });
  const prices: PriceTable = { ...DEFAULT_PRICES, ...config.prices };
  const normalized = normalizeModel(config.model);
  const errCtx = (abortedBy: ErrorContext['abortedBy'] = null): ErrorContext => ({
    baseURL: config.baseURL,
    model: config.model,
    apiKey: config.apiKey,
    ...(config.keyWithheld ? { keyWithheld: config.keyWithheld } : {}),
    abortedBy,
  });

  async function complete(req: CompletionRequest): Promise<ProviderResult> {
    const stream = req.stream ?? config.stream ?? true;
    const call = new CallControl(req.signal, timeoutMs);
    try {
      const body = requestBody(config, req, stream);
      const assembled = stream ? await streamed(streamClient, body, call, req) : await single(client, body, call);
      return toResult(assembled);
    } catch (err) {
      throw toProviderError(err, errCtx(call.abortedBy));
    } finally {
      call.dispose();
    }
  }

  function toResult(a: Assembled): ProviderResult {
    const model = a.model ?? config.model;
    // The served model (often a dated snapshot) prices first; the requested name is the fallback.
    const cost = costUsd(model, a.usage, prices) ?? costUsd(config.model, a.usage, prices);
    return {
      response: {
        id: a.id,
        model,
        finish_reason: a.finish_reason,
        message: a.message,
        usage: a.usage,
        received_ms: Date.now(),
      },
      cost_usd: cost,
      requested_model: config.model,
      normalized_model: normalized,
      provider_adapter: PROVIDER_ADAPTER,
      warnings: a.warnings,
    };
  }

  async function listModels(signal?: AbortSignal): Promise<string[]> {
    try {
      const ids: string[] = [];
      for await (const m of client.models.list({ signal })) ids.push(m.id);
      return ids;
    } catch (err) {
      throw toProviderError(err, errCtx(signal?.aborted ? 'caller' : null));
    }
  }

  const price = priceFor(config.model, prices);
  return {
    provider_adapter: PROVIDER_ADAPTER,
    requested_model: config.model,
    normalized_model: normalized,
    complete,
    listModels,
    contextWindow: modelsWindow(client, config.model),
    promptCostUsd: (tokens) => (price ? (tokens * price.input_per_mtok) / 1_000_000 : null),
  };
}

function requestBody(config: ProviderConfig, req: CompletionRequest, stream: boolean): ChatCompletionCreateParams {
  const body: Record<string, unknown> = {
    ...config.extraBody,
    model: config.model,
    messages: wireMessages(req.messages),
    stream,
  };
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools;
    body.tool_choice = 'auto';
  }
  if (stream && (config.streamUsage ?? true)) body.stream_options = { include_usage: true };
  if (config.temperature !== undefined) body.temperature = config.temperature;
  if (config.maxTokens !== undefined) body.max_tokens = config.maxTokens;
  return body as unknown as ChatCompletionCreateParams;
}

/**
 * The conversation as sent to a server: the model's reasoning is not part of the answer. It goes
 * back only as `reasoning_content` on a tool-call turn of a server that sent it that way
 * (DeepSeek's thinking mode refuses the next request without it; llama.cpp and vLLM accept it);
 * never in `content`, and never to a server that sent it otherwise (Mistral refuses unknown fields).
 */
export function wireMessages(messages: readonly ChatMessage[]): unknown[] {
  return messages.map((m) => {
    if (m.role !== 'assistant' || (m.reasoning === undefined && m.reasoning_from === undefined)) return m;
    const { reasoning, reasoning_from, ...rest } = m;
    const echo = reasoning && reasoning_from === 'reasoning_content' && (m.tool_calls?.length ?? 0) > 0;
    return echo ? { ...rest, reasoning_content: reasoning } : rest;
  });
}

async function streamed(
  client: OpenAI,
  body: ChatCompletionCreateParams,
  call: CallControl,
  req: CompletionRequest,
): Promise<Assembled> {
  const stream = (await client.chat.completions.create(
    { ...body, stream: true } as ChatCompletionCreateParams & { stream: true },
    { signal: call.signal },
  )) as AsyncIterable<ChatCompletionChunk>;
  const asm = new StreamAssembler();
  // Events already received are read without a turn of the event loop in between: give it one.
  const breather = new Breather();
  call.armStall();
  for await (const chunk of stream) {
    call.armStall();
    const d = asm.push(chunk);
    if (d.reasoning) req.onReasoning?.(d.reasoning);
    if (d.text) req.onText?.(d.text);
    await breather.tick();
  }
  // The SDK ends an aborted stream quietly: an abort must not look like a short but complete answer.
  call.throwIfAborted();
  return asm.result();
}

async function single(client: OpenAI, body: ChatCompletionCreateParams, call: CallControl): Promise<Assembled> {
  const completion = await client.chat.completions.create(
    { ...body, stream: false } as ChatCompletionCreateParams & { stream: false },
    {
      signal: call.signal,
    },
  );
  call.throwIfAborted();
  return assembleCompletion(completion);
}

/** Our own AbortController: fired by the caller's signal or by a stream that goes silent too long. */
class CallControl {
  private readonly ac = new AbortController();
  private stallTimer: NodeJS.Timeout | undefined;
  abortedBy: 'caller' | 'stall' | null = null;
  private readonly onCallerAbort = (): void => this.abort('caller');

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly stallMs: number,
  ) {
    if (caller?.aborted) this.abort('caller');
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  armStall(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => this.abort('stall'), this.stallMs);
  }

  throwIfAborted(): void {
    if (this.abortedBy) throw new ProviderError(this.abortedBy === 'caller' ? 'cancelled' : 'timeout', 'aborted');
  }

  private abort(by: 'caller' | 'stall'): void {
    if (this.abortedBy) return;
    this.abortedBy = by;
    this.ac.abort();
  }

  dispose(): void {
    clearTimeout(this.stallTimer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}
