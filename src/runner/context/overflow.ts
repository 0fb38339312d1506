// Recognising a provider's "the request is longer than the model's context" refusal, whatever the
// server: OpenAI `context_length_exceeded` (HTTP 400), vLLM / DeepSeek / OpenRouter "maximum
// context length is N", llama.cpp `exceed_context_size_error` with `n_ctx`, vscode.lm's messages.
// The loop then condenses and retries once — it never sends the same request again.
import { ProviderError } from '../provider/errors';
import { windowFromOverflowMessage } from './window';

const OVERFLOW_TEXT =
  /context_length_exceeded|maximum context length|context length exceeded|exceeds the available context size|exceeds the context window|input is too long|prompt is too long|too many tokens|exceed context limit/i;

export interface Overflow {
  /** The window the error states, when it does. */
  window: number | null;
}

/** The overflow an error reports, or null when the error is something else. */
export function contextOverflow(err: unknown): Overflow | null {
  if (!(err instanceof ProviderError)) return null;
  if (err.kind !== 'bad_request' && err.kind !== 'server_error' && err.status !== 413) return null;
  const cause = err.cause as { code?: unknown; type?: unknown; error?: unknown } | undefined;
  const body = (cause?.error && typeof cause.error === 'object' ? cause.error : {}) as Record<string, unknown>;
  const coded =
    cause?.code === 'context_length_exceeded' ||
    cause?.type === 'exceed_context_size_error' ||
    body.type === 'exceed_context_size_error';
  if (!coded && !OVERFLOW_TEXT.test(err.message)) return null;
  return { window: windowFromOverflowMessage(err.message, body) };
}
