import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ExtensionApi } from '../../src/root';
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
