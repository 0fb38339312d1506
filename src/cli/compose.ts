// The command line's composition root: the same vscode-free parts src/root.ts builds for a window
// — the store, the coding tools, the runner with its policy, context management and file journal —
// from the config file and the environment instead of VS Code's settings and SecretStorage.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { version } from '../../package.json';
import { localDecider, userName } from '../runner/decider';
import { AgentRunner } from '../runner/runner';
import { createCodingRegistry, createFileFinder } from '../runner/tools';
import type { CheckpointStore, OwnerInfo } from '../store/api/types';
import { CliConfig } from './config';
import { cliPolicy, providerFactory, readApiKey, readCliSettings, sandboxProblem, type CliSettings } from './settings';
import { openCliStore, type CliStore } from './store';

export interface CliContext {
  store: CheckpointStore;
  runner: AgentRunner;
  settings: CliSettings;
  owner: OwnerInfo;
  workspace: string;
  /** The local store's folder, when there is one (never written by tools, restores or bring-backs). */
  storageDir: string | undefined;
  where: string;
  /** With "auto in sandbox": why the OS sandbox cannot run here (commands then ask), or null. */
  sandboxUnavailable: string | null;
  close(): Promise<void>;
}

const FLUSH_TIMEOUT_MS = 3000;

export async function compose(o: {
  workspace: string;
  storeDir: string | undefined;
  configFile: string | undefined;
  env: NodeJS.ProcessEnv;
  /** Another store than the workspace's usual one (a worker's: the shared store alone). */
  openStore?: (settings: CliSettings) => Promise<CliStore>;
  /** Who this process is to the store (a worker's name); default the command line of this user. */
  label?: string;
  /** The command may run tools: with "auto in sandbox", probe the sandbox first. */
  drives?: boolean;
}): Promise<CliContext> {
  const settings = readCliSettings(CliConfig.load(o.configFile, o.env), o.env);
  const apiKey = readApiKey(o.env);
  const { store, storageDir, where } = await (o.openStore?.(settings) ??
    openCliStore({
      storeDir: o.storeDir,
      workspace: o.workspace,
      env: o.env,
      workspaceName: settings.workspaceName,
    }));
  const owner: OwnerInfo = {
    owner_id: randomUUID(),
    label: o.label ?? `agent-waypoints command line (${userName()})`,
    pid: process.pid,
    hostname: os.hostname(),
  };
  // The real probe, once: a command in a real sandbox, as the window's "Check sandbox" runs it.
  const sandboxUnavailable = o.drives && settings.approval.command === 'sandbox' ? await sandboxProblem() : null;
  const files = createFileFinder({ excludes: () => settings.searchExclude });
  const runner = new AgentRunner({
    store,
    provider: providerFactory(settings, apiKey),
    tools: createCodingRegistry({ files, fileRules: () => settings.fileRules }),
    policy: cliPolicy(settings, o.workspace, sandboxUnavailable),
    workspaceRoot: o.workspace,
    ...(storageDir ? { storageDir } : {}),
    owner,
    decidedBy: localDecider(owner.hostname, 'cli'),
    extensionVersion: version,
    defaultModel: settings.model,
    defaultBudget: settings.budget,
    outputCap: settings.outputCapBytes,
    context: settings.context,
    files: { exclude: () => settings.filesExclude },
  });
  return {
    store,
    runner,
    settings,
    owner,
    workspace: o.workspace,
    storageDir,
    where,
    sandboxUnavailable,
    close: async () => {
      await runner.shutdown(FLUSH_TIMEOUT_MS);
      await store.close(FLUSH_TIMEOUT_MS);
    },
  };
}
