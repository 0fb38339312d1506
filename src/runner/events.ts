// Typed events of the runner, for the UI and the log (no polling anywhere).
import type { Approval, CheckpointRecord, RunState } from '../store/api/schema';

export type RunnerEvent =
  | { type: 'phase'; runId: string; record: CheckpointRecord }
  | {
      type: 'state';
      runId: string;
      state: RunState;
      detail: string | null;
      /** The answer, when the run completed. */
      finalText?: string | null;
      /** A delegate's child run (its parent reports for it). */
      subagent?: boolean;
    }
  | { type: 'approval-requested'; runId: string; approval: Approval }
  | { type: 'approval-decided'; runId: string; approval: Approval }
  | { type: 'effect-replayed'; runId: string; toolCallId: string; toolName: string }
  | { type: 'llm'; runId: string; step: number; status: 'start' | 'end' }
  | { type: 'tool'; runId: string; step: number; toolCallId: string; toolName: string; status: 'start' | 'end'; isError?: boolean }
  | { type: 'log'; runId: string | null; level: 'info' | 'warn' | 'error'; message: string };

export { Emitter, type Listener } from '../common/emitter';
