// The runner's ChatProvider over VS Code's language models (vscode.lm): Copilot's models or any
// extension's LanguageModelChatProvider, no API key. Lives on the extension side of the seam; the
// runner sees only ChatProvider. Failures are ProviderErrors, so a refused consent, an exhausted
// quota or a vanished model pauses the run resumably with a message that says which.
import * as vscode from 'vscode';
import { errorMessage } from '../common/errors';
import { sha256 } from '../common/hash';
import type { LlmResponse, ToolCall, Usage } from '../store/api/schema';
import { type ChatProvider, type CompletionRequest, ProviderError, type ProviderResult } from '../runner/provider';
import { classifyPart, toLmMessages, toLmTools } from './lmMessages';

export const VSCODE_LM_ADAPTER = 'vscode-lm';

export interface LmProviderOptions {
  /** Longest silence before the first part or between parts. */
  timeoutMs: number;
  /** Shown in VS Code's consent dialog. */
  justification?: string;
}

export function createLmProvider(modelId: string, opts: LmProviderOptions): ChatProvider {
  async function complete(req: CompletionRequest): Promise<ProviderResult> {
    const model = await selectModel(modelId);
    const cts = new vscode.CancellationTokenSource();
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => ((stalled = true), cts.cancel()), opts.timeoutMs);
    };
    const onAbort = () => cts.cancel();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    if (req.signal?.aborted) cts.cancel();
    try {
      arm();
      const messages = toLmMessages(req.messages);
      const response = await model.sendRequest(
        messages,
        { tools: toLmTools(req.tools), justification: opts.justification },
        cts.token,
      );
      let text = '';
      let reasoning = '';
      const calls: ToolCall[] = [];
      for await (const part of response.stream) {
        arm();
        const p = classifyPart(part);
        if (p.kind === 'text' && p.text) {
          text += p.text;
          req.onText?.(p.text);
        } else if (p.kind === 'reasoning' && p.text) {
          reasoning += p.text;
          req.onReasoning?.(p.text);
        } else if (p.kind === 'call') {
          calls.push({
            id: p.id || `call_lm_${sha256(`${calls.length}/${p.name}/${p.args}`).slice(0, 16)}`,
            type: 'function',
            function: { name: p.name, arguments: p.args },
          });
        }
      }
      if (cts.token.isCancellationRequested) throw new vscode.CancellationError();
      clearTimeout(timer);
      const usage = await countUsage(model, messages, text, calls);
      return result(model, text, reasoning, calls, usage);
    } catch (err) {
      throw toLmProviderError(err, model, { cancelled: req.signal?.aborted === true, stalled });
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      cts.dispose();
    }
  }

  function result(
    model: vscode.LanguageModelChat,
    text: string,
    reasoning: string,
    calls: ToolCall[],
    usage: Usage | null,
  ): ProviderResult {
    const message: LlmResponse['message'] =
      calls.length > 0
        ? { role: 'assistant', content: text || null, tool_calls: calls }
        : { role: 'assistant', content: text };
    if (reasoning) message.reasoning = reasoning;
    return {
      response: {
        id: null,
        model: model.id,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        message,
        usage,
        received_ms: Date.now(),
      },
      cost_usd: null, // VS Code does not say what a request costs
      requested_model: modelId,
      normalized_model: modelId.toLowerCase(),
      provider_adapter: VSCODE_LM_ADAPTER,
      warnings: [],
    };
  }

  async function listModels(): Promise<string[]> {
    return (await vscode.lm.selectChatModels()).map((m) => m.id);
  }

  return {
    provider_adapter: VSCODE_LM_ADAPTER,
    requested_model: modelId,
    normalized_model: modelId.toLowerCase(),
    complete,
    listModels,
    // The window and the count are the model's own: maxInputTokens and countTokens.
    contextWindow: async () => {
      const tokens = (await selectModel(modelId)).maxInputTokens;
      return tokens > 0 ? { tokens, source: 'vscode-lm' as const } : null;
    },
    countTokens: async (text, signal) => {
      const model = await selectModel(modelId);
      const cts = new vscode.CancellationTokenSource();
      const onAbort = () => cts.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await model.countTokens(text, cts.token);
      } finally {
        signal?.removeEventListener('abort', onAbort);
        cts.dispose();
      }
    },
  };
}

async function selectModel(modelId: string): Promise<vscode.LanguageModelChat> {
  const [model] = await vscode.lm.selectChatModels({ id: modelId });
  if (model) return model;
  const offered = (await vscode.lm.selectChatModels()).map((m) => m.id);
  throw new ProviderError(
    'not_found',
    `The VS Code language model \`${modelId}\` is not available (its extension may be disabled or signed out). ${offered.length ? `VS Code offers: ${offered.join(', ')}.` : 'VS Code offers no language models now.'}`,
  );
}

/** Token counts from the model's own tokenizer (countTokens); null when it cannot count. */
async function countUsage(
  model: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  text: string,
  calls: ToolCall[],
): Promise<Usage | null> {
  try {
    const inputs = await Promise.all(messages.map((m) => model.countTokens(m)));
    const output = await model.countTokens(
      text + calls.map((c) => `${c.function.name}${c.function.arguments}`).join(''),
    );
    const input = inputs.reduce((a, b) => a + b, 0);
    // vscode.lm reports no usage: these are counted (the model's own tokenizer), and say so.
    return { input_tokens: input, output_tokens: output, total_tokens: input + output, estimated: true };
  } catch {
    return null;
  }
}

export function toLmProviderError(
  err: unknown,
  model: vscode.LanguageModelChat | { id: string },
  how: { cancelled: boolean; stalled: boolean },
): ProviderError {
  if (err instanceof ProviderError) return err;
  const name = `the VS Code language model \`${model.id}\``;
  if (how.cancelled)
    return new ProviderError('cancelled', `Request to ${name} was cancelled.`, null, null, { cause: err });
  if (how.stalled)
    return new ProviderError('timeout', `${name} sent nothing within the timeout.`, null, null, { cause: err });
  if (err instanceof vscode.LanguageModelError) {
    const detail = err.message ? ` (${err.message})` : '';
    switch (err.code) {
      case vscode.LanguageModelError.NoPermissions.name:
        return new ProviderError(
          'auth',
          `VS Code did not let Agent Waypoints use ${name}: no consent was given${detail}. Resume and allow access when VS Code asks, or pick another model.`,
          null,
          null,
          { cause: err },
        );
      case vscode.LanguageModelError.Blocked.name:
        return new ProviderError(
          'rate_limited',
          `${name} refused the request: quota or rate limit reached${detail}. Resume later.`,
          null,
          null,
          { cause: err },
        );
      case vscode.LanguageModelError.NotFound.name:
        return new ProviderError('not_found', `${name} no longer exists${detail}. Pick another model.`, null, null, {
          cause: err,
        });
    }
  }
  return new ProviderError('server_error', `${name} failed: ${errorMessage(err)}`, null, null, { cause: err });
}
