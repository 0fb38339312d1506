import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../src/root';
import { originOf } from '../../src/runner/provider/keyOrigin';
import type { RunState } from '../../src/store/api/schema';

export const EXTENSION_ID = 'agent-waypoints.agent-waypoints';

export async function activated(): Promise<ExtensionApi> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not installed in this host`);
  const api = ext.isActive ? ext.exports : await ext.activate();
  await api.ready;
  return api;
}

/** Waits until the run reaches one of the states (from runner events, falling back to the store). */
export async function waitForState(
  api: ExtensionApi,
  runId: string,
  states: RunState[],
  timeoutMs = 60_000,
): Promise<RunState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await api.store!.getRun(runId);
    if (run && states.includes(run.state) && !api.runner!.isActive(runId)) return run.state;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not reach ${states.join('/')} (is ${run?.state})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function configure(settings: Record<string, unknown>): Promise<void> {
  const c = vscode.workspace.getConfiguration();
  for (const [k, v] of Object.entries(settings)) await c.update(k, v, vscode.ConfigurationTarget.Global);
}

/**
 * Stores the API key for the base URL in effect, through the extension's test-only API (no command
 * takes a key: any extension can run commands).
 */
export async function setApiKey(key: string): Promise<void> {
  const api = await activated();
  const url = vscode.workspace.getConfiguration('agentWaypoints').get<string>('provider.baseUrl') ?? '';
  const origin = originOf(url);
  assert.ok(origin, `the base URL ${url} has an origin`);
  assert.ok(api.testing, 'the extension runs in ExtensionMode.Test');
  await api.testing.keys.set(key, origin);
}
