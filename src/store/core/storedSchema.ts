// zod schemas of what the store writes (commit log, index, owner lock, export). The record types
// themselves live in api/schema.ts; these are the containers around them. Every read parses with them.
import { z } from 'zod';
import {
  PHASES,
  Approval,
  ChatMessage,
  CheckpointRecord,
  Damage,
  Effect,
  InboxMessage,
  RestoreRecord,
  RunMeta,
  RunState,
  RunSummary,
  SubagentExecutionRecord,
  ToolExecutionRecord,
  type ListField,
} from '../api/schema';

/** The item schema of each append-only snapshot list. */
export const LIST_ITEM: Record<ListField, z.ZodType> = {
  messages: ChatMessage,
  tool_executions: ToolExecutionRecord,
  subagent_executions: SubagentExecutionRecord,
};

/** The new tail of a list: list = list.slice(0, base).concat(items). base < old length = a rewind. */
export const ListTail = z.object({ base: z.number().int().nonnegative(), items: z.array(z.unknown()) });
export type ListTail = z.infer<typeof ListTail>;
export const ListTails = z.object({
  messages: ListTail.optional(),
  tool_executions: ListTail.optional(),
  subagent_executions: ListTail.optional(),
});
export type ListTails = z.infer<typeof ListTails>;

export const CommitOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('record'), record: CheckpointRecord, lists: ListTails.optional() }),
  z.object({ op: z.literal('approval'), approval: Approval }),
  z.object({ op: z.literal('effect'), effect: Effect }),
  z.object({ op: z.literal('state'), state: RunState, detail: z.string().nullable(), ms: z.number().int() }),
  z.object({ op: z.literal('inbox'), message: InboxMessage }),
  z.object({ op: z.literal('restore'), restore: RestoreRecord }),
  z.object({ op: z.literal('damage'), damage: Damage }),
]);
export type CommitOp = z.infer<typeof CommitOp>;
export type RecordOp = Extract<CommitOp, { op: 'record' }>;

/**
 * What a commit file's records are checked for when a run loads: the fields the run model uses.
 * The full CheckpointRecord schema runs when a record is first handed out (RunModel.verified):
 * validating thousands of snapshot headers up front was most of the resume time, and every file's
 * checksum is verified at load anyway, so only a writer bug could make a late check fail.
 */
export function isRecordSkeleton(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  const nat = (x: unknown) => typeof x === 'number' && Number.isInteger(x) && x >= 0;
  const snap = r.snapshot as Record<string, unknown> | null | undefined;
  return (
    typeof r.run_id === 'string' &&
    nat(r.seq) &&
    (r.seq as number) >= 1 &&
    nat(r.step) &&
    typeof r.timestamp_ms === 'number' &&
    typeof r.phase === 'string' &&
    (PHASES as readonly string[]).includes(r.phase) &&
    typeof r.payload === 'object' &&
    r.payload !== null &&
    (snap === null ||
      (typeof snap === 'object' &&
        nat(snap.message_count) &&
        nat(snap.tool_execution_count) &&
        nat(snap.subagent_execution_count)))
  );
}

const StoredRecord = z.custom<CheckpointRecord>(isRecordSkeleton, 'not a checkpoint record');
const StoredCommitOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('record'), record: StoredRecord, lists: ListTails.optional() }),
  z.object({ op: z.literal('approval'), approval: Approval }),
  z.object({ op: z.literal('effect'), effect: Effect }),
  z.object({ op: z.literal('state'), state: RunState, detail: z.string().nullable(), ms: z.number().int() }),
  z.object({ op: z.literal('inbox'), message: InboxMessage }),
  z.object({ op: z.literal('restore'), restore: RestoreRecord }),
  z.object({ op: z.literal('damage'), damage: Damage }),
]);

/**
 * One commit file. `first`..`last` are the commit numbers it covers: equal for a normal commit,
 * 1..N for a compacted one. The first commit of a run carries its meta (run.json can be rebuilt).
 */
export const CommitBody = z.object({
  run_id: z.string(),
  first: z.number().int().positive(),
  last: z.number().int().positive(),
  meta: RunMeta.optional(),
  ops: z.array(CommitOp),
});
export type CommitBody = z.infer<typeof CommitBody>;
/** The same, as read from disk (records checked for their skeleton; see isRecordSkeleton). */
export const StoredCommitBody = CommitBody.extend({ ops: z.array(StoredCommitOp) });

/** index.json: summaries plus how many commits each run had durably (a shorter log = files lost). */
export const IndexEntry = RunSummary.extend({ durable_commits: z.number().int().nonnegative() });
export type IndexEntry = z.infer<typeof IndexEntry>;
export const IndexBody = z.object({ runs: z.array(IndexEntry) });
export type IndexBody = z.infer<typeof IndexBody>;
/** A listing key: (updated_ms, run_id), newest first. */
export const ListKey = z.tuple([z.number(), z.string()]);
/**
 * index_head.json: the part of index.json an opening store lists from (the newest runs and every
 * unfinished one), with what index.json and the runs folder were when it was written — a head whose
 * index or folder changed since is not used.
 */
export const IndexHeadBody = z.object({
  index: z.object({ size: z.number(), mtime_ms: z.number(), ino: z.number() }),
  /** The runs folder's mtime when every run in it had its entry (null: not known to). */
  runs_mtime_ms: z.number().nullable(),
  /** Key of the oldest of the newest entries (null: the head is the whole index). */
  cutoff: ListKey.nullable(),
  runs: z.array(IndexEntry),
});
export type IndexHeadBody = z.infer<typeof IndexHeadBody>;

/** A run's tail witness (disk/witness.ts): what it held after its last acknowledged commit. */
export const TailWitness = z.object({
  /** Durable commits. */
  commits: z.number().int().nonnegative(),
  /** Last checkpoint seq and its step. */
  seq: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
  state: RunState,
  /** Effects with an intent, and with a result. */
  intents: z.number().int().nonnegative(),
  results: z.number().int().nonnegative(),
  ms: z.number().int(),
});
export type TailWitness = z.infer<typeof TailWitness>;

/** owner.lock: written once (link of a complete temp file); the heartbeat is the file's mtime. */
export const LockBody = z.object({
  owner_id: z.string(),
  pid: z.number().int(),
  hostname: z.string(),
  label: z.string(),
  acquired_ms: z.number().int(),
  heartbeat_ms: z.number().int(),
});
export type LockBody = z.infer<typeof LockBody>;

// ── export format ─────────────────────────────────────────────────────────────────────────────
export const EXPORT_FORMAT = 'agent-waypoints-run';

export const ExportList = z.object({
  seq: z.number().int().positive(),
  field: z.enum(['messages', 'tool_executions', 'subagent_executions']),
  base: z.number().int().nonnegative(),
  items: z.array(z.unknown()),
});

export const RunExportBody = z.object({
  meta: RunMeta,
  state: RunState,
  state_detail: z.string().nullable(),
  state_ms: z.number().int(),
  records: z.array(CheckpointRecord),
  /** Every list tail in order, keyed by the record that wrote it: replaying them rebuilds every snapshot. */
  lists: z.array(ExportList),
  approvals: z.array(Approval),
  effects: z.array(Effect),
  /** The run's inbox (absent in exports written before it existed). */
  inbox: z.array(InboxMessage).default([]),
  /** Restores of the run's files (absent in exports written before restores existed). */
  restores: z.array(RestoreRecord).optional(),
  /** Damage records (absent in exports of runs that never had any). */
  damage: z.array(Damage).optional(),
  /** Content-addressed blobs referenced by effects (outputs and file versions): sha256 → content. */
  blobs: z.record(z.string().regex(/^[0-9a-f]{64}$/), z.string()),
});
export type RunExportBody = z.infer<typeof RunExportBody>;

export const RunExport = z.object({
  format: z.literal(EXPORT_FORMAT),
  schema_version: z.number().int().positive(),
  /** sha256 of the body as canonical JSON (keys sorted), so re-serialising the export keeps it valid. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  body: RunExportBody,
});
export type RunExport = z.infer<typeof RunExport>;
