// The API key in SecretStorage, bound to the origin it was entered for, and the user's answers about
// other origins (globalState: origins only, never the key). Every request to the endpoint — a run,
// the model picker's GET /models, Check model connection — gets its key from here, so a base URL
// a workspace names receives the key only after the user allowed that origin (keyOrigin.ts).
import * as vscode from 'vscode';
import { redactUrl } from '../common/redact';
import {
  keyQuestion,
  keyRoute,
  originOf,
  parseStoredKey,
  serializeStoredKey,
  type KeyGrant,
  type KeyQuestion,
  type StoredKey,
} from '../runner/provider/keyOrigin';
import { readBaseUrl, type BaseUrlSetting } from '../settings';

/** The SecretStorage key. The API key lives there and nowhere else (never settings, checkpoints or logs). */
export const API_KEY_SECRET = 'agentWaypoints.apiKey';
/** globalState: origin → 'allow' | 'deny'. */
const GRANTS_STATE = 'agentWaypoints.apiKeyOrigins';

/** What a request to the endpoint gets: the key, or why it goes without one. */
export interface KeyForRequest {
  key?: string;
  withheld?: string;
}

export type AskKeyQuestion = (q: KeyQuestion) => Promise<KeyGrant | undefined>;

/** The modal: Allow / Don't Send; closing it decides nothing (asked again next time). */
export const askModal: AskKeyQuestion = async (q) => {
  const pick = await vscode.window.showWarningMessage(
    q.message,
    { modal: true, detail: q.detail },
    'Allow',
    'Don’t Send',
  );
  return pick === 'Allow' ? 'allow' : pick === 'Don’t Send' ? 'deny' : undefined;
};

export class ApiKeys {
  /** One question per origin at a time (the picker and a run may want the key at once). */
  private readonly asking = new Map<string, Promise<KeyGrant | undefined>>();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: vscode.Memento,
    private readonly ask: AskKeyQuestion = askModal,
    private readonly baseUrl: () => BaseUrlSetting = readBaseUrl,
  ) {}

  /** The stored key; one stored before keys had an origin counts as entered for the user's own base URL. */
  async get(): Promise<StoredKey | undefined> {
    return parseStoredKey(await this.secrets.get(API_KEY_SECRET), originOf(this.baseUrl().user));
  }

  async has(): Promise<boolean> {
    return (await this.get()) !== undefined;
  }

  /** Stores a key for `origin`; answers given about the previous key are forgotten. */
  async set(key: string, origin: string): Promise<void> {
    await this.secrets.store(API_KEY_SECRET, serializeStoredKey({ key, origin }));
    await this.state.update(GRANTS_STATE, undefined);
  }

  async clear(): Promise<void> {
    await this.secrets.delete(API_KEY_SECRET);
    await this.state.update(GRANTS_STATE, undefined);
  }

  grants(): Record<string, KeyGrant> {
    const v = this.state.get<unknown>(GRANTS_STATE);
    if (typeof v !== 'object' || v === null) return {};
    return Object.fromEntries(
      Object.entries(v).filter((e): e is [string, KeyGrant] => e[1] === 'allow' || e[1] === 'deny'),
    );
  }

  async forget(origins: readonly string[]): Promise<void> {
    const g = this.grants();
    for (const o of origins) delete g[o];
    await this.state.update(GRANTS_STATE, Object.keys(g).length > 0 ? g : undefined);
  }

  /** The key for a request to `baseUrl`: sent where it was entered for or allowed; otherwise asked once per origin. */
  async forRequest(baseUrl: string): Promise<KeyForRequest> {
    const stored = await this.get();
    if (!stored) return {};
    const route = keyRoute(stored, baseUrl, this.grants());
    if (route.kind === 'send') return { key: stored.key };
    if (route.kind === 'withhold') return { withheld: route.why };
    const answer = await this.question(route.target, stored, baseUrl);
    if (answer === 'allow') return { key: stored.key };
    return {
      withheld:
        answer === 'deny'
          ? `you chose not to send your API key to ${route.target}`
          : `sending your API key to ${route.target} was not confirmed`,
    };
  }

  private question(target: string, stored: StoredKey, baseUrl: string): Promise<KeyGrant | undefined> {
    const pending = this.asking.get(target);
    if (pending) return pending;
    const setting = this.baseUrl();
    const q = keyQuestion({
      target,
      entered: stored.origin,
      source: setting.source,
      baseUrl: redactUrl(baseUrl),
      userBaseUrl: redactUrl(setting.user),
    });
    const asked = this.ask(q)
      .catch(() => undefined) // no dialog could be shown (e.g. VS Code refuses dialogs under its test runner): not confirmed
      .then(async (answer) => {
        if (answer) await this.state.update(GRANTS_STATE, { ...this.grants(), [target]: answer });
        return answer;
      })
      .finally(() => this.asking.delete(target));
    this.asking.set(target, asked);
    return asked;
  }
}

/** Test-only hooks, on the extension's API in ExtensionMode.Test only (never a command: any extension can run those). */
export interface KeyTesting {
  keys: ApiKeys;
  /** Answers the key question instead of the modal (undefined: the modal again). */
  answerKeyQuestions(answer: AskKeyQuestion | undefined): void;
}

/** ApiKeys whose question a test may answer; the modal otherwise. */
export function apiKeysForTests(secrets: vscode.SecretStorage, state: vscode.Memento): KeyTesting {
  let answer: AskKeyQuestion | undefined;
  const keys = new ApiKeys(secrets, state, (q) => (answer ?? askModal)(q));
  return { keys, answerKeyQuestions: (a) => (answer = a) };
}
