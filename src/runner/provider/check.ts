// "Check model connection": one small request that proves the settings work — the base URL answers,
// the key is accepted, the model exists and it calls tools — or says exactly which of these is wrong.
// Works on any ChatProvider (the endpoint, or VS Code's language models).
import { redactSecrets } from '../../common/redact';
import type { ChatProvider, ToolDefinition } from './types';
import { ProviderError } from './errors';

export type CheckProblem = 'auth' | 'model_not_found' | 'no_tools' | 'unreachable' | 'other';

export interface CheckResult {
  ok: boolean;
  problem: CheckProblem | null;
  /** One sentence for the user. */
  message: string;
  /** What the server offers (GET /models), when it answered. */
  models: string[] | null;
}

export const CHECK_TOOL_NAME = 'connection_check';
/** The scripted server's scenarios match this text to answer a check. */
export const CHECK_PROMPT = `Agent Waypoints connection check: call the ${CHECK_TOOL_NAME} tool with {"ok": true}. Do not answer in text.`;
const CHECK_TOOL: ToolDefinition = {
  type: 'function',
  function: {
    name: CHECK_TOOL_NAME,
    description: 'Confirms that tool calling works.',
    parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
};

/** `where` names the endpoint in messages (its base URL, or "VS Code"); `offeredBy` who lists the models. */
export async function checkConnection(
  provider: ChatProvider,
  endpoint: string,
  opts: { offeredBy?: string; signal?: AbortSignal } = {},
): Promise<CheckResult> {
  const { signal, offeredBy = 'the server' } = opts;
  const where = redactSecrets(endpoint);
  const model = provider.requested_model;
  let models: string[] | null = null;
  try {
    models = await provider.listModels(signal);
  } catch (err) {
    const early = asProblem(err, { model, where, offeredBy, models: null, listing: true });
    if (early) return early;
    // No model list (Azure deployment URLs, some proxies): the chat request below still decides.
  }
  try {
    const r = await provider.complete({
      messages: [{ role: 'user', content: CHECK_PROMPT }],
      tools: [CHECK_TOOL],
      ...(signal ? { signal } : {}),
    });
    const called = (r.response.message.tool_calls ?? []).some((c) => c.function.name === CHECK_TOOL_NAME);
    if (!called) {
      const said = (r.response.message.content ?? '').trim().slice(0, 120);
      return fail(
        'no_tools',
        `This model does not call tools: \`${model}\` at ${where} answered${said ? ` “${said}”` : ''} instead of calling the check tool. Agent Waypoints needs a model with tool calling.`,
        models,
      );
    }
    return {
      ok: true,
      problem: null,
      message: `Connected: \`${model}\` at ${where} answered and called a tool.`,
      models,
    };
  } catch (err) {
    return (
      asProblem(err, { model, where, offeredBy, models, listing: false }) ??
      fail('other', `The check request to ${where} failed: ${redactSecrets(String(err))}`, models)
    );
  }
}

/** What went wrong underneath (the SDK's words), without our own "Could not reach <url>" around it. */
function reason(err: ProviderError): string {
  if (err.kind === 'timeout') return 'no answer within the timeout.';
  const cause = err.cause instanceof Error ? err.cause.message : '';
  return cause ? (/[.!]$/.test(cause) ? cause : `${cause}.`) : err.message;
}

function fail(problem: CheckProblem, message: string, models: string[] | null): CheckResult {
  return { ok: false, problem, message, models };
}

/** A ProviderError as a check result; null for "no model list here, go on" while listing. */
function asProblem(
  err: unknown,
  c: { model: string; where: string; offeredBy: string; models: string[] | null; listing: boolean },
): CheckResult | null {
  if (!(err instanceof ProviderError)) return c.listing ? null : fail('other', redactSecrets(String(err)), c.models);
  switch (err.kind) {
    case 'auth':
      if (err.keyWithheld)
        return fail(
          'auth',
          `${err.status ?? 401}: ${c.where} asks for an API key, and yours was not sent there: ${err.keyWithheld}. “Agent Waypoints: Forget where the API key may go…” lets you answer again.`,
          c.models,
        );
      return fail(
        'auth',
        `${err.status ?? 401}: the API key was refused by ${c.where}. Set the right one with “Agent Waypoints: Set API key”.`,
        c.models,
      );
    case 'connection':
    case 'timeout':
      return fail(
        'unreachable',
        `Cannot reach ${c.where}: ${reason(err)} Check agentWaypoints.provider.baseUrl and that the server is running.`,
        c.models,
      );
    case 'not_found':
      if (c.listing) return null;
      return fail(
        'model_not_found',
        c.models
          ? `Model \`${c.model}\` not found; ${c.offeredBy} offers: ${c.models.join(', ') || 'no models'}.`
          : `Model \`${c.model}\` not found: ${err.message}`,
        c.models,
      );
    case 'bad_request':
      if (c.listing) return null;
      if (/tool/i.test(err.message))
        return fail(
          'no_tools',
          `This model does not call tools: ${c.where} refused a request with tools for \`${c.model}\`. ${err.message}`,
          c.models,
        );
      return fail('other', err.message, c.models);
    default:
      return c.listing ? null : fail('other', err.message, c.models);
  }
}
