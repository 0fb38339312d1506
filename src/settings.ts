// Typed access to the extension's settings (contributes.configuration in package.json).
import * as vscode from 'vscode';
import type { Budget } from './runner/budget';
import type { ToolCategory } from './store/api/schema';
import type { PolicyDecision } from './runner/toolBatch';
import { decide, enabledExcludes } from './runner/tools';

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
  approval: { read: PolicyMode; write: PolicyMode; command: PolicyMode };
  commandAllow: string[];
  commandDeny: string[];
  outputCapBytes: number;
  finishedRunTtlDays: number;
  resumeOnStartup: 'ask' | 'never';
}

export const SECTION = 'agentWaypoints';

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const positive = (v: number | undefined) => (v && v > 0 ? v : null);
  return {
    baseUrl: c.get('provider.baseUrl', 'https://api.openai.com/v1'),
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
    outputCapBytes: c.get('tools.outputCapKb', 32) * 1024,
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

/** The approval policy the settings describe (read at each call, so changes apply at once). */
export function settingsPolicy(tool: { name: string; category: ToolCategory }, args: unknown): PolicyDecision {
  const s = readSettings();
  return decide(
    { toolName: tool.name, category: tool.category, args },
    {
      categories: { read: s.approval.read, write: s.approval.write, command: s.approval.command, subagent: 'auto' },
      commandAllow: s.commandAllow,
      commandDeny: s.commandDeny,
      restricted: !vscode.workspace.isTrusted,
    },
  );
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
