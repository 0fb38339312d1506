// Building a real AgentRunner for tests: a store (memory or on disk), the real openai-based provider
// over HTTP to the scripted model server, the real tools on a temp workspace.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentRunner, type RunnerDeps } from '../../../src/runner/runner';
import { createProvider } from '../../../src/runner/provider';
import { callPolicy, createCodingRegistry, DEFAULT_POLICY, type ApprovalPolicy } from '../../../src/runner/tools';
import type { CheckpointStore, OwnerInfo } from '../../../src/store/api/types';
import { createMemoryStore } from '../../../src/store/memory/store';
import { openDiskStore } from '../../../src/store';

export const REPO = path.resolve(__dirname, '../../..');

export function tmp(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `aw-${prefix}-`)));
}

export function owner(label = 'test'): OwnerInfo {
  return {
    owner_id: `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`,
    label,
    pid: process.pid,
    hostname: os.hostname(),
  };
}

export interface TestRunnerOptions {
  store?: CheckpointStore;
  /** Store on disk in this folder (default: memory). */
  storeDir?: string;
  workspace?: string;
  baseURL: string;
  policy?: Partial<ApprovalPolicy>;
  deps?: Partial<RunnerDeps>;
  version?: string;
}

export interface TestRunner {
  runner: AgentRunner;
  store: CheckpointStore;
  workspace: string;
}

export function makeRunner(o: TestRunnerOptions): TestRunner {
  const store = o.store ?? (o.storeDir ? openDiskStore(o.storeDir) : createMemoryStore());
  const workspace = o.workspace ?? tmp('ws');
  const policy: ApprovalPolicy = {
    ...DEFAULT_POLICY,
    ...o.policy,
    categories: { ...DEFAULT_POLICY.categories, ...o.policy?.categories },
  };
  const runner = new AgentRunner({
    store,
    provider: (model) => createProvider({ baseURL: o.baseURL, model, maxRetries: 1, timeoutMs: 5000 }),
    tools: createCodingRegistry(),
    policy: callPolicy(policy, workspace),
    workspaceRoot: workspace,
    owner: owner(),
    extensionVersion: o.version ?? '0.1.0',
    defaultModel: 'waypoints-demo-model',
    ...o.deps,
  });
  return { runner, store, workspace };
}

/** All phases of a run in seq order. */
export async function phases(store: CheckpointStore, runId: string): Promise<string[]> {
  const records = await store.list(runId, { limit: 10_000 });
  return records.reverse().map((r) => r.phase);
}

export function lines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}
