// The run view's requests about external tools (vscode-free, called by the controller): a call's
// exact result for its card, and the progress calls report while they run. ("Always allow" is a
// decision: actions/decide.ts approveAndAllow.)
import type { RunnerEvent } from '../../runner/events';
import type { CheckpointStore } from '../../store/api/types';
import { count } from '../../common/format';
import { cut, PARSE_MAX_CHARS, TEXT_MAX_CHARS } from './bounds';
import { richResult, type RichResult } from './richResult';

export async function toolResult(store: CheckpointStore, runId: string, toolCallId: string): Promise<RichResult> {
  const effect = (await store.listEffects(runId)).find((e) => e.tool_call_id === toolCallId);
  const blob = effect?.result?.raw_blob;
  if (!blob) throw new Error(`tool call ${toolCallId} of run ${runId} has no kept result`);
  const text = await store.getBlob(runId, blob);
  // Parsing is synchronous and proportional to the result: past the bound the card shows the result's
  // first characters as kept, not its parts.
  if (text.length > PARSE_MAX_CHARS) {
    const head = `(The result is ${count(text.length)} characters of JSON, too large to show by part: its beginning as kept.)\n`;
    return { parts: [{ type: 'text', text: head + cut(text, TEXT_MAX_CHARS) }], structured: null, isError: false };
  }
  return richResult(JSON.parse(text), text);
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
