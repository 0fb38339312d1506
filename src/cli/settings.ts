// What the command line's runner is built from: the config (config.ts) read into the same shapes
// the extension's settings.ts gives its runner, the environment's endpoint, model and key, and the
// approval policy they make — judged by the same judgeCall as in a window.
import fs from 'node:fs';
import type { Budget } from '../runner/budget';
import type { ContextSettings } from '../runner/context/fit';
import { createProvider, type ChatProvider } from '../runner/provider';
import { checkSandbox, COMMAND_POLICY } from '../runner/sandbox';
import type { ApprovalPolicy, PolicyVerdict } from '../runner/tools/policy';
import { enabledExcludes, fileRules, judgeCall, type FileRules, type Tool } from '../runner/tools';
import { type CliConfig, ConfigError } from './config';

type Mode = 'auto' | 'ask' | 'deny';
type CommandMode = Mode | 'sandbox';

export interface CliSettings {
  baseUrl: string;
  model: string;
  authHeader: 'bearer' | 'api-key';
  apiVersion: string;
  stream: boolean;
  timeoutMs: number;
  maxRetries: number;
  prices: Record<string, { input_per_mtok: number; output_per_mtok: number }>;
  budget: Budget;
  approval: { read: Mode; write: Mode; command: CommandMode };
  commandAllow: string[];
  commandDeny: string[];
  fileRules: FileRules;
  outputCapBytes: number;
  context: ContextSettings;
  filesExclude: string[];
  /** What list_files and search_text leave out: files.exclude and search.exclude, as in a window. */
  searchExclude: string[];
  workspaceName: string;
  /** The domains sandboxed commands may reach ("auto in sandbox"). */
  allowedDomains: string[];
}

export function readCliSettings(c: CliConfig, env: NodeJS.ProcessEnv): CliSettings {
  const positive = (v: number) => (v > 0 ? v : null);
  const rules = fileRules({ protect: c.get('approval.protectedFiles'), secrets: c.get('approval.privateFiles') });
  if (rules.problems.length > 0)
    throw new ConfigError(`some protected or secret file patterns cannot be used: ${rules.problems.join('; ')}`);
  return {
    baseUrl: env.AGENT_WAYPOINTS_BASE_URL || c.get('provider.baseUrl'),
    model: env.AGENT_WAYPOINTS_MODEL || c.get('provider.model'),
    authHeader: c.get('provider.authHeader'),
    apiVersion: c.get('provider.apiVersion'),
    stream: c.get('provider.stream'),
    timeoutMs: c.get<number>('provider.timeoutSeconds') * 1000,
    maxRetries: c.get('provider.maxRetries'),
    prices: c.get('provider.prices'),
    budget: {
      max_steps: positive(c.get('budget.maxSteps')),
      max_cost_usd: positive(c.get('budget.maxCostUsd')),
      max_tokens: positive(c.get('budget.maxTokens')),
      max_wall_ms: positive(c.get<number>('budget.maxMinutes') * 60_000),
    },
    approval: { read: c.get('approval.read'), write: c.get('approval.write'), command: c.get('approval.command') },
    commandAllow: c.get('approval.commandAllowList'),
    commandDeny: c.get('approval.commandDenyList'),
    fileRules: rules.rules,
    outputCapBytes: c.get<number>('tools.outputCapKb') * 1024,
    context: {
      thresholdPct: c.get('context.condenseThresholdPercent'),
      keepLastSteps: c.get('context.keepLastSteps'),
      stubChars: c.get('context.toolOutputStubChars'),
      askBeforeCondensing: c.get('context.askBeforeCondensing'),
      windows: c.get('context.windows'),
    },
    filesExclude: enabledExcludes(c.get('files.exclude')),
    searchExclude: [
      ...new Set([...enabledExcludes(c.get('files.exclude')), ...enabledExcludes(c.get('search.exclude'))]),
    ],
    workspaceName: c.get('store.workspaceName'),
    allowedDomains: c.get<string[]>('sandbox.allowedDomains').filter((d) => d.trim() !== ''),
  };
}

/**
 * The approval policy the settings describe; the user chose the folder on the command line, so it is
 * trusted. With "auto in sandbox", `sandboxUnavailable` says why the OS sandbox cannot run here (null:
 * it can), as the window's probe does: then commands ask, saying so.
 */
export function cliPolicy(
  s: CliSettings,
  workspaceRoot: string,
  sandboxUnavailable: string | null = null,
): (tool: Tool, args: unknown) => PolicyVerdict {
  const policy: ApprovalPolicy = {
    categories: { ...s.approval, subagent: 'auto' as const },
    commandAllow: s.commandAllow,
    commandDeny: s.commandDeny,
    restricted: false,
    fileRules: s.fileRules,
    ...(s.approval.command === 'sandbox'
      ? {
          sandbox: {
            policy: { ...COMMAND_POLICY, allowedDomains: s.allowedDomains, reportDomains: true },
            unavailable: sandboxUnavailable,
          },
        }
      : {}),
  };
  return (tool, args) => judgeCall(tool, args, { policy, workspaceRoot });
}

/** The API key from the environment or the file it names; never an argument, never the config file. */
export function readApiKey(env: NodeJS.ProcessEnv): string | undefined {
  if (env.AGENT_WAYPOINTS_API_KEY) return env.AGENT_WAYPOINTS_API_KEY;
  const file = env.AGENT_WAYPOINTS_API_KEY_FILE;
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch (err) {
    throw new ConfigError(
      `cannot read the API key file named by AGENT_WAYPOINTS_API_KEY_FILE: ${(err as Error).message}`,
    );
  }
}

/** The runner's provider factory: the configured endpoint; a run on VS Code's own models can only go on in VS Code. */
export function providerFactory(
  s: CliSettings,
  apiKey: string | undefined,
): (model: string, adapter: string) => ChatProvider {
  return (model, adapter) => {
    if (adapter === 'vscode-lm')
      throw new Error(`this run uses VS Code's language model ${model}: only a VS Code window can continue it`);
    return createProvider({
      baseURL: s.baseUrl,
      model,
      ...(apiKey ? { apiKey } : {}),
      authHeader: s.authHeader,
      ...(s.apiVersion ? { defaultQuery: { 'api-version': s.apiVersion } } : {}),
      stream: s.stream,
      timeoutMs: s.timeoutMs,
      maxRetries: s.maxRetries,
      prices: s.prices,
    });
  };
}

/** Why "auto in sandbox" cannot run here (the real probe, once per process), or null when it can. */
export async function sandboxProblem(): Promise<string | null> {
  const c = await checkSandbox();
  return c.available ? null : (c.problems[0]?.replace(/\.$/, '') ?? 'the sandbox did not start');
}
