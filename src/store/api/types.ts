// The checkpoint store's one interface. Two backends implement it (memory, disk) and one
// contract suite (test/unit/store/contract.ts) runs against both. vscode-free.
import type {
  Approval,
  LostCall,
  ApprovalDecision,
  CheckpointRecord,
  CheckpointRef,
  Effect,
  EffectProcess,
  EffectResult,
  InboxMessage,
  FileChange,
  FileScan,
  Phase,
  RestoreRecord,
  RunEnd,
  RunState,
  RunSummary,
  RuntimeSnapshot,
  SandboxRun,
} from './schema';

export type { RunEnd };

import type { Disposable } from '../../common/disposable';

export type { Disposable };

export interface NewRunInput {
  /** Generated when absent (sortable: time prefix + random). */
  run_id?: string;
  thread_id?: string;
  title: string;
  task: string;
  agent_name: string;
  model: string;
  parent_run_id?: string | null;
}

export interface AppendInput {
  phase: Phase;
  step: number;
  /** Phase payload (validated against PhasePayloads[phase]). */
  payload: Record<string, unknown>;
  /** Required for step_started and post_llm; the store writes only the new tail of its lists. */
  snapshot?: RuntimeSnapshot;
  /**
   * Inbox messages this checkpoint's snapshot adds to the conversation: marked delivered in the same
   * (durable) commit as the checkpoint, so each message enters the conversation exactly once.
   */
  deliver?: string[];
}

/** How soon a write must be on disk (docs/design.md, "Durable barriers"). */
export interface WriteOptions {
  /**
   * `now` (the default of the durable classes): on disk before the call resolves — one barrier,
   * carrying everything the run has queued. `next-barrier`: applied at once and acknowledged as
   * queued; it rides on the run's next barrier (its next durable write, `makeDurable`, or the
   * store's backstop timer). The caller makes a barrier before the point where it must be on disk.
   * `written` (recordResult only): written before the call resolves, without a barrier of its own —
   * a crash of the process keeps it, a power loss before the next barrier may not — and durable at
   * the run's next barrier, as `next-barrier` is.
   */
  durability?: 'now' | 'next-barrier' | 'written';
}

export interface NewInboxMessage {
  /** Chosen by the sender so a retried send is not stored twice; generated when absent. */
  id?: string;
  text: string;
}

/** A follow-up turn: a new run in the thread of `from.run_id`, continuing its conversation. */
export interface ContinueRunInput {
  /** The checkpoint continued from (the previous run's latest): the new run's first checkpoint's parent. */
  from: CheckpointRef;
  title: string;
  task: string;
  agent_name: string;
  model: string;
  /**
   * The new run's first checkpoint, with the snapshot it continues with. Effect records its pending
   * LLM response refers to are carried over from the previous run (finished calls replay, never run twice).
   */
  first: AppendInput;
  /** Messages for the new run's inbox, delivered at its first step boundary (the follow-up itself). */
  messages: NewInboxMessage[];
}

export interface ListRunsOptions {
  /** 1–1000; default 50. */
  limit?: number;
  /** From a previous page (the same `states`). */
  cursor?: string;
  /**
   * Only runs in these states. Unfinished states only (not completed or failed) are answered from
   * what opening read, never the whole index: what startup and "Needs attention" need.
   */
  states?: readonly RunState[];
}

export interface RunPage {
  runs: RunSummary[];
  /** Pass back to get the next page; absent on the last page. */
  cursor?: string;
}

export interface LoadedSnapshot {
  /** The checkpoint the snapshot belongs to. */
  record: CheckpointRecord;
  /** A fresh copy: mutating it never changes the store. */
  snapshot: RuntimeSnapshot;
}

/**
 * The newest snapshot as a resume needs it (CheckpointStore.loadResumeSnapshot): its lists may leave
 * out items the run goes on without, read from a resume point of the disk store — messages a condense
 * replaced by its summary (model_context.condense), tool executions of calls before the first whose
 * tool message the model sees. Those indexes [from, to) are holes in the arrays (`i in list` is false;
 * forEach, some and filter pass them over); from = to: none left out. loadSnapshot gives every item.
 */
export interface ResumeSnapshot extends LoadedSnapshot {
  omitted: Record<'messages' | 'tool_executions' | 'subagent_executions', { from: number; to: number }>;
}

export interface NewApproval {
  tool_call_id: string;
  step: number;
  tool_name: string;
  category: Approval['category'];
  arguments: unknown;
  input_hash: string;
  uncertain: boolean;
  reason: string;
  /** The call ran in the sandbox and was blocked: this asks to run it again with more access. */
  retry?: Approval['retry'];
}

export interface NewEffectIntent {
  tool_call_id: string;
  step: number;
  tool_name: string;
  input_hash: string;
  side_effecting: boolean;
  /** Pre-images of the files the call will write (their blobs already stored), `after` unknown. */
  files?: FileChange[];
  /** A command: where it runs. */
  sandbox?: SandboxRun;
}

/** A blocked call run again with the access its retry approval granted (the store checks that approval). */
export interface NewEffectRetry {
  input_hash: string;
  sandbox?: SandboxRun;
}

export interface NewEffectResult extends Omit<EffectResult, 'finished_ms'> {
  /** What the call changed (replaces the intent's list); absent = keep the intent's. */
  files?: FileChange[];
  file_scan?: FileScan;
}

/** A restore of the run's files, as applied (the store numbers it and stamps the time). */
export type NewRestore = Omit<RestoreRecord, 'id' | 'created_ms' | 'checkpoint_seq'>;

export interface ForkOptions {
  title?: string;
  /**
   * Tool calls whose effect records are not carried into the fork, so it runs them again instead of
   * replaying them (a fork with files, whose pending calls' file changes were restored away).
   */
  omitEffects?: string[];
}

/** Who holds a run. Shown to the other window: "held by VS Code window 'proj' (pid 123)". */
export interface OwnerInfo {
  owner_id: string;
  label: string;
  pid: number;
  hostname: string;
}

export interface RunLease extends Disposable {
  readonly run_id: string;
  readonly owner: OwnerInfo;
  /** True once the lease was found taken over or released; writes then fail with RunNotOwnedError. */
  readonly lost: boolean;
  release(): Promise<void>;
}

/** What a read found broken and what it did about it (never deletes: moves to quarantine). */
export interface CorruptionReport {
  run_id: string | null;
  /** The first bad (or missing) file, relative to the store folder. */
  file: string;
  /** What was wrong with it. */
  reason: string;
  /** Files moved to quarantine, with where they went and why. */
  quarantined: { file: string; to: string; reason: string }[];
  /** The run fell back to this checkpoint (null: nothing usable was left). */
  fell_back_to_seq: number | null;
  /** Checkpoint seqs that were lost (null: none, or none known). */
  lost_seqs: { from: number; to: number } | null;
  /** Whether effect records (intents/results) were among the lost data; null = unknown (the file was unreadable). */
  effects_lost: boolean | null;
  /** Human-readable: which checkpoints/effects were lost. */
  lost: string;
  /** Acknowledged run data was lost (false: a cache, a lock or a redundant copy was bad and is rebuilt). */
  data_lost: boolean;
  /** The run's state before the loss, when known (its tail witness, the index or the lost files). */
  state_before: RunState | null;
  /** The step the run had reached before the loss, when known. */
  step_before: number | null;
  /** Tool calls the lost files still show (best effort: only files that are readably this run's). */
  lost_calls: LostCall[];
}

/** A report whose fields beyond the essentials take their "nothing lost" defaults. */
export function corruptionReport(
  r: Pick<CorruptionReport, 'run_id' | 'file' | 'reason' | 'quarantined' | 'lost'> & Partial<CorruptionReport>,
): CorruptionReport {
  return {
    fell_back_to_seq: null,
    lost_seqs: null,
    effects_lost: false,
    data_lost: false,
    state_before: null,
    step_before: null,
    lost_calls: [],
    ...r,
  };
}

export type StoreEvent =
  | { kind: 'run-created' | 'run-updated' | 'run-deleted'; run_id: string }
  | { kind: 'checkpoint'; run_id: string; record: CheckpointRecord }
  | { kind: 'approval'; run_id: string; approval: Approval }
  /** An effect record as written: an intent, a process, a result, or a withdrawal (`withdrawn_ms` set: the run no longer holds the call). */
  | { kind: 'effect'; run_id: string; effect: Effect }
  | { kind: 'inbox'; run_id: string; message: InboxMessage }
  | { kind: 'restore'; run_id: string; restore: RestoreRecord }
  /** A write failed (never swallowed). The run is marked; its next write rejects until retried. */
  | { kind: 'write-error'; run_id: string | null; error: Error }
  | { kind: 'corruption'; report: CorruptionReport }
  /** Something redundant was missing and rebuilt (an index never written before a crash …): for the log, not an alarm. */
  | { kind: 'recovered'; run_id: string | null; file: string; message: string };

export interface ListOptions {
  /** Max records (default 100). */
  limit?: number;
  /** Only records with seq < before (paging backwards from the newest). */
  before?: number;
}

/**
 * Durability: the store decides per write (callers cannot forget). Durable before the promise
 * resolves: run creation, run_started, post_llm with a pending_llm_response, run_terminal,
 * approval requests and decisions, effect intents and results, state changes — unless the caller
 * hands a checkpoint or a result over with `durability: 'next-barrier'` and makes the barrier
 * itself (`makeDurable`, or its next durable write). Everything else is queued, rides on the run's
 * next barrier (or a backstop timer), and is made durable by flush().
 */
export interface CheckpointStore {
  // runs
  createRun(input: NewRunInput, owner: OwnerInfo): Promise<{ run: RunSummary; lease: RunLease }>;
  listRuns(opts?: ListRunsOptions): Promise<RunPage>;
  /**
   * Picks up what other windows changed since this store opened: runs they created or deleted, and
   * new commits of unfinished runs this store does not own. Finished runs are not re-read.
   * Resolves to whether anything changed.
   */
  rescan(): Promise<boolean>;
  /**
   * Picks up the new commits of these runs, which another process writes (the shared store's change
   * feed named them): `run-updated` for each that changed, finished or not. Resolves to whether any did.
   */
  follow(runIds: readonly string[]): Promise<boolean>;
  getRun(runId: string): Promise<RunSummary | undefined>;
  /**
   * The run's summary without reading its log: from memory when it was read, else as the run index
   * has it (kept current by this window's writes and by rescan, as listRuns). undefined: no such run.
   */
  indexedRun(runId: string): Promise<RunSummary | undefined>;
  setRunState(runId: string, state: RunState, detail?: string | null): Promise<RunSummary>;
  deleteRun(runId: string): Promise<void>;

  // ownership (one window per run)
  acquire(runId: string, owner: OwnerInfo): Promise<RunLease>;
  /** The live owner of a run, if any (for "held by …"). */
  owner(runId: string): Promise<OwnerInfo | undefined>;
  /**
   * Proves, just before a side effect starts, that this store holds the run's lease at this moment:
   * RunNotOwnedError when another window or machine took it over; StoreWriteError when that cannot
   * be known now (the shared store unreachable): fail closed, nothing may start. The local stores
   * answer from their lock (a stat); the shared one with one fenced statement.
   */
  assertOwner(runId: string): Promise<void>;
  /** Another machine can take this run over (it lives in the shared store), not only another window here. */
  isShared(runId: string): boolean;

  // checkpoints
  append(runId: string, input: AppendInput, opts?: WriteOptions): Promise<CheckpointRecord>;
  /** The newest checkpoint. No run, or no usable checkpoint → CheckpointNotFoundError naming the run. */
  latest(runId: string): Promise<CheckpointRecord>;
  get(runId: string, seq: number): Promise<CheckpointRecord | undefined>;
  /** Newest first. */
  list(runId: string, opts?: ListOptions): Promise<CheckpointRecord[]>;
  /**
   * The snapshot of the newest snapshot-bearing checkpoint at or before `seq` (default: latest), as
   * a fresh copy. None → CheckpointNotFoundError (an AgentCheckpointCorruptionError) naming the run.
   */
  loadSnapshot(runId: string, seq?: number): Promise<LoadedSnapshot>;
  /**
   * The newest snapshot as a resume needs it (ResumeSnapshot): on disk, a long run not in memory is
   * read from its resume point — what it needs to go on — and the rest of it only when asked for.
   */
  loadResumeSnapshot(runId: string): Promise<ResumeSnapshot>;
  /**
   * The run's end (schema.ts RunEnd) with at most `records` of its newest checkpoints: from memory when
   * the run is read, else from what its last compaction kept when nothing followed it (the disk store:
   * the first bytes of one file), else from the whole log. Fresh copies.
   */
  readEnd(runId: string, opts: { records: number }): Promise<RunEnd>;

  // fork, export, import
  fork(runId: string, seq: number, owner: OwnerInfo, opts?: ForkOptions): Promise<{ run: RunSummary; lease: RunLease }>;
  /** A follow-up turn as a new run in the same thread (one durable commit: meta, carried effects, first checkpoint, inbox). */
  continueRun(input: ContinueRunInput, owner: OwnerInfo): Promise<{ run: RunSummary; lease: RunLease }>;
  exportRun(runId: string): Promise<unknown>;
  importRun(data: unknown, owner: OwnerInfo): Promise<RunSummary>;

  // approvals
  requestApproval(runId: string, approval: NewApproval): Promise<Approval>;
  decideApproval(runId: string, toolCallId: string, decision: Omit<ApprovalDecision, 'decided_ms'>): Promise<Approval>;
  /** `calls`: only those calls' (what a run resumed from its resume point answers from memory). */
  listApprovals(runId: string, opts?: { pendingOnly?: boolean; calls?: readonly string[] }): Promise<Approval[]>;

  // effect journal
  /**
   * Durable before it resolves, or with `next-barrier` queued for the caller's next barrier (the intents
   * of a batch written ahead, made durable together with the model's response before any call runs).
   */
  recordIntent(runId: string, intent: NewEffectIntent, opts?: WriteOptions): Promise<Effect>;
  /**
   * An intent written ahead for a call that then never started: the run holds no effect for it any
   * more (resume plans it afresh). Rides on the next barrier; refused once the call has a result or a
   * process. Returns the withdrawing record.
   */
  withdrawIntent(runId: string, toolCallId: string): Promise<Effect>;
  /** The process a running side effect started (durable): resume waits for a live one instead of asking. */
  recordProcess(runId: string, toolCallId: string, process: EffectProcess): Promise<Effect>;
  recordResult(runId: string, toolCallId: string, result: NewEffectResult, opts?: WriteOptions): Promise<Effect>;
  /**
   * A call the sandbox blocked, about to run again with the access its approved retry grants (the
   * approval must name this attempt): durable before it resolves; the result so far becomes an
   * earlier attempt and the call has an intent without a result again.
   */
  recordRetry(runId: string, toolCallId: string, retry: NewEffectRetry): Promise<Effect>;
  /** In journal order (intents in the order they were written); `calls`: only those calls'. */
  listEffects(runId: string, opts?: { calls?: readonly string[] }): Promise<Effect[]>;

  // inbox (user messages for a run; durable at once, delivered by an append's `deliver`)
  postMessage(runId: string, message: NewInboxMessage): Promise<InboxMessage>;
  /** In the order sent. */
  listInbox(runId: string, opts?: { pendingOnly?: boolean }): Promise<InboxMessage[]>;
  // restores of the run's files (an audit trail; allowed on finished runs, needs the lease)
  recordRestore(runId: string, restore: NewRestore): Promise<RestoreRecord>;
  listRestores(runId: string): Promise<RestoreRecord[]>;

  // blobs (content-addressed, per run)
  /**
   * Text, or text as UTF-8 bytes (stored and hashed as those bytes: the same blob either way).
   * `sha256`: of bytes, taken by the caller off the main thread; a wrong one reads back as corrupt.
   */
  putBlob(runId: string, content: string | Uint8Array, sha256?: string): Promise<string>;
  getBlob(runId: string, hash: string): Promise<string>;

  // retention
  storageBytes(runId: string): Promise<number>;
  /** Deletes finished runs not updated for ttlMs. Returns the deleted ids. */
  pruneFinished(ttlMs: number): Promise<string[]>;
  /** Rewrites a run's log compactly (fewer files); the chain stays resumable. */
  compact(runId: string): Promise<void>;

  // durability and lifecycle
  onEvent(listener: (e: StoreEvent) => void): Disposable;
  /**
   * One barrier for what this run was handed with `durability: 'next-barrier'` (with everything queued
   * before it); nothing of that kind waiting → nothing is written. Also where a background compaction
   * starts when one is due — unless `toolsNext`: the barrier before tool calls, which write again
   * soon; the one before a model request, while the model answers, is the time for it.
   */
  makeDurable(runId: string, opts?: { toolsNext?: boolean }): Promise<void>;
  /**
   * Resolves when the run's background work — a compaction started at a barrier, and the commit of
   * what queued behind it — is done (at once when there is none); writes nothing of its own. For a
   * caller that waits anyway (the benchmark's model call, tests).
   */
  whenIdle(runId: string): Promise<void>;
  /** Makes every queued write durable; rejects with the write error if one fails or the time runs out. */
  flush(timeoutMs?: number): Promise<void>;
  close(timeoutMs?: number): Promise<void>;
}
