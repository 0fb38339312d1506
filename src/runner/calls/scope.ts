// What running a batch's tool calls shares with the loop: the runner's services, the run, and the
// model's response that the first barrier before a tool runs must carry.
import type { Effect, RuntimeSnapshot } from '../../store/api/schema';
import type { CheckpointStore, RunLease } from '../../store/api/types';
import type { Emitter, RunnerEvent } from '../events';
import type { FileChangeRecorder, FileWatch } from '../fileJournal/recorder';
import type { ToolRegistry } from '../tools/registry';
import type { CallPlan } from './plan';

/** What running a tool call needs of the runner's services (the loop's deps hold these and more). */
export interface CallDeps {
  store: CheckpointStore;
  tools: ToolRegistry;
  /** The folder of the window running the run: tools act here, never in a folder named by stored data. */
  workspaceRoot: string;
  /** The extension's own storage folder: no tool path may lead into it. */
  storageDir?: string;
  events: Emitter<RunnerEvent>;
  outputCap: number;
  /** Journals the workspace files side-effecting tools change (absent: not journaled). */
  files?: FileChangeRecorder;
  now(): number;
}

export interface CallScope {
  deps: CallDeps;
  runId: string;
  lease: RunLease;
  /** The run's runtime: a call's result joins its messages and tool executions. */
  rt: RuntimeSnapshot;
  signal: AbortSignal;
  response: OwedResponse;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

export type RunPlan = Extract<CallPlan, { kind: 'run' }>;

/** A call whose intent was written ahead of its batch: its pre-images (if taken then) and the intent's files. */
export interface Ahead {
  plan: RunPlan;
  watch?: FileWatch;
  files?: Effect['files'];
}

/**
 * The model's response once it is handed over and until a barrier carries it (docs/design.md,
 * "Durable barriers"): whichever barrier comes first before a tool runs — an intent's, the
 * approvals', or `makeDurable` — carries it, so a crash after that never calls the model again for
 * this step.
 */
export class OwedResponse {
  private owed = false;

  constructor(
    private readonly store: CheckpointStore,
    private readonly runId: string,
  ) {}

  handedOver(): void {
    this.owed = true;
  }

  /** A barrier that carried the response was made. */
  carried(): void {
    this.owed = false;
  }

  /** The pending response on disk before a tool runs, when no intent has carried it yet. */
  async makeDurable(): Promise<void> {
    if (!this.owed) return;
    await this.store.makeDurable(this.runId, { toolsNext: true });
    this.owed = false;
  }
}
