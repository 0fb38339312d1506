// The command line's side of the workers: `handoff <run>` gives a run of the shared store to them,
// and approve / reject on a run that is theirs post the decision for the worker to record (it holds
// the run, or will take it for the decision) and wait for its verdict, instead of taking the run here.
import { localDecider } from '../runner/decider';
import type { DecisionInput } from '../runner/runner';
import { Store } from '../store/core/store';
import { InvalidInputError } from '../store/api/errors';
import type { CheckpointStore } from '../store/api/types';
import { CombinedStore } from '../store/pg/combined';
import { PgEngine } from '../store/pg/engine';
import type { PgStore } from '../store/pg/store';
import { SharedWorkers, type DecisionBody } from '../store/pg/workers';
import type { CliContext } from './compose';
import { resolveRun } from './inspect';
import { Exit } from './output';
import type { Out } from './out';

/** How long approve waits for a worker to record a decision before saying it is posted and left. */
const VERDICT_MS = 30_000;

/** The workers of the store's shared part; null when it has none (a local store only). */
export function workersOf(store: CheckpointStore): SharedWorkers | null {
  if (store instanceof CombinedStore) return store.workers;
  if (store instanceof Store && store.engine instanceof PgEngine) return new SharedWorkers(store as PgStore);
  return null;
}

export async function handOff(ctx: CliContext, out: Out, idOrPrefix: string): Promise<number> {
  const run = await resolveRun(ctx.store, idOrPrefix, ctx.where);
  const workers = workersOf(ctx.store);
  if (!workers || !ctx.store.isShared(run.run_id))
    throw new InvalidInputError(
      `run ${run.run_id} is in this machine's store: only a run of the shared store can be handed to the workers`,
    );
  const h = await workers.handOff(run.run_id, localDecider(ctx.owner.hostname, 'cli'));
  const holder = h.holder ? `; ${h.holder.label} holds it now and lets go at its next step` : '';
  out.result(
    out.json
      ? { run_id: run.run_id, handed_off: true, holder: h.holder }
      : `handed ${run.run_id} to the workers${holder}`,
  );
  return Exit.finished;
}

/**
 * Decisions on a run the workers have: posted, then each one's verdict awaited. null: the run is
 * not theirs (the caller decides it here as usual).
 */
export async function decideForWorkers(
  ctx: CliContext,
  out: Out,
  runId: string,
  decisions: DecisionInput[],
): Promise<number | null> {
  const workers = workersOf(ctx.store);
  if (!workers || !ctx.store.isShared(runId)) return null;
  const h = await workers.get(runId);
  if (!h || h.wantedBack) return null;
  const by = localDecider(ctx.owner.hostname, 'cli');
  await workers.watching();
  const posted = [];
  for (const d of decisions) posted.push(await workers.decide(runId, d, body(d), by));
  const verdicts = await Promise.all(posted.map((p) => workers.settled(p, VERDICT_MS).catch(() => p)));
  const refused = verdicts.filter((v) => v.outcome === 'refused');
  const open = verdicts.filter((v) => v.outcome === null);
  for (const v of verdicts) {
    if (v.outcome === 'recorded') out.progress(`${v.toolCallId}: recorded by the worker`);
    else if (v.outcome === 'refused') out.problem(`${v.toolCallId}: refused — ${v.outcomeDetail ?? 'no reason given'}`);
    else out.progress(`${v.toolCallId}: posted; no worker has taken it yet (it is recorded when one does)`);
  }
  if (out.json)
    out.result({
      run_id: runId,
      decisions: verdicts.map((v) => ({ tool_call_id: v.toolCallId, outcome: v.outcome, detail: v.outcomeDetail })),
    });
  if (refused.length > 0) return Exit.error;
  return open.length > 0 ? Exit.waiting : Exit.finished;
}

function body(d: DecisionInput): DecisionBody {
  if (d.kind === 'reject') return { kind: 'reject', reason: d.reason };
  if (d.kind === 'approve_edited') return { kind: 'approve_edited', argumentsJson: d.argumentsJson };
  return { kind: 'approve', ...(d.access ? { access: d.access } : {}) };
}
