// The zod schemas are the single source of truth for every stored record type: TypeScript types
// are inferred from them, every file read is parsed by them, and export/import validates with them.
// Field names follow the AFK checkpoint reference (docs/design.md; the AFK checkpoint reference): snake_case on purpose.
import { z } from 'zod';

/**
 * Version of every file the store writes. Bump it together with a migration in core/migrations.ts.
 * 2: a run's log is one append-only segment (disk/segment.ts) instead of one file per commit; the
 * records themselves did not change.
 */
export const STORE_SCHEMA_VERSION = 2;

// ── keys ────────────────────────────────────────────────────────────────────────────────────────
/** Run ids become folder names: checked before use so no id can escape the store folder. */
export const RunId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'run id: 1-64 of [A-Za-z0-9_-], not starting with - or _');
export type RunId = z.infer<typeof RunId>;

// ── phases and states ──────────────────────────────────────────────────────────────────────────
export const PHASES = [
  'run_started',
  'step_started',
  'pre_llm',
  'post_llm',
  'pre_tool_batch',
  'post_tool_batch',
  'pre_subagent_batch',
  'post_subagent_batch',
  /** Context management: older turns are condensed into a summary for the model (the messages stay). */
  'pre_condense',
  'post_condense',
  'run_terminal',
] as const;
export const Phase = z.enum(PHASES);
export type Phase = z.infer<typeof Phase>;

/** Phases whose payload carries the runtime snapshot (docs/design.md). */
export const SNAPSHOT_PHASES: readonly Phase[] = ['step_started', 'post_llm', 'post_condense'];

export const RUN_STATES = [
  'running',
  'awaiting_approval',
  'paused_budget',
  'paused_error',
  'paused_cancelled',
  'interrupted',
  'completed',
  'failed',
] as const;
export const RunState = z.enum(RUN_STATES);
export type RunState = z.infer<typeof RunState>;
export const TERMINAL_STATES: readonly RunState[] = ['completed', 'failed'];
export const isTerminalState = (s: RunState): boolean => TERMINAL_STATES.includes(s);

// ── conversation (OpenAI Chat Completions shapes) ──────────────────────────────────────────────
export const ToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const SystemMessage = z.looseObject({ role: z.literal('system'), content: z.string() });
export const UserMessage = z.looseObject({ role: z.literal('user'), content: z.string() });
export const AssistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(ToolCall).optional(),
  /** The model's reasoning ("thinking"), kept apart from the answer; shown collapsed, not sent back as content. */
  reasoning: z.string().nullable().optional(),
  /** Where the server put the reasoning; only `reasoning_content` on a tool-call turn is sent back (DeepSeek requires it, others accept it). */
  reasoning_from: z.enum(['reasoning_content', 'reasoning', 'thinking_parts']).optional(),
});
export const ToolMessage = z.looseObject({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() });
export const ChatMessage = z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type ChatMessage = z.infer<typeof ChatMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const Usage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  /** Of input_tokens, served from the provider's prompt cache (absent: not reported). */
  cached_tokens: z.number().int().nonnegative().optional(),
  /** Of output_tokens, spent on reasoning (absent: not reported). */
  reasoning_tokens: z.number().int().nonnegative().optional(),
  /** Counted by us (countTokens, a tokenizer) because the provider reported none: an estimate. */
  estimated: z.boolean().optional(),
});
export type Usage = z.infer<typeof Usage>;

/**
 * A tool from outside the extension (an MCP server's, or one of VS Code's `vscode.lm.tools`) as the
 * model was offered it. Recorded with each response, so a resumed call to a tool that vanished or
 * changed since is told to the user and the model instead of being made blind. The hashes are
 * prefixes: enough to see a change (approvals bind the full identity through input_hash).
 */
export const SeenTool = z.object({
  /** The name the model used (`server__tool`). */
  name: z.string(),
  kind: z.enum(['mcp', 'vscode']),
  /** The MCP server's name, or `vscode`. */
  source: z.string(),
  /** The tool's own name at its source. */
  tool: z.string(),
  identity: z.string(),
  schema_hash: z.string(),
});
export type SeenTool = z.infer<typeof SeenTool>;

/** An LLM response received but whose tool calls have not all run yet (resume skips the LLM call). */
export const LlmResponse = z.object({
  id: z.string().nullable(),
  model: z.string(),
  finish_reason: z.string().nullable(),
  message: AssistantMessage,
  usage: Usage.nullable(),
  received_ms: z.number().int(),
  /** The external tools the model was offered for this response (absent: none, or written before they existed). */
  tools_seen: z.array(SeenTool).optional(),
});
export type LlmResponse = z.infer<typeof LlmResponse>;

export const ToolExecutionRecord = z.object({
  tool_call_id: z.string(),
  tool_name: z.string(),
  step: z.number().int().nonnegative(),
  input_hash: z.string(),
  output_hash: z.string().nullable(),
  is_error: z.boolean(),
  /** Satisfied from the effect journal instead of running the tool again. */
  replayed: z.boolean(),
  started_ms: z.number().int(),
  finished_ms: z.number().int().nullable(),
});
export type ToolExecutionRecord = z.infer<typeof ToolExecutionRecord>;

export const SubagentExecutionRecord = z.object({
  tool_call_id: z.string(),
  child_run_id: RunId,
  step: z.number().int().nonnegative(),
  state: RunState,
  final_text: z.string().nullable(),
  started_ms: z.number().int(),
  finished_ms: z.number().int().nullable(),
});
export type SubagentExecutionRecord = z.infer<typeof SubagentExecutionRecord>;

// ── what the model sees (context management; the messages list itself keeps everything) ─────────
/**
 * A condense: messages[head, through) are sent to the model as one summary message. Written by a
 * post_condense checkpoint; `pre_seq` is the pre_condense checkpoint, from which the context before
 * it can be had back (fork, Undo condense).
 */
export const Condense = z.object({
  /** `condense-<pre_seq>`. */
  id: z.string().min(1),
  pre_seq: z.number().int().positive(),
  /** Messages kept before the summary: the system prompt and the first user message. */
  head: z.number().int().nonnegative(),
  through: z.number().int().nonnegative(),
  summary: z.string(),
  /** The step whose checkpoints hold it. */
  step: z.number().int().nonnegative(),
});
export type Condense = z.infer<typeof Condense>;

/**
 * The exact context the model sees, as a rendering of the run's messages (runner/context/render.ts):
 * tool outputs in messages[0, stub_before) longer than stub_chars go as a short stub (read_output
 * reads them back), and a condense replaces its range by its summary. Rides on every snapshot.
 */
export const ModelContext = z.object({
  stub_before: z.number().int().nonnegative(),
  stub_chars: z.number().int().positive(),
  condense: Condense.nullable(),
  /** The window a provider's "context length exceeded" error taught us (smaller than what we assumed). */
  learned_window: z.number().int().positive().nullable(),
  /** After Undo condense: condense again only when the request would not fit the window at all. */
  hold: z.boolean(),
});
export type ModelContext = z.infer<typeof ModelContext>;

// ── runtime snapshot (docs/design.md, field for field) ─────────────────────────────────────────────
/** The snapshot minus its append-only lists: what a checkpoint record stores. */
export const SnapshotHeader = z.object({
  step: z.number().int().nonnegative(),
  state: RunState,
  context: z.record(z.string(), z.unknown()),
  llm_calls: z.number().int().nonnegative(),
  tool_calls: z.number().int().nonnegative(),
  started_at_s: z.number(),
  usage: Usage,
  /** null = unknown (a model without a price), never a made-up zero. */
  total_cost_usd: z.number().nonnegative().nullable(),
  session_token: z.string().nullable(),
  checkpoint_token: z.string().nullable(),
  pending_llm_response: LlmResponse.nullable(),
  requested_model: z.string(),
  normalized_model: z.string(),
  provider_adapter: z.string(),
  final_text: z.string(),
  final_structured: z.unknown().nullable(),
  replayed_effect_count: z.number().int().nonnegative(),
  /** What the model sees (absent or null: every message as it is). */
  model_context: ModelContext.nullable().optional(),
  /** Lengths of the append-only lists at this checkpoint; the lists live in the run's log. */
  message_count: z.number().int().nonnegative(),
  tool_execution_count: z.number().int().nonnegative(),
  subagent_execution_count: z.number().int().nonnegative(),
});
export type SnapshotHeader = z.infer<typeof SnapshotHeader>;

/** Append-only list fields of the snapshot: the store writes only what is new in them. */
export const LIST_FIELDS = ['messages', 'tool_executions', 'subagent_executions'] as const;
export type ListField = (typeof LIST_FIELDS)[number];

export const RuntimeSnapshot = SnapshotHeader.omit({
  message_count: true,
  tool_execution_count: true,
  subagent_execution_count: true,
}).extend({
  messages: z.array(ChatMessage),
  tool_executions: z.array(ToolExecutionRecord),
  subagent_executions: z.array(SubagentExecutionRecord),
});
export type RuntimeSnapshot = z.infer<typeof RuntimeSnapshot>;

/** A request's size in tokens against the model's window (what the run view's context meter shows). */
export const ContextSize = z.object({
  tokens: z.number().int().nonnegative(),
  window: z.number().int().positive(),
  /** Where the window came from: server (GET /models), vscode-lm (maxInputTokens), error, setting, default. */
  window_source: z.string(),
  /** Counted with a tokenizer that is not the model's own (an estimate within a margin). */
  estimated: z.boolean(),
});
export type ContextSize = z.infer<typeof ContextSize>;

// ── phase payloads (the AFK reference's table, plus what resume needs) ───────────────────────────────────
export const PhasePayloads = {
  run_started: z.looseObject({
    agent_name: z.string(),
    resumed: z.boolean(),
    task: z.string(),
    extension_version: z.string(),
    tool_schema_hash: z.string(),
  }),
  step_started: z.looseObject({ state: RunState, message_count: z.number().int().nonnegative() }),
  pre_llm: z.looseObject({
    model: z.string(),
    provider: z.string(),
    message_count: z.number().int().nonnegative(),
    /** The request's size as counted before it was sent, and the window it had to fit. */
    context: ContextSize.optional(),
  }),
  post_llm: z.looseObject({
    model: z.string(),
    provider: z.string(),
    finish_reason: z.string().nullable(),
    tool_call_count: z.number().int().nonnegative(),
    session_token: z.string().nullable(),
    checkpoint_token: z.string().nullable(),
    total_cost_usd: z.number().nullable(),
    /** The ledger entry of this request: its tokens (as reported, or counted: `estimated`) and cost. */
    usage: Usage.nullable().optional(),
    cost_usd: z.number().nullable().optional(),
  }),
  pre_tool_batch: z.looseObject({ tool_call_count: z.number().int().nonnegative() }),
  post_tool_batch: z.looseObject({
    tool_calls_total: z.number().int().nonnegative(),
    tool_failures: z.number().int().nonnegative(),
  }),
  pre_subagent_batch: z.looseObject({ subagent_count: z.number().int().nonnegative() }),
  post_subagent_batch: z.looseObject({
    subagents_total: z.number().int().nonnegative(),
    subagent_failures: z.number().int().nonnegative(),
  }),
  pre_condense: z.looseObject({
    /** threshold: the request would pass the condense threshold; overflow: the provider refused it as too long. */
    reason: z.enum(['threshold', 'overflow']),
    context: ContextSize,
    /** Waiting for the user ("ask before condensing"): resuming the run is the go-ahead. */
    awaiting_consent: z.boolean(),
  }),
  post_condense: z.looseObject({
    condense_id: z.string(),
    /** The model context before this condense (Undo condense puts it back). */
    before: ModelContext.nullable(),
    context: ContextSize,
    /** The summary calls' ledger entry. */
    usage: Usage.nullable(),
    cost_usd: z.number().nullable(),
    /** Set when this checkpoint undoes a condense instead of making one. */
    undo_of: z.string().nullable().optional(),
  }),
  run_terminal: z.looseObject({
    state: RunState,
    final_text: z.string(),
    requested_model: z.string(),
    normalized_model: z.string(),
    provider_adapter: z.string(),
    terminal_result: z.unknown(),
  }),
} satisfies Record<Phase, z.ZodType>;
export type PhasePayload<P extends Phase> = z.infer<(typeof PhasePayloads)[P]>;

// ── checkpoint record ──────────────────────────────────────────────────────────────────────────
export const CheckpointRef = z.object({ run_id: RunId, seq: z.number().int().positive() });
export type CheckpointRef = z.infer<typeof CheckpointRef>;

export const CheckpointRecord = z.object({
  run_id: RunId,
  thread_id: z.string(),
  schema_version: z.number().int().positive(),
  phase: Phase,
  /** Monotonic per run, from 1, no gaps. */
  seq: z.number().int().positive(),
  /** The checkpoint before this one: same run seq-1, the fork source for a fork's first, null for a run's first. */
  parent: CheckpointRef.nullable(),
  timestamp_ms: z.number().int(),
  step: z.number().int().nonnegative(),
  /** Phase payload (PhasePayloads[phase]). */
  payload: z.record(z.string(), z.unknown()),
  /** Present on SNAPSHOT_PHASES (and wherever the runner passed a snapshot): the header; lists live in the log. */
  snapshot: SnapshotHeader.nullable(),
});
export type CheckpointRecord = z.infer<typeof CheckpointRecord>;

// ── approvals and effects ──────────────────────────────────────────────────────────────────────
/** `external`: an MCP server's tool or one of VS Code's (`vscode.lm.tools`): a side effect of unknown kind. */
export const ToolCategory = z.enum(['read', 'write', 'command', 'subagent', 'external']);
export type ToolCategory = z.infer<typeof ToolCategory>;

/** Who made a decision and from where: a person, on a machine, in a VS Code window or the command line. */
export const DecidedBy = z.object({
  /** The operating system's user name of whoever decided. */
  user: z.string().max(256),
  host: z.string().max(256),
  via: z.enum(['window', 'cli']),
  /** The VS Code window's session (via `window`). */
  window_id: z.string().max(256).optional(),
});
export type DecidedBy = z.infer<typeof DecidedBy>;

/**
 * What an OS sandbox refused a command (runner/sandbox/report.ts): the hosts the proxy refused, the
 * paths a write was refused at (workspace-relative inside it), a unix socket, the process limit.
 */
export const SandboxBlocked = z.object({
  domains: z.array(z.string()).max(50),
  writes: z.array(z.string()).max(20),
  unix_sockets: z.boolean(),
  process_limit: z.boolean(),
});
export type SandboxBlocked = z.infer<typeof SandboxBlocked>;

/**
 * More access for a command the sandbox blocked, granted by the user: these domains (for the rest of
 * the run; `always`: the user's setting was extended too), or one run outside the sandbox.
 */
export const SandboxAccess = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('domains'), domains: z.array(z.string().min(1)).min(1).max(50), always: z.boolean() }),
  z.object({ kind: z.literal('unsandboxed') }),
]);
export type SandboxAccess = z.infer<typeof SandboxAccess>;

export const ApprovalDecision = z.object({
  kind: z.enum(['approve', 'reject', 'approve_edited']),
  /** approve of a retry (Approval.retry): the access the retry runs with. */
  access: SandboxAccess.optional(),
  /** Reject: the reason the model sees. */
  reason: z.string().nullable(),
  /** approve_edited: the arguments that will run, and their hash. */
  arguments: z.unknown().optional(),
  input_hash: z.string().nullable(),
  decided_ms: z.number().int(),
  /** Who decided (absent: the runner closed it itself, or a record from before this was kept). */
  by: DecidedBy.optional(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const Approval = z.object({
  run_id: RunId,
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  category: ToolCategory,
  arguments: z.unknown(),
  input_hash: z.string(),
  requested_ms: z.number().int(),
  /** An effect intent without a result was found on resume: the call may already have run. */
  uncertain: z.boolean(),
  /** Why approval is needed, for the UI ("write tools ask by policy", …). */
  reason: z.string(),
  /**
   * The call ran in the sandbox and was blocked: the approval is for running it again (its attempt
   * number) with more access. Rejected, the model gets the blocked result.
   */
  retry: z.object({ attempt: z.number().int().min(2), blocked: SandboxBlocked }).optional(),
  decision: ApprovalDecision.nullable(),
});
export type Approval = z.infer<typeof Approval>;

export const EffectResult = z.object({
  output: z.string(),
  output_hash: z.string(),
  is_error: z.boolean(),
  /** Content-addressed blob holding the full output when `output` was truncated. */
  blob: z.string().nullable(),
  /** An external tool's exact result as JSON (an MCP `CallToolResult`: text, images, resources, structured content), in a blob. */
  raw_blob: z.string().nullable().optional(),
  /** A sandboxed command: what the sandbox refused it (absent: nothing, or not sandboxed). */
  blocked: SandboxBlocked.optional(),
  finished_ms: z.number().int(),
});
export type EffectResult = z.infer<typeof EffectResult>;

/**
 * Where a command ran: in the OS sandbox under a profile (the sha256 of its canonical description —
 * workspace mode, domains, limits, extra paths — and that description in a line), or outside it
 * (why: the allow list, the user's approval, access granted for one run).
 */
export const SandboxRun = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sandboxed'), profile: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('unsandboxed'), reason: z.string() }),
]);
export type SandboxRun = z.infer<typeof SandboxRun>;

// ── the file journal (file-changing tools and commands) ──────────────────────────────────────
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * One version of a workspace file. `file`: its bytes' sha256 and size, and the blob holding them —
 * as the text itself when the bytes are UTF-8 that round-trips exactly (`utf8`, so the blob name is
 * the bytes' sha256 and identical content is stored once), else as base64 (`base64`, binary files);
 * `blob` null = not kept (over the size cap): comparable, not restorable. `absent`: no file there.
 * `unknown`: not observed (the reason says why), so never restored to. A version too large to keep
 * is hashed as a stream, never read whole (its `encoding` then says nothing).
 */
export const FileVersion = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('absent') }),
  z.object({
    kind: z.literal('file'),
    sha256: Sha256Hex,
    size: z.number().int().nonnegative(),
    blob: Sha256Hex.nullable(),
    encoding: z.enum(['utf8', 'base64']),
    /** Permission bits (e.g. 0o755): a file the restore re-creates gets them back. Absent in older records: the default. */
    mode: z.number().int().min(0).max(0o7777).optional(),
  }),
  z.object({ kind: z.literal('unknown'), reason: z.string() }),
]);
export type FileVersion = z.infer<typeof FileVersion>;
export type FileContentVersion = Extract<FileVersion, { kind: 'file' }>;

/** What one tool call did to one workspace file ('/'-separated path relative to the workspace root). */
export const FileChange = z.object({ path: z.string().min(1), before: FileVersion, after: FileVersion });
export type FileChange = z.infer<typeof FileChange>;

/** How a command's before/after scan went: it may stop at its caps, and then says so. */
export const FileScan = z.object({
  files: z.number().int().nonnegative(),
  ms: z.number().nonnegative(),
  complete: z.boolean(),
  /** Why the scan is incomplete or what it could not see, for the user ("stopped after 200,000 files"). */
  note: z.string().nullable(),
});
export type FileScan = z.infer<typeof FileScan>;

export const Effect = z.object({
  run_id: RunId,
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  input_hash: z.string(),
  /** `${run_id}/${step}/${tool_call_id}`, passed to the tool. */
  idempotency_key: z.string(),
  side_effecting: z.boolean(),
  intent_ms: z.number().int(),
  /** The process a command started (recorded after the intent): on resume, a live one is waited for, not re-run. */
  process: z
    .object({ pid: z.number().int().positive(), hostname: z.string(), started_ms: z.number().int() })
    .nullable()
    .optional(),
  result: EffectResult.nullable(),
  /** The newest checkpoint when the intent was written: the call happened after it (restore to a checkpoint reverses calls with seq >= it). */
  checkpoint_seq: z.number().int().nonnegative().optional(),
  /** The file journal: pre-images from the intent (after = unknown until the result), then what the call changed. */
  files: z.array(FileChange).optional(),
  /** A command's scan of the workspace (absent for tools that name the files they write). */
  file_scan: FileScan.optional(),
  /**
   * Set on the record that withdraws an intent written ahead for a call that then never started (the
   * batch stopped before it): the run holds no effect for the call from then on, so resume plans it
   * afresh instead of asking whether it ran. (A reader older than this field keeps the intent and asks.)
   */
  withdrawn_ms: z.number().int().optional(),
  /** A command: where it ran (set with the intent). Absent in older records and for other tools. */
  sandbox: SandboxRun.optional(),
  /**
   * Earlier attempts of the call, oldest first: it ran in the sandbox, was blocked, and the user
   * approved running it again with more access (Approval.retry). `files` covers every attempt.
   */
  attempts: z
    .array(z.object({ intent_ms: z.number().int(), sandbox: SandboxRun.optional(), result: EffectResult }))
    .optional(),
});
export type Effect = z.infer<typeof Effect>;
export type EffectProcess = NonNullable<Effect['process']>;

// ── damage ─────────────────────────────────────────────────────────────────────────────────────
/** A tool call the lost part of a run's history held, as far as the damaged files could still be read. */
export const LostCall = z.object({
  tool_call_id: z.string(),
  tool_name: z.string(),
  input_hash: z.string(),
  step: z.number().int().nonnegative(),
  /** Its result had been recorded too (it ran to the end), not only its intent. */
  finished: z.boolean(),
});
export type LostCall = z.infer<typeof LostCall>;

/**
 * Written into a run's log by whoever repaired it, after its history was found damaged and the run
 * fell back: what was lost, so resume never takes the fallback for the whole truth.
 */
export const Damage = z.object({
  ms: z.number().int(),
  /** The first bad (or missing) file, and why. */
  file: z.string(),
  reason: z.string(),
  lost_seqs: z.object({ from: z.number().int().positive(), to: z.number().int().positive() }).nullable(),
  /** Whether effect records (intents/results) were lost; null = unknown (treated as lost). */
  effects_lost: z.boolean().nullable(),
  /** The run's state before the damage, if known: a finished run stays finished. */
  state_before: RunState.nullable(),
  /** The step the run had reached; side-effecting calls up to it may have run. null = unknown. */
  step_before: z.number().int().nonnegative().nullable(),
  lost_calls: z.array(LostCall),
  /** Human-readable, for the run's state detail and the UI. */
  lost: z.string(),
});
export type Damage = z.infer<typeof Damage>;

// ── restores (auditable: the plan, what was applied, what was kept and why) ───────────────────
export const RESTORE_ACTIONS = [
  'reverted',
  'partly_reverted',
  'overwritten',
  'kept',
  'unrestorable',
  'unchanged',
] as const;
export const RestoreFile = z.object({
  path: z.string().min(1),
  action: z.enum(RESTORE_ACTIONS),
  /** For the user: why this action ("you changed it after the agent", "changed by `npm install`, cannot be restored"). */
  reason: z.string(),
  /** The file when the restore was planned, and what the restore left there. */
  from: FileVersion,
  to: FileVersion,
});
export type RestoreFile = z.infer<typeof RestoreFile>;

/** Where a record's files were brought (RestoreRecord `applied`): the checkout, and from which checkpoint. */
export const AppliedInto = z.object({
  /** The checkout, `host:folder`: for the user, and to find the bring-back to undo there. */
  checkout: z.string().min(1),
  /** The run's changes after this checkpoint were brought (0: from the run's start). */
  from_seq: z.number().int().nonnegative(),
  /** On an undo: the id of the record it undid. */
  undoes: z.string().nullable(),
});
export type AppliedInto = z.infer<typeof AppliedInto>;

export const RestoreRecord = z.object({
  /** `restore-<n>`, per run. */
  id: z.string().min(1),
  /** Files were restored to how they were at this checkpoint of the run. */
  to_seq: z.number().int().positive(),
  /** The newest checkpoint when the restore was applied: its writes are in the file journal after it. */
  checkpoint_seq: z.number().int().nonnegative(),
  created_ms: z.number().int(),
  files: z.array(RestoreFile),
  /** Set when the restore came with a fork ("and rewind the conversation", "fork with files"). */
  forked_run_id: RunId.nullable(),
  /** What the restore could not know (commands whose scan gave up, interrupted calls), for the user. */
  notes: z.array(z.string()),
  /**
   * Set when the record is of the run's work brought into a checkout (apply, *Bring back here*) or
   * of its undo: its files are that checkout's, not the run's own, so a restore's walk of the
   * journal leaves them out.
   */
  applied: AppliedInto.optional(),
});
export type RestoreRecord = z.infer<typeof RestoreRecord>;

// ── runs ───────────────────────────────────────────────────────────────────────────────────────
/** Written once when a run is created. */
export const RunMeta = z.object({
  run_id: RunId,
  thread_id: z.string(),
  title: z.string(),
  task: z.string(),
  agent_name: z.string(),
  model: z.string(),
  created_ms: z.number().int(),
  /** Fork source. */
  forked_from: CheckpointRef.nullable(),
  /**
   * A follow-up turn: the previous run's checkpoint this run continues from, in the same thread
   * (its first checkpoint's parent). Absent or null for a thread's first run and for forks.
   */
  continued_from: CheckpointRef.nullable().optional(),
  /** Parent run of a subagent (delegate tool). */
  parent_run_id: RunId.nullable(),
  /**
   * Set when the run came in by import: when, from which run id, and how many decisions the import
   * reset (calls without a recorded result wait for this user again), with notes for the user.
   */
  imported: z
    .object({
      ms: z.number().int(),
      from_run_id: z.string(),
      reset_decisions: z.number().int().nonnegative(),
      notes: z.array(z.string()),
    })
    .nullable()
    .optional(),
});
export type RunMeta = z.infer<typeof RunMeta>;

// ── inbox (messages the user sends while a run works) ──────────────────────────────────────────
/**
 * A user message for a run, durable from the moment it is sent and delivered into the conversation
 * at the run's next step boundary: in the same commit as the step_started checkpoint whose snapshot
 * holds it, so a message is never lost and never delivered twice.
 */
export const InboxMessage = z.object({
  run_id: RunId,
  id: z.string().min(1).max(100),
  text: z.string().min(1).max(100_000),
  posted_ms: z.number().int(),
  delivered: z
    .object({ seq: z.number().int().positive(), step: z.number().int().nonnegative(), ms: z.number().int() })
    .nullable(),
});
export type InboxMessage = z.infer<typeof InboxMessage>;

export const RunSummary = RunMeta.extend({
  state: RunState,
  /** Human-readable reason for the state (error message, budget hit, corruption report). */
  state_detail: z.string().nullable(),
  step: z.number().int().nonnegative(),
  last_seq: z.number().int().nonnegative(),
  last_phase: Phase.nullable(),
  updated_ms: z.number().int(),
  pending_approvals: z.number().int().nonnegative(),
  /** Present when the run's history was damaged: every damage record, merged (RunModel.damageSummary). */
  damage: Damage.nullable().optional(),
});
export type RunSummary = z.infer<typeof RunSummary>;

/**
 * The end of a run: what a view of its newest checkpoints needs, without the run's whole history
 * (core/end.ts computes it; a disk store keeps it with each compaction, read from the file's first
 * bytes). `records`: the newest checkpoints, oldest first. `snapshot`: the latest snapshot whose
 * `messages` are only those from index `messages_from` on (the ones the records' steps added, and the
 * assistant message before them), with their tool executions. `effects` and `approvals`: those of the
 * calls these messages hold, the waiting approvals, and the newest effect that changed files (where
 * a restore can start); `inbox` and `restores`: all; `restore_targets`: the older checkpoints those
 * restores went back to (a restore card names their step).
 */
export const RunEnd = z.object({
  records: z.array(CheckpointRecord),
  restore_targets: z.array(CheckpointRecord),
  snapshot: RuntimeSnapshot.nullable(),
  messages_from: z.number().int().nonnegative(),
  approvals: z.array(Approval),
  effects: z.array(Effect),
  inbox: z.array(InboxMessage),
  restores: z.array(RestoreRecord),
});
export type RunEnd = z.infer<typeof RunEnd>;
