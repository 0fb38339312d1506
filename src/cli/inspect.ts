// `list` and `show`: what the store holds, read only — nothing here takes a run's lease, so they
// work while a window or another command runs the run.
import { isTerminalState, RUN_STATES, type RunSummary } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import type { TerminalResult } from '../runner/runtime';
import {
  approvalJson,
  callLine,
  type CallJson,
  decidedText,
  holderJson,
  pendingText,
  runJson,
  runsTable,
  table,
  when,
} from './output';
import { UsageError, type Out } from './out';

/** A run by its id or a unique prefix of it (ids are long; a person types the first few characters). */
export async function resolveRun(store: CheckpointStore, idOrPrefix: string, where: string): Promise<RunSummary> {
  const exact = await store.getRun(idOrPrefix);
  if (exact) return exact;
  const matches = (await allRuns(store)).filter((r) => r.run_id.startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new UsageError(`no run ${idOrPrefix} in ${where}`);
  throw new UsageError(`${idOrPrefix} names ${matches.length} runs: ${matches.map((r) => r.run_id).join(', ')}`);
}

export async function allRuns(store: CheckpointStore): Promise<RunSummary[]> {
  const out: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listRuns({ limit: 200, ...(cursor ? { cursor } : {}) });
    out.push(...page.runs);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export async function list(store: CheckpointStore, out: Out, states: string[]): Promise<number> {
  const bad = states.filter((s) => !(RUN_STATES as readonly string[]).includes(s));
  if (bad.length > 0) throw new UsageError(`unknown state ${bad.join(', ')}: one of ${RUN_STATES.join(', ')}`);
  const runs = (await allRuns(store)).filter((r) => states.length === 0 || states.includes(r.state));
  if (out.json) out.result({ runs: runs.map(runJson) });
  else out.result(runsTable(runs));
  return 0;
}

/** Every call of the run with its status and who decided it, in the order they were made. */
export async function runCalls(store: CheckpointStore, runId: string): Promise<CallJson[]> {
  const approvals = new Map((await store.listApprovals(runId)).map((a) => [a.tool_call_id, approvalJson(a)]));
  const args = await snapshotArguments(store, runId);
  const calls: CallJson[] = [];
  for (const e of await store.listEffects(runId)) {
    if (e.withdrawn_ms !== undefined) continue;
    const decided = approvals.get(e.tool_call_id);
    approvals.delete(e.tool_call_id);
    // A command the sandbox blocked has a result and waits again: to run once more, with more access.
    const status =
      decided?.status === 'waiting'
        ? 'waiting'
        : !e.result
          ? 'running'
          : e.result.is_error
            ? 'failed'
            : decided?.status === 'rejected'
              ? 'rejected'
              : 'ran';
    calls.push({
      tool_call_id: e.tool_call_id,
      step: e.step,
      tool: e.tool_name,
      arguments: decided?.arguments ?? args.get(e.tool_call_id) ?? null,
      input_hash: e.input_hash,
      status,
      reason: decided?.reason ?? null,
      decided_by: decided?.decided_by ?? null,
      ...(decided?.sandbox_blocked ? { sandbox_blocked: decided.sandbox_blocked } : {}),
    });
  }
  calls.push(...approvals.values());
  return calls.sort((a, b) => a.step - b.step);
}

/** The arguments of the calls the latest snapshot's conversation holds (what auto-approved calls ran with). */
async function snapshotArguments(store: CheckpointStore, runId: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const loaded = await store.loadSnapshot(runId).catch(() => undefined);
  for (const m of loaded?.snapshot.messages ?? []) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const c of m.tool_calls) out.set(c.id, parseArgs(c.function.arguments));
  }
  return out;
}

function parseArgs(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export async function finalText(store: CheckpointStore, run: RunSummary): Promise<string | null> {
  if (!isTerminalState(run.state)) return null;
  const latest = await store.latest(run.run_id).catch(() => undefined);
  const result =
    latest?.phase === 'run_terminal' ? (latest.payload.terminal_result as TerminalResult | undefined) : undefined;
  return result?.final_text ?? null;
}

export async function show(store: CheckpointStore, out: Out, run: RunSummary): Promise<number> {
  const [calls, holder, answer] = await Promise.all([
    runCalls(store, run.run_id),
    store.owner(run.run_id),
    finalText(store, run),
  ]);
  const pending = calls.filter((c) => c.status === 'waiting');
  if (out.json) {
    out.result({ run: runJson(run), held_by: holderJson(holder), calls, pending, final_text: answer });
    return 0;
  }
  const head = table([
    ['  run', run.run_id],
    ['  state', run.state + (run.state_detail ? ` — ${run.state_detail}` : '')],
    ['  step', `${run.step}   model ${run.model}   updated ${when(run.updated_ms)}`],
    ...(holder ? [['  held by', `${holder.label} (pid ${holder.pid} on ${holder.hostname})`]] : []),
  ]);
  const rows = calls.map((c) => [
    `  ${c.step}`,
    c.tool_call_id,
    c.status,
    callLine(c.tool, c.arguments, 70),
    decidedText(c),
  ]);
  const parts = [run.title, head];
  if (rows.length > 0) parts.push('Calls:', table([['  STEP', 'CALL', 'STATUS', 'WHAT', 'DECIDED'], ...rows]));
  if (pending.length > 0) parts.push(pendingText(run.run_id, pending));
  if (answer) parts.push('Answer:', answer);
  out.result(parts.join('\n'));
  return 0;
}
