// Typed events of the runner, for the UI and the log (no polling anywhere).
import type { Approval, CheckpointRecord, RunState } from '../store/api/schema';
import type { Leftover } from './tools/leftovers';

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
  /** Commands still running from before a crash: the run waits for them (killRunLeftovers ends the wait). */
  | { type: 'leftovers'; runId: string; status: 'waiting' | 'done'; leftovers: Leftover[]; detail: string | null }
  | { type: 'llm'; runId: string; step: number; status: 'start' | 'end' }
  /** Streamed text or reasoning of the model call in progress (UI only: the post_llm checkpoint is the source of truth). */
  | { type: 'llm-delta'; runId: string; step: number; kind: 'text' | 'reasoning'; delta: string }
  | {
      type: 'tool';
      runId: string;
      step: number;
      toolCallId: string;
      toolName: string;
      status: 'start' | 'end';
      isError?: boolean;
    }
  /** Progress an external tool reports while it runs (MCP progress notifications; UI only). */
  | {
      type: 'tool-progress';
      runId: string;
      toolCallId: string;
      progress: number;
      total?: number;
      message?: string;
    }
  | { type: 'log'; runId: string | null; level: 'info' | 'warn' | 'error'; message: string };

export { Emitter, type Listener } from '../common/emitter';
