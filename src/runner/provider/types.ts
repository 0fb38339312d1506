// Public shapes of the provider: what the loop passes in and gets back.
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { ChatMessage, LlmResponse } from '../../store/api/schema';
import type { PriceTable } from './pricing';

/** The adapter of the OpenAI-compatible endpoint (this folder). Others live outside the runner (vscode.lm: src/models). */
export const PROVIDER_ADAPTER = 'openai-compatible' as const;

export interface ProviderConfig {
  /** e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama). Required: never taken from env. */
  baseURL: string;
  model: string;
  /** From SecretStorage. Empty/absent → a placeholder that local servers ignore. Never logged or stored. */
  apiKey?: string;
  /** Why no key is sent although one is stored (the user did not allow this origin): said when the server asks for one. */
  keyWithheld?: string;
  /** 'api-key' sends the key in an `api-key` header instead of `Authorization: Bearer` (Azure key auth). */
  authHeader?: 'bearer' | 'api-key';
  /** Added to every URL, e.g. { 'api-version': '2024-10-21' } for Azure's deployment endpoints. */
  defaultQuery?: Record<string, string>;
  defaultHeaders?: Record<string, string>;
  /** Stream responses (default true). false = one JSON body, for servers whose streaming is broken. */
  stream?: boolean;
  /** Ask for a usage chunk at the end of a stream (stream_options.include_usage; default true). */
  streamUsage?: boolean;
  /** The SDK's own retries for 408/409/429/5xx and connection errors (default 2). */
  maxRetries?: number;
  /** Per attempt until the response starts (the SDK's `timeout`), and the longest silence inside a stream. Default 120 s. */
  timeoutMs?: number;
  /** Merged over DEFAULT_PRICES. */
  prices?: PriceTable;
  temperature?: number;
  /** Sent as `max_tokens` (understood by every OpenAI-compatible server). */
  maxTokens?: number;
  /** Extra request-body fields for a particular server (e.g. Ollama `options`). */
  extraBody?: Record<string, unknown>;
  /** The SDK's own console logging (default 'off': failures surface as ProviderError instead). */
  logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug';
}

export type ToolDefinition = ChatCompletionFunctionTool;

export interface CompletionRequest {
  messages: readonly ChatMessage[];
  /** OpenAI `tools` (see tools/registry.ts `definitions()`); omitted or empty = no tools. */
  tools?: readonly ToolDefinition[];
  signal?: AbortSignal;
  /** Overrides config.stream for this call. */
  stream?: boolean;
  /** Live text as it streams in (UI only; the returned response is the source of truth). */
  onText?: (delta: string) => void;
  /** Live reasoning ("thinking") as it streams in (UI only), for servers that send it apart from the answer. */
  onReasoning?: (delta: string) => void;
}

export interface ProviderResult {
  /** Ready to store as `pending_llm_response`. */
  response: LlmResponse;
  /** Estimated USD for this call; null = unknown (no price for the model, or no usage reported). */
  cost_usd: number | null;
  requested_model: string;
  normalized_model: string;
  /** Which adapter answered (recorded in checkpoints, so a resumed run uses the same one). */
  provider_adapter: string;
  /** Repairs made to a misbehaving response (missing tool-call ids …). */
  warnings: string[];
}

export interface ChatProvider {
  /** `openai-compatible`, or another adapter's name (`vscode-lm`); recorded as the run's provider_adapter. */
  readonly provider_adapter: string;
  readonly requested_model: string;
  readonly normalized_model: string;
  /** One Chat Completions call. Throws only ProviderError. */
  complete(req: CompletionRequest): Promise<ProviderResult>;
  /** The model ids this provider offers (GET /models for an endpoint). Throws only ProviderError. */
  listModels(signal?: AbortSignal): Promise<string[]>;
  /** The model's context window as the server states it (GET /models fields, vscode.lm maxInputTokens); null: it does not say. */
  contextWindow?(signal?: AbortSignal): Promise<{ tokens: number; source: 'server' | 'vscode-lm' } | null>;
  /** Counts tokens with the model's own tokenizer (vscode.lm countTokens); absent: the runner counts. */
  countTokens?(text: string, signal?: AbortSignal): Promise<number>;
  /** USD for this many prompt tokens at the model's price, for budgets checked before a request; null: unknown. */
  promptCostUsd?(tokens: number): number | null;
}
