// What an imported run may bring: its history, never a decision nobody made here. An export is a
// file anyone can edit and re-seal (its checksum is recomputable), so every byte of it is treated
// as attacker-controlled. Import keeps what happened (answered calls, their approvals, finished
// effects) and resets what could still act: an approval of a call that has no recorded result
// waits for this user again (undecided, whatever the file says), approvals of calls the run does
// not hold are dropped, the processes and idempotency keys of effects are this store's, not the
// file's, and every stored file path must be a plain relative path. The run says what was reset.
import { storedPathProblem } from '../../common/storedPath';
import { InvalidInputError } from '../api/errors';
import { isTerminalState, type Approval, type Effect, type RunMeta } from '../api/schema';
import { RunModel } from '../core/runModel';
import type { CommitOp, RunExportBody } from '../core/storedSchema';

/** The reason an imported call waits for the user. */
export const IMPORT_ASK_REASON =
  'This run was imported: a decision made elsewhere is not taken over, so this call waits for yours.';

/** Who decided a reset call where the run came from: kept as history in the reason, never as a decision. */
function decidedThere(a: Approval): string {
  const d = a.decision;
  if (!d?.by) return '';
  const verb = d.kind === 'reject' ? 'rejected' : 'approved';
  const via = d.by.via === 'cli' ? 'command line' : 'window';
  return ` Where it came from, ${d.by.user}@${d.by.host} (${via}) had ${verb} it.`;
}

/** Refuses an export whose file journal or restores name a path that is not plain and relative. */
export function checkStoredPaths(body: RunExportBody): void {
  const paths = [
    ...body.effects.flatMap((e) => (e.files ?? []).map((f) => ({ path: f.path, where: `effect ${e.tool_call_id}` }))),
    ...(body.restores ?? []).flatMap((r) => r.files.map((f) => ({ path: f.path, where: `restore ${r.id}` }))),
  ];
  for (const { path, where } of paths) {
    const problem = storedPathProblem(path);
    if (problem)
      throw new InvalidInputError(
        `Import refused: ${where} names the file ${JSON.stringify(path.slice(0, 200))}, which is outside the workspace (${problem}).`,
      );
  }
}

/**
 * The ops of an imported run with every undecided or in-flight decision reset, and what the run
 * keeps about its import (RunMeta.imported). `ops` are the run's ops as exported (importOps).
 */
export function distrustImported(
  meta: RunMeta,
  ops: CommitOp[],
  from: { runId: string; now: number },
): { meta: RunMeta; ops: CommitOp[] } {
  const model = new RunModel(meta);
  model.check(ops, true);
  model.apply(ops);
  const snap = model.snapshotAt(model.lastSeq)?.snapshot;
  const terminal = isTerminalState(model.state);
  const pending = new Set((snap?.pending_llm_response?.message.tool_calls ?? []).map((c) => c.id));
  const answered = new Set(
    (snap?.messages ?? []).flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []).map((c) => c.id)),
  );
  const asked = new Set<string>();
  const approval = (a: Approval): Approval | null => {
    const effect = model.effects.get(a.tool_call_id);
    if (effect?.result) return a; // finished here or there: replayed, never run again
    if (pending.has(a.tool_call_id) && !terminal) {
      asked.add(a.tool_call_id);
      const reason = IMPORT_ASK_REASON + decidedThere(a);
      return { ...a, decision: null, uncertain: a.uncertain || effect !== undefined, reason };
    }
    // A call of the conversation keeps its history; anything else could match a call the model makes later.
    if (answered.has(a.tool_call_id) && !pending.has(a.tool_call_id)) return a;
    if (a.decision) asked.add(a.tool_call_id);
    return null;
  };
  const effect = (e: Effect): Effect => {
    if (!e.result && pending.has(e.tool_call_id) && !terminal) asked.add(e.tool_call_id); // asked as "may already have run"
    // Processes are this machine's and keys this run's: a file must not point a resume at someone else's process.
    const { process: _fromTheFile, ...rest } = e;
    return { ...rest, idempotency_key: `${meta.run_id}/${e.step}/${e.tool_call_id}` };
  };
  const approvals = new Map([...model.approvals.values()].map((a) => [a.tool_call_id, approval(a)]));
  const waiting = [...approvals.values()].some((a) => a?.decision === null);
  const out: CommitOp[] = [];
  for (const op of ops) {
    if (op.op === 'approval') {
      const a = approvals.get(op.approval.tool_call_id);
      if (a) out.push({ ...op, approval: a });
    } else if (op.op === 'effect') out.push({ ...op, effect: effect(op.effect) });
    else if (op.op === 'state' && waiting && !terminal && op.state !== 'awaiting_approval')
      out.push({ ...op, state: 'awaiting_approval', detail: null });
    else out.push(op);
  }
  const n = asked.size;
  const notes =
    n > 0 ? [`${n} decision${n === 1 ? ' was' : 's were'} reset; you will be asked again.`] : ([] as string[]);
  return {
    meta: { ...meta, imported: { ms: from.now, from_run_id: from.runId, reset_decisions: n, notes } },
    ops: out,
  };
}
