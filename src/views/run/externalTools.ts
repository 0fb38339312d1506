// The run view's requests about external tools (vscode-free, called by the controller): "Always
// allow" on a pending approval, and a call's exact result for its card.
import type { RunnerEvent } from '../../runner/events';
import type { DecisionInput } from '../../runner/runner';
import type { CheckpointStore } from '../../store/api/types';
import { richResult, type RichResult } from './richResult';

export interface ExternalToolsDeps {
  store: CheckpointStore;
  decide(runId: string, decisions: DecisionInput[]): Promise<unknown>;
  /** Adds the tool (as its server is now) to the always-allow list; the text says what was allowed. */
  allow(toolName: string): Promise<string>;
}

/** Approves the call, then allows the tool: the call waits for nobody if the settings write is slow. */
export async function alwaysAllow(
  deps: ExternalToolsDeps,
  p: { runId: string; toolCallId: string; inputHash: string },
): Promise<string> {
  const approval = (await deps.store.listApprovals(p.runId, { pendingOnly: true })).find(
    (a) => a.tool_call_id === p.toolCallId,
  );
  if (!approval) throw new Error(`tool call ${p.toolCallId} of run ${p.runId} is not waiting for a decision`);
  if (approval.category !== 'external') throw new Error(`${approval.tool_name} is not an external tool`);
  if (approval.input_hash !== p.inputHash) throw new Error('its arguments changed since it was shown');
  const allowed = await deps.allow(approval.tool_name);
  await deps.decide(p.runId, [{ kind: 'approve', toolCallId: p.toolCallId, inputHash: p.inputHash }]);
  return allowed;
}

export async function toolResult(store: CheckpointStore, runId: string, toolCallId: string): Promise<RichResult> {
  const effect = (await store.listEffects(runId)).find((e) => e.tool_call_id === toolCallId);
  const blob = effect?.result?.raw_blob;
  if (!blob) throw new Error(`tool call ${toolCallId} of run ${runId} has no kept result`);
  return richResult(JSON.parse(await store.getBlob(runId, blob)));
}

/** The latest progress external tools reported, per run and call, while they run (UI only). */
export class CallProgress {
  private readonly runs = new Map<string, Map<string, string>>();

  track(e: RunnerEvent): void {
    if (e.type === 'tool' && e.status === 'end') this.runs.get(e.runId)?.delete(e.toolCallId);
    if (e.type !== 'tool-progress') return;
    const calls = this.runs.get(e.runId) ?? new Map<string, string>();
    calls.set(e.toolCallId, progressText(e));
    this.runs.set(e.runId, calls);
  }

  of(runId: string): ReadonlyMap<string, string> {
    return this.runs.get(runId) ?? new Map();
  }
}

/** "2 of 5 — copying files", "3". */
export function progressText(p: { progress: number; total?: number; message?: string }): string {
  const count = p.total !== undefined ? `${p.progress} of ${p.total}` : String(p.progress);
  return p.message ? `${count} — ${p.message}` : count;
}
