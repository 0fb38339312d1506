// Every model a run can use: the configured OpenAI-compatible endpoint (settings + the key from
// SecretStorage) and VS Code's own language models (vscode.lm). Builds the runner's ChatProvider
// for a model of either adapter, lists what the model picker offers, and checks a connection.
import * as vscode from 'vscode';
import { errorMessage } from '../common/errors';
import { redactUrl } from '../common/redact';
import { type ModelRef } from '../runner/modelRef';
import { type ChatProvider, createProvider, PROVIDER_ADAPTER } from '../runner/provider';
import { type CheckResult, checkConnection } from '../runner/provider/check';
import type { Settings } from '../settings';
import type { KeyForRequest } from './apiKeys';
import { createLmProvider, VSCODE_LM_ADAPTER } from './lmProvider';

export interface ModelChoice extends ModelRef {
  /** Shown in the picker. */
  label: string;
  detail: string;
}

/** How long the picker waits for GET /models before it shows what it has. */
const LIST_TIMEOUT_MS = 2500;

export class ModelProviders {
  constructor(
    /** The endpoint's API key for a base URL, read at each use (apiKeys.ts: only where it may go). */
    private readonly keys: { forRequest(baseUrl: string): Promise<KeyForRequest> },
    private readonly settings: () => Settings,
  ) {}

  /** The runner's provider for a model of an adapter (unknown or legacy adapter names → the endpoint). */
  async create(model: string, adapter: string): Promise<ChatProvider> {
    const s = this.settings();
    if (adapter === VSCODE_LM_ADAPTER)
      return createLmProvider(model, {
        timeoutMs: s.timeoutMs,
        justification: 'Agent Waypoints runs the coding task you started with this model.',
      });
    const { key, withheld } = await this.keys.forRequest(s.baseUrl);
    return createProvider({
      baseURL: s.baseUrl,
      model,
      ...(key ? { apiKey: key } : {}),
      ...(withheld ? { keyWithheld: withheld } : {}),
      authHeader: s.authHeader,
      ...(s.apiVersion ? { defaultQuery: { 'api-version': s.apiVersion } } : {}),
      stream: s.stream,
      timeoutMs: s.timeoutMs,
      maxRetries: s.maxRetries,
      prices: s.prices,
    });
  }

  /** The endpoint's configured models and what its GET /models lists (when it answers in time), then VS Code's language models. */
  async choices(): Promise<ModelChoice[]> {
    const s = this.settings();
    const endpoint = (model: string, detail: string): ModelChoice => ({
      adapter: PROVIDER_ADAPTER,
      model,
      label: model,
      detail,
    });
    const shown = redactUrl(s.baseUrl);
    const out = [s.model, ...s.models].map((m) => endpoint(m, `${shown} · from settings`));
    const listed = await this.endpointModels();
    for (const m of listed)
      if (!out.some((c) => c.model === m)) out.push(endpoint(m, `${shown} · offered by the server`));
    const lm = await vscode.lm.selectChatModels().then(
      (ms) => ms,
      () => [],
    );
    for (const m of lm)
      out.push({
        adapter: VSCODE_LM_ADAPTER,
        model: m.id,
        label: m.name || m.id,
        detail: `VS Code language model · ${m.vendor} · ${m.id} · no API key needed`,
      });
    return out;
  }

  private async endpointModels(): Promise<string[]> {
    try {
      const provider = await this.create(this.settings().model, PROVIDER_ADAPTER);
      return await provider.listModels(AbortSignal.timeout(LIST_TIMEOUT_MS));
    } catch {
      return []; // no GET /models here (or not reachable): the picker shows the configured models
    }
  }

  /** "Check model connection" for one model. */
  async check(ref: ModelRef): Promise<CheckResult> {
    const lm = ref.adapter === VSCODE_LM_ADAPTER;
    try {
      return await checkConnection(
        await this.create(ref.model, ref.adapter),
        lm ? 'VS Code' : this.settings().baseUrl,
        { offeredBy: lm ? 'VS Code' : 'the server' },
      );
    } catch (err) {
      return { ok: false, problem: 'other', message: `The check could not run: ${errorMessage(err)}`, models: null };
    }
  }
}
