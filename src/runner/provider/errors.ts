// One error type for everything that can go wrong talking to a model, so the loop decides
// "pause resumably" vs "fail" from `kind` and `retryable`, never from SDK classes or messages.
import { errorMessage } from '../../common/errors';
import { redactSecrets } from '../../common/redact';
import OpenAI from 'openai';
import { RefusedRedirect, ResponseTooLarge } from './guardedFetch';

export type ProviderErrorKind =
  | 'rate_limited' // HTTP 429 after the SDK's retries
  | 'server_error' // HTTP 5xx after the SDK's retries
  | 'timeout' // no response (or a stalled stream) within the configured time
  | 'cancelled' // the caller's AbortSignal fired
  | 'bad_response' // unparseable / truncated stream, a choice without a message, …
  | 'empty_response' // no choices at all
  | 'auth' // 401 / 403: wrong or missing key
  | 'not_found' // 404: wrong base URL or unknown model
  | 'bad_request' // other 4xx: the request itself was refused
  | 'connection'; // could not reach the server

/** Kinds where trying the same request later can succeed: the loop pauses instead of failing. */
const RETRYABLE: ReadonlySet<ProviderErrorKind> = new Set([
  'rate_limited',
  'server_error',
  'timeout',
  'connection',
  'bad_response',
  'empty_response',
]);

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly retryable: boolean;
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status: number | null = null,
    /** Server-suggested wait (retry-after), when it sent one. */
    readonly retryAfterMs: number | null = null,
    options?: { cause?: unknown; keyWithheld?: string },
  ) {
    super(message, options);
    this.retryable = RETRYABLE.has(kind);
    this.keyWithheld = options?.keyWithheld ?? null;
  }
  /** An auth failure where the stored key was not sent (its origin not allowed): why. */
  readonly keyWithheld: string | null;
}

export interface ErrorContext {
  baseURL: string;
  model: string;
  /** Scrubbed from every message, in case a server echoes it back. */
  apiKey?: string;
  /** Why the stored key was not sent (ProviderConfig.keyWithheld). */
  keyWithheld?: string;
  /** Why our own controller aborted, when it did: the caller's signal or the stall timer. */
  abortedBy?: 'caller' | 'stall' | null;
}

/** Maps anything thrown by the SDK (or by our stream handling) to a ProviderError. */
export function toProviderError(err: unknown, ctx: ErrorContext): ProviderError {
  // Credentials in the base URL (user:pass@, ?api-key=) and the key itself never reach a message.
  const scrub = (s: string): string => redactSecrets(s, [ctx.apiKey]);
  const where = `${scrub(ctx.baseURL)} (model ${ctx.model})`;
  const detail = scrub(errorMessage(err));
  const make = (kind: ProviderErrorKind, msg: string, status: number | null = null, retryAfter: number | null = null) =>
    new ProviderError(kind, scrub(msg), status, retryAfter, {
      cause: err,
      ...(kind === 'auth' && ctx.keyWithheld ? { keyWithheld: ctx.keyWithheld } : {}),
    });

  if (ctx.abortedBy === 'caller') return make('cancelled', `Request to ${where} was cancelled.`);
  if (ctx.abortedBy === 'stall')
    return make('timeout', `The stream from ${where} stalled: no data within the timeout.`);
  // Our own errors (empty/malformed response) are already classified; an abort above takes precedence.
  if (err instanceof ProviderError) return err;
  // The guarded fetch's refusals, thrown by it or inside the SDK's connection error around it.
  const guard = [err, (err as { cause?: unknown } | null)?.cause].find(
    (e) => e instanceof RefusedRedirect || e instanceof ResponseTooLarge,
  );
  if (guard instanceof RefusedRedirect) return make('bad_request', refusedRedirect(guard, where), guard.status);
  if (guard instanceof ResponseTooLarge)
    return make(
      'bad_response',
      `The answer from ${where} was too large: ${guard.message}. Nothing of it was used; resume to ask again.`,
    );
  if (err instanceof OpenAI.APIUserAbortError) return make('cancelled', `Request to ${where} was cancelled.`);
  if (err instanceof OpenAI.APIConnectionTimeoutError)
    return make('timeout', `Request to ${where} timed out (after the SDK's retries).`);
  if (err instanceof OpenAI.APIConnectionError) return make('connection', `Could not reach ${where}: ${detail}`);
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const s = err.status;
    const retryAfter = retryAfterMs(err.headers);
    if (s === 429)
      return make('rate_limited', `Rate limited by ${where} (HTTP 429) after retries: ${detail}`, s, retryAfter);
    if (s >= 500)
      return make('server_error', `Server error from ${where} (HTTP ${s}) after retries: ${detail}`, s, retryAfter);
    if (s === 401 || s === 403) {
      const key = ctx.keyWithheld ? `your API key was not sent there: ${ctx.keyWithheld}.` : 'check the API key.';
      return make('auth', `Authentication failed at ${where} (HTTP ${s}): ${key} ${detail}`, s);
    }
    if (s === 404)
      return make('not_found', `Not found at ${where} (HTTP 404): check the base URL and model. ${detail}`, s);
    return make('bad_request', `Request refused by ${where} (HTTP ${s}): ${detail}`, s);
  }
  if (err instanceof OpenAI.APIError) {
    // An `error` object inside the stream (status undefined): the server gave up mid-response.
    return make('server_error', `Error in the stream from ${where}: ${detail}`);
  }
  if (err instanceof SyntaxError) return make('bad_response', `Malformed response from ${where}: ${detail}`);
  // undici's word for a body whose connection closed before it ended.
  if (err instanceof TypeError && err.message === 'terminated') {
    return make(
      'bad_response',
      `The connection to ${where} closed in the middle of the response; nothing of the partial response was used.`,
    );
  }
  return make('bad_response', `Unexpected failure talking to ${where}: ${detail}`);
}

function refusedRedirect(r: RefusedRedirect, where: string): string {
  const what =
    r.status === null
      ? `A request for ${r.to} was not sent`
      : `${where} answered HTTP ${r.status} with a redirect to ${r.to}, which was not followed`;
  return (
    `${what}: requests, and the API key with them, go only to ${r.from}. ` +
    `If ${r.to} is the right server, set agentWaypoints.provider.baseUrl to it.`
  );
}

function retryAfterMs(headers: Headers | undefined): number | null {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers?.get('retry-after');
  if (s && Number.isFinite(Number(s))) return Number(s) * 1000;
  return null;
}
