// Typed access to the extension's settings (contributes.configuration in package.json).
import * as vscode from 'vscode';
import type { Budget } from './runner/budget';
import type { ContextSettings } from './runner/context/fit';
import type { BaseUrlSource } from './runner/provider/keyOrigin';
import type { ApprovalPolicy, CommandMode, PolicyVerdict } from './runner/tools/policy';
import { judgeCall, enabledExcludes, fileRules, type FileRules, type Tool } from './runner/tools';

export type PolicyMode = 'auto' | 'ask' | 'deny';

export interface Settings {
  baseUrl: string;
  model: string;
  models: string[];
  authHeader: 'bearer' | 'api-key';
  apiVersion: string;
  stream: boolean;
  timeoutMs: number;
  maxRetries: number;
  prices: Record<string, { input_per_mtok: number; output_per_mtok: number }>;
  budget: Budget;
  approval: { read: PolicyMode; write: PolicyMode; command: CommandMode };
  commandAllow: string[];
  commandDeny: string[];
  /** Extra globs whose writes always ask / whose reads always ask (user settings only). */
  protectedFiles: string[];
  privateFiles: string[];
  outputCapBytes: number;
  context: ContextSettings;
  finishedRunTtlDays: number;
  resumeOnStartup: 'ask' | 'never';
}

export const SECTION = 'agentWaypoints';
const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const positive = (v: number | undefined) => (v && v > 0 ? v : null);
  return {
    baseUrl: c.get('provider.baseUrl', DEFAULT_BASE_URL),
    model: c.get('provider.model', 'gpt-4.1-mini'),
    models: c.get<string[]>('provider.models', []),
    authHeader: c.get('provider.authHeader', 'bearer'),
    apiVersion: c.get('provider.apiVersion', ''),
    stream: c.get('provider.stream', true),
    timeoutMs: c.get('provider.timeoutSeconds', 120) * 1000,
    maxRetries: c.get('provider.maxRetries', 2),
    prices: c.get('provider.prices', {}),
    budget: {
      max_steps: positive(c.get('budget.maxSteps', 25)),
      max_cost_usd: positive(c.get('budget.maxCostUsd', 0)),
      max_tokens: positive(c.get('budget.maxTokens', 0)),
      max_wall_ms: positive(c.get('budget.maxMinutes', 0) * 60_000),
    },
    approval: {
      read: c.get('approval.read', 'auto'),
      write: c.get('approval.write', 'ask'),
      command: c.get('approval.command', 'ask'),
    },
    commandAllow: c.get<string[]>('approval.commandAllowList', []),
    commandDeny: c.get<string[]>('approval.commandDenyList', []),
    protectedFiles: userList(c, 'approval.protectedFiles'),
    privateFiles: userList(c, 'approval.privateFiles'),
    outputCapBytes: c.get('tools.outputCapKb', 32) * 1024,
    context: {
      thresholdPct: c.get('context.condenseThresholdPercent', 80),
      keepLastSteps: c.get('context.keepLastSteps', 4),
      stubChars: c.get('context.toolOutputStubChars', 2048),
      askBeforeCondensing: c.get('context.askBeforeCondensing', false),
      windows: c.get<Record<string, number>>('context.windows', {}),
    },
    finishedRunTtlDays: c.get('retention.finishedRunDays', 0),
    resumeOnStartup: c.get('resumeOnStartup', 'ask'),
  };
}

/**
 * The globs list_files and search_text leave out: VS Code's `files.exclude` and `search.exclude`
 * of the first workspace folder (the settings the Explorer and Search view use), switched-on entries only.
 */
export function readExcludes(): string[] {
  const scope = vscode.workspace.workspaceFolders?.[0]?.uri;
  const files = vscode.workspace.getConfiguration('files', scope).get<unknown>('exclude');
  const search = vscode.workspace.getConfiguration('search', scope).get<unknown>('exclude');
  return [...new Set([...enabledExcludes(files), ...enabledExcludes(search)])];
}

/** The base URL in effect, where it comes from, and the user's own (or the default). */
export interface BaseUrlSetting {
  value: string;
  source: BaseUrlSource;
  user: string;
}

export function readBaseUrl(): BaseUrlSetting {
  const c = vscode.workspace.getConfiguration(SECTION);
  const value = c.get<string>('provider.baseUrl', DEFAULT_BASE_URL);
  const i = c.inspect<string>('provider.baseUrl');
  const user = i?.globalValue ?? i?.defaultValue ?? DEFAULT_BASE_URL;
  // The level whose value is in effect (in Restricted Mode VS Code ignores the workspace's: `restricted` in package.json).
  const source =
    i?.workspaceFolderValue === value
      ? 'folder'
      : i?.workspaceValue === value
        ? 'workspace'
        : i?.globalValue === value
          ? 'user'
          : 'default';
  return { value, source, user };
}

/** A list from the user's own settings: a workspace cannot shorten or lengthen it (scope `application`, and we read only the user's value). */
function userList(c: vscode.WorkspaceConfiguration, key: string): string[] {
  const v = c.inspect<unknown>(key)?.globalValue;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

let compiledRules: { key: string; rules: FileRules } | undefined;

/** The protected/secret file rules: the defaults plus the user's patterns (compiled once per change). */
export function readFileRules(s: Settings = readSettings()): FileRules {
  const key = JSON.stringify([s.protectedFiles, s.privateFiles]);
  if (compiledRules?.key !== key) {
    const { rules, problems } = fileRules({ protect: s.protectedFiles, secrets: s.privateFiles });
    compiledRules = { key, rules };
    if (problems.length > 0)
      void vscode.window.showWarningMessage(
        `Agent Waypoints: some protected or secret file patterns in your settings cannot be used: ${problems.join('; ')}`,
      );
  }
  return compiledRules.rules;
}

/** Where the command mode comes from: the workspace's choice or the user's setting, and the sandbox (commandApproval.ts). */
export interface CommandApprovalSource {
  mode(): CommandMode;
  sandbox(): NonNullable<ApprovalPolicy['sandbox']>;
}

/** The approval policy the settings describe (read at each call, so changes apply at once). */
export function settingsPolicy(commands?: CommandApprovalSource): (tool: Tool, args: unknown) => PolicyVerdict {
  return (tool, args) => {
    const s = readSettings();
    const command = commands?.mode() ?? s.approval.command;
    return judgeCall(tool, args, {
      policy: {
        categories: { read: s.approval.read, write: s.approval.write, command, subagent: 'auto' },
        commandAllow: s.commandAllow,
        commandDeny: s.commandDeny,
        restricted: !vscode.workspace.isTrusted,
        fileRules: readFileRules(s),
        ...(command === 'sandbox' && commands ? { sandbox: commands.sandbox() } : {}),
      },
      workspaceRoot: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '.',
    });
  };
}

/**
 * `files.exclude` globs that are on: the file journal's command scan skips them, as the Explorer
 * does. (`search.exclude` is left out on purpose: files hidden only from search stay restorable.)
 */
export function readFilesExclude(): string[] {
  const scope = vscode.workspace.workspaceFolders?.[0]?.uri;
  return enabledExcludes(vscode.workspace.getConfiguration('files', scope).get<unknown>('exclude'));
}

/** A model endpoint on this machine (no API key needed to try it). */
export function isLocalEndpoint(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '127.0.0.1' || host === '::1' || host === '[::1]';
  } catch {
    return false;
  }
}
