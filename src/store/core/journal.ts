// The rules of the approval and effect journal, as pure functions of the run: what a request,
// decision, intent or result means given what the run already holds. The core writes the op.
import { StoreConflictError, InvalidInputError } from '../api/errors';
import type { RunModel } from './runModel';
import {
  Approval as ApprovalSchema,
  ApprovalDecision,
  FileChange,
  FileScan,
  InboxMessage,
  RestoreRecord,
  SandboxBlocked,
  SandboxRun,
  ToolCategory,
  type Approval,
  type CheckpointRecord,
  type Effect,
  type EffectProcess,
} from '../api/schema';
import type { CommitOp } from './storedSchema';
import type {
  NewApproval,
  NewEffectIntent,
  NewEffectResult,
  NewEffectRetry,
  NewInboxMessage,
  NewRestore,
} from '../api/types';
import { parseInput } from './validate';
import { merged } from './copy';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** `op` undefined: nothing to write, `value` is what the run already holds (an idempotent repeat). */
export interface Outcome<V> {
  value: V;
  op?: CommitOp;
}

const NewApprovalInput = z.object({
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  category: ToolCategory,
  arguments: z.unknown(),
  input_hash: z.string(),
  uncertain: z.boolean(),
  reason: z.string(),
  retry: ApprovalSchema.shape.retry,
});
const NewIntent = z.object({
  tool_call_id: z.string().min(1),
  step: z.number().int().nonnegative(),
  tool_name: z.string(),
  input_hash: z.string(),
  side_effecting: z.boolean(),
  files: z.array(FileChange).optional(),
  sandbox: SandboxRun.optional(),
});
const RetryInput = z.object({ input_hash: z.string(), sandbox: SandboxRun.optional() });
const ResultInput = z.object({
  output: z.string(),
  output_hash: z.string(),
  is_error: z.boolean(),
  blob: z.string().nullable(),
  raw_blob: z.string().nullable().optional(),
  blocked: SandboxBlocked.optional(),
  files: z.array(FileChange).optional(),
  file_scan: FileScan.optional(),
});
const RestoreInput = RestoreRecord.omit({ id: true, created_ms: true, checkpoint_seq: true });
const DecisionInput = ApprovalDecision.omit({ decided_ms: true });

/** A pending request asked again (a reload re-shows it) returns it; a decided one can be asked again. */
export function approvalRequest(m: RunModel, input: NewApproval, now: number): Outcome<Approval> {
  const a = parseInput(NewApprovalInput, input, 'approval');
  const runId = m.meta.run_id;
  const prev = m.approval(a.tool_call_id);
  if (prev && prev.decision === null && prev.input_hash === a.input_hash) return { value: prev };
  if (prev && prev.decision === null)
    throw new StoreConflictError(
      `Run ${runId} already has a pending approval for ${a.tool_call_id} with other arguments.`,
      runId,
    );
  const approval: Approval = { run_id: runId, ...a, requested_ms: now, decision: null };
  return { value: approval, op: { op: 'approval', approval } };
}

/** Only a pending approval can be decided, once: stale ids and replayed decisions are refused. */
export function approvalDecision(
  m: RunModel,
  toolCallId: string,
  decision: Omit<ApprovalDecision, 'decided_ms'>,
  now: number,
): Outcome<Approval> {
  const d = parseInput(DecisionInput, decision, 'decision');
  if (d.kind === 'approve_edited' && (d.arguments === undefined || d.input_hash === null)) {
    throw new InvalidInputError('approve_edited needs the edited arguments and their input_hash');
  }
  const runId = m.meta.run_id;
  const prev = m.approval(toolCallId);
  if (!prev)
    throw new StoreConflictError(
      `Run ${runId} has no approval request for tool call ${JSON.stringify(toolCallId)}.`,
      runId,
    );
  if (prev.decision)
    throw new StoreConflictError(
      `The approval for ${toolCallId} in run ${runId} was already decided (${prev.decision.kind}).`,
      runId,
    );
  const approval: Approval = { ...prev, decision: { ...d, decided_ms: now } };
  return { value: approval, op: { op: 'approval', approval } };
}

/** An intent is written before a side effect; once a result exists the call is replayed, never re-run. */
export function effectIntent(m: RunModel, input: NewEffectIntent, now: number): Outcome<Effect> {
  const i = parseInput(NewIntent, input, 'effect intent');
  const runId = m.meta.run_id;
  const prev = m.effect(i.tool_call_id);
  if (prev?.result)
    throw new StoreConflictError(
      `Tool call ${i.tool_call_id} of run ${runId} already has a result; it must be replayed, not run again.`,
      runId,
    );
  // Re-recorded after a resume: the first intent's pre-images stand (they are from before the first attempt).
  if (prev && prev.input_hash === i.input_hash) return { value: prev };
  const { files, ...rest } = i;
  const effect = merged<Effect>(
    { run_id: runId },
    rest,
    {
      idempotency_key: `${runId}/${i.step}/${i.tool_call_id}`,
      intent_ms: now,
      result: null,
      checkpoint_seq: m.lastSeq,
    },
    files ? { files } : null,
  );
  return { value: effect, op: { op: 'effect', effect } };
}

/**
 * A call that ran in the sandbox and was blocked runs again with the access the user granted: only
 * with a retry approval approved after its result, for exactly the attempt that approval names. Its
 * result so far becomes an earlier attempt; the call has an intent without a result again, so a crash
 * while it runs asks whether it ran, as any intent does. The same retry again returns the record.
 */
export function effectRetry(m: RunModel, toolCallId: string, input: NewEffectRetry, now: number): Outcome<Effect> {
  const i = parseInput(RetryInput, input, 'effect retry');
  const runId = m.meta.run_id;
  const prev = m.effect(toolCallId);
  const approval = m.approval(toolCallId);
  const attempt = (prev?.attempts?.length ?? 0) + (prev?.result ? 2 : 1);
  if (prev && !prev.result && approval?.retry?.attempt === attempt && prev.input_hash === i.input_hash)
    return { value: prev };
  const conflict = (why: string) => new StoreConflictError(`Tool call ${toolCallId} of run ${runId} ${why}.`, runId);
  if (!prev?.result) throw conflict('has no result to retry');
  if (prev.input_hash !== i.input_hash) throw conflict('was retried with other arguments than it ran with');
  const d = approval?.decision;
  if (!approval?.retry || d?.kind !== 'approve' || d.decided_ms < prev.result.finished_ms)
    throw conflict('has no approved retry: it must be replayed, not run again');
  if (approval.retry.attempt !== attempt) throw conflict(`has no approved retry for attempt ${attempt}`);
  const earlier = {
    intent_ms: prev.intent_ms,
    ...(prev.sandbox ? { sandbox: prev.sandbox } : {}),
    result: prev.result,
  };
  const { sandbox: _, process: __, ...rest } = prev;
  const effect = merged<Effect>(
    rest,
    { intent_ms: now, result: null, attempts: [...(prev.attempts ?? []), earlier] },
    i.sandbox ? { sandbox: i.sandbox } : null,
  );
  return { value: effect, op: { op: 'effect', effect } };
}

/**
 * Withdraws an intent written ahead for a call that never started (its batch stopped first): the run
 * then holds no effect for the call. Refused once the call has a result or a process (it started).
 */
export function effectWithdrawn(m: RunModel, toolCallId: string, now: number): Outcome<Effect> {
  const runId = m.meta.run_id;
  const prev = m.effect(toolCallId);
  if (!prev)
    throw new StoreConflictError(
      `Tool call ${JSON.stringify(toolCallId)} of run ${runId} has no intent to withdraw.`,
      runId,
    );
  if (prev.result || prev.process)
    throw new StoreConflictError(
      `Tool call ${toolCallId} of run ${runId} has started (${prev.result ? 'it has a result' : 'it started a process'}); its intent cannot be withdrawn.`,
      runId,
    );
  const effect: Effect = { ...prev, withdrawn_ms: now };
  return { value: effect, op: { op: 'effect', effect } };
}

const ProcessInput = z.object({ pid: z.number().int().positive(), hostname: z.string(), started_ms: z.number().int() });

/** The process a side effect started, while it runs (no result yet): resume can wait for it instead of asking. */
export function effectProcess(m: RunModel, toolCallId: string, input: EffectProcess): Outcome<Effect> {
  const proc = parseInput(ProcessInput, input, 'effect process');
  const runId = m.meta.run_id;
  const prev = m.effect(toolCallId);
  if (!prev)
    throw new StoreConflictError(
      `Tool call ${JSON.stringify(toolCallId)} of run ${runId} has no intent; record the intent before running it.`,
      runId,
    );
  if (prev.result || (prev.process?.pid === proc.pid && prev.process.hostname === proc.hostname))
    return { value: prev };
  const effect: Effect = { ...prev, process: proc };
  return { value: effect, op: { op: 'effect', effect } };
}

/** A result needs its intent; the same result again is a no-op, a different one a conflict. */
export function effectResult(m: RunModel, toolCallId: string, input: NewEffectResult, now: number): Outcome<Effect> {
  const { files, file_scan, ...r } = parseInput(ResultInput, input, 'effect result');
  const runId = m.meta.run_id;
  const prev = m.effect(toolCallId);
  if (!prev)
    throw new StoreConflictError(
      `Tool call ${JSON.stringify(toolCallId)} of run ${runId} has no intent; record the intent before running it.`,
      runId,
    );
  if (prev.result) {
    if (prev.result.output_hash === r.output_hash) return { value: prev };
    throw new StoreConflictError(`Tool call ${toolCallId} of run ${runId} already has a different result.`, runId);
  }
  const effect = merged<Effect>(
    prev,
    { result: merged(r, { finished_ms: now }) },
    files ? { files } : null,
    file_scan ? { file_scan } : null,
  );
  return { value: effect, op: { op: 'effect', effect } };
}

const NewMessage = z.object({ id: InboxMessage.shape.id.optional(), text: InboxMessage.shape.text });

/** A message for the run's inbox. The same id sent again (a retried send) returns the first; another text under it is a conflict. */
export function inboxPost(m: RunModel, input: NewInboxMessage, now: number): Outcome<InboxMessage> {
  const i = parseInput(NewMessage, input, 'message');
  const runId = m.meta.run_id;
  const id = i.id ?? `msg-${now.toString(36)}-${randomBytes(4).toString('hex')}`;
  const prev = m.inbox.get(id);
  if (prev && prev.text === i.text) return { value: prev };
  if (prev) throw new StoreConflictError(`Run ${runId} already has a message ${id} with another text.`, runId);
  const message: InboxMessage = { run_id: runId, id, text: i.text, posted_ms: now, delivered: null };
  return { value: message, op: { op: 'inbox', message } };
}

/** Marks messages delivered by `record` (written in the same commit). Only waiting messages, each once. */
export function inboxDelivered(m: RunModel, ids: readonly string[], record: CheckpointRecord, now: number): CommitOp[] {
  const runId = m.meta.run_id;
  if (!Array.isArray(ids) || new Set(ids).size !== ids.length)
    throw new InvalidInputError('deliver must list distinct message ids');
  return ids.map((id) => {
    const prev = m.inbox.get(id);
    if (!prev) throw new StoreConflictError(`Run ${runId} has no message ${JSON.stringify(id)} to deliver.`, runId);
    if (prev.delivered)
      throw new StoreConflictError(
        `Message ${id} of run ${runId} was already delivered (checkpoint ${prev.delivered.seq}).`,
        runId,
      );
    return { op: 'inbox', message: { ...prev, delivered: { seq: record.seq, step: record.step, ms: now } } };
  });
}

/** A restore is numbered per run and must name a checkpoint the run has. */
export function restoreRecord(m: RunModel, input: NewRestore, now: number): Outcome<RestoreRecord> {
  const r = parseInput(RestoreInput, input, 'restore');
  const runId = m.meta.run_id;
  if (r.to_seq > m.lastSeq)
    throw new InvalidInputError(`Run ${runId} has no checkpoint ${r.to_seq} to restore to (its last is ${m.lastSeq}).`);
  const restore: RestoreRecord = {
    id: `restore-${m.restores.length + 1}`,
    checkpoint_seq: m.lastSeq,
    created_ms: now,
    ...r,
  };
  return { value: restore, op: { op: 'restore', restore } };
}
