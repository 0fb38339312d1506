// The run view's transcript items: what the host sends and the webview renders. One zod schema per
// item kind (the source of truth for both sides); vscode-free, bundled into the webview too.
// A new kind is one more schema here, one builder case, one renderer.
import * as z from 'zod';

const Key = z.string().min(1).max(300);
const RunId = z.string().min(1).max(100);

export const TurnItem = z.object({
  kind: z.literal('turn'),
  key: Key,
  runId: RunId,
  turn: z.number().int().positive(),
  title: z.string(),
  continued: z.boolean(),
});
export const UserItem = z.object({
  kind: z.literal('user'),
  key: Key,
  runId: RunId,
  text: z.string(),
  queued: z.boolean(),
});
export const AssistantItem = z.object({
  kind: z.literal('assistant'),
  key: Key,
  runId: RunId,
  step: z.number().int(),
  text: z.string(),
  reasoning: z.string().nullable(),
  /** The run's final answer. */
  final: z.boolean(),
});

export const TOOL_STATUSES = [
  'done',
  'error',
  'running',
  'waiting',
  'awaiting',
  'rejected',
  'interrupted',
  'not-run',
] as const;
export const ToolApproval = z.object({
  pending: z.boolean(),
  inputHash: z.string(),
  /** Why approval is needed (policy text). */
  reason: z.string(),
  decision: z.enum(['approved', 'rejected', 'edited']).nullable(),
  decisionReason: z.string().nullable(),
  /** Who decided and from where, as the card shows it ("approved by alice@laptop (window)"). */
  decidedBy: z.string().optional(),
  /** The sandbox blocked the command: the approval is to run it again with more access (its answers differ). */
  retry: z
    .object({ domains: z.array(z.string()), writes: z.array(z.string()), unixSockets: z.boolean() })
    .nullable()
    .default(null),
});
export const ToolItem = z.object({
  kind: z.literal('tool'),
  key: Key,
  runId: RunId,
  step: z.number().int(),
  toolCallId: z.string(),
  name: z.string(),
  category: z.enum(['read', 'write', 'command', 'subagent', 'external']).nullable(),
  /** "edit_file src/slugify.js", "run_command npm test". */
  title: z.string(),
  args: z.array(z.object({ name: z.string(), value: z.string() })),
  /** The arguments as the editor of "Edit arguments…" holds them (cut, with a note, when too long to edit). */
  argumentsJson: z.string(),
  /** Whole in `argumentsJson`: offered for editing. */
  argumentsEditable: z.boolean().default(true),
  status: z.enum(TOOL_STATUSES),
  /** The result, cut to a few KB; `outputChars` says how long the whole is ("show all"). */
  output: z.string().nullable(),
  outputChars: z.number().int().nonnegative(),
  exitCode: z.number().int().nullable(),
  durationMs: z.number().nullable(),
  replayed: z.boolean(),
  uncertain: z.boolean(),
  approval: ToolApproval.nullable(),
  /** Unified diff lines of an edit (`+`, `-`, ` `, `@@`). */
  diff: z.array(z.string()).nullable(),
  /** A tool of an MCP server or of VS Code's (its approval offers "Always allow"). */
  external: z.boolean().default(false),
  /** Its exact result is kept (images, resources, structured content): the card asks for it (toolResult). */
  rich: z.boolean().default(false),
  /** The latest progress the tool reported while it runs ("2 of 5 — copying"). */
  progress: z.string().nullable().default(null),
  /** A command: where it ran ("in the sandbox: workspace writable · network: none · …", "outside the sandbox: …"). */
  sandbox: z.string().nullable().default(null),
  /** The first workspace files the call changed (the file journal), and how many it changed in all. */
  changedFiles: z.array(z.string()).max(20).default([]),
  changedFilesTotal: z.number().int().nonnegative().default(0),
});
export const WaypointItem = z.object({
  kind: z.literal('waypoint'),
  key: Key,
  runId: RunId,
  step: z.number().int(),
  /** A one-line summary: "edit_file src/slugify.js · approved". */
  summary: z.string(),
  phases: z.array(z.object({ seq: z.number().int(), phase: z.string() })),
  /** The checkpoint "here" names: the step's first (files and conversation as the step began); null: none yet. */
  seq: z.number().int().positive().nullable(),
  /** The file journal holds changes after `seq`: "Restore files to here" has something to restore. */
  filesAfter: z.boolean(),
  /** The run executes in this window now (its files cannot be restored until it stops). */
  running: z.boolean(),
});
export const StatusItem = z.object({
  kind: z.literal('status'),
  key: Key,
  runId: RunId,
  state: z.string(),
  detail: z.string().nullable(),
  resumable: z.boolean(),
});

/** A restore of the run's files (its audit record), after the checkpoint it followed. */
export const RestoreItem = z.object({
  kind: z.literal('restore'),
  key: Key,
  runId: RunId,
  restoreId: z.string().min(1).max(200),
  toSeq: z.number().int().positive(),
  /** The step of checkpoint `toSeq`; null when that checkpoint is not in the run's list. */
  toStep: z.number().int().nullable(),
  createdMs: z.number().int(),
  /** "2 restored · 1 kept" (summary.ts's restoreCounts). */
  counts: z.string(),
  /** The first files of the record: what happened to each, and why. */
  files: z.array(z.object({ path: z.string(), action: z.string(), what: z.string(), reason: z.string() })),
  /** Files of the record not in `files` (the details document lists them all). */
  moreFiles: z.number().int().nonnegative(),
  notes: z.array(z.string()),
  forkedRunId: RunId.nullable(),
  /** The restore wrote something, so restoring to the checkpoint it followed undoes it. */
  undoable: z.boolean(),
});

/** "Condensed here": from this step on the model saw a summary in place of older turns (the history stays above). */
export const CondenseItem = z.object({
  kind: z.literal('condense'),
  key: Key,
  runId: RunId,
  step: z.number().int(),
  condenseId: z.string().min(1).max(200),
  /** The post_condense checkpoint. */
  seq: z.number().int().positive(),
  summary: z.string(),
  /** Messages head+1 … through were summarized. */
  from: z.number().int().nonnegative(),
  through: z.number().int().nonnegative(),
  /** The request's tokens before and after, against the window. */
  tokensBefore: z.number().int().nonnegative().nullable(),
  tokensAfter: z.number().int().nonnegative(),
  window: z.number().int().positive(),
  reason: z.string(),
  /** Undone later: the model saw the previous context again. */
  undone: z.boolean(),
  /** The model's current context holds this condense and the run is stopped: Undo condense applies. */
  undoable: z.boolean(),
});

export const TranscriptItem = z.discriminatedUnion('kind', [
  TurnItem,
  UserItem,
  AssistantItem,
  ToolItem,
  WaypointItem,
  StatusItem,
  RestoreItem,
  CondenseItem,
]);
export type CondenseItem = z.infer<typeof CondenseItem>;
export type TranscriptItem = z.infer<typeof TranscriptItem>;
export type ToolItem = z.infer<typeof ToolItem>;
export type WaypointItem = z.infer<typeof WaypointItem>;
export type RestoreItem = z.infer<typeof RestoreItem>;
export type ItemKind = TranscriptItem['kind'];

/** Per item, what the webview needs before the item itself: its key and a height estimate (px). */
export const OutlineEntry = z.tuple([Key, z.number().int().nonnegative()]);
export type OutlineEntry = z.infer<typeof OutlineEntry>;

/** Waypoint actions: open a checkpoint, fork from it, restore the files to it. */
export const WAYPOINT_ACTIONS = ['openCheckpoint', 'forkHere', 'restoreFiles'] as const;
export type WaypointAction = (typeof WAYPOINT_ACTIONS)[number];

/** Run actions offered in the header, when they apply. */
export const RUN_ACTIONS = [
  'cancel',
  'resume',
  'continueInBackground',
  'bringBack',
  'fork',
  'export',
  'openInTree',
] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

/** A restore card's actions: undo it (restore to the checkpoint it followed), its details, the fork it made. */
export const RESTORE_ACTIONS = ['undo', 'showDetails', 'openFork'] as const;
export type RestoreAction = (typeof RESTORE_ACTIONS)[number];

export const WAYPOINT_HEIGHT = 30;

/** A tool card's height: one line, or open with its approval controls (the arguments shown, as JSON). */
export function toolCardHeight(pendingArgumentsJson: string | null): number {
  return pendingArgumentsJson === null ? 40 : 260 + 18 * Math.min(lines(pendingArgumentsJson), 16);
}

function lines(s: string, width = 90): number {
  return s.split('\n').reduce((n, l) => n + Math.max(1, Math.ceil(l.length / width)), 0);
}

/** A height estimate before the item is measured (px), from its kind and text length. */
export function estimateHeight(item: TranscriptItem): number {
  switch (item.kind) {
    case 'turn':
      return 44;
    case 'user':
      return 36 + 20 * Math.min(lines(item.text), 40);
    case 'assistant':
      return 24 + 21 * Math.min(lines(item.text), 200) + (item.reasoning ? 28 : 0);
    case 'tool':
      return toolCardHeight(item.approval?.pending ? item.argumentsJson : null);
    case 'waypoint':
      return WAYPOINT_HEIGHT;
    case 'status':
      return 64;
    case 'restore':
      return 92 + 20 * item.files.length + 20 * item.notes.length;
    case 'condense':
      return 40;
  }
}
