// Follow-up turns: a new run in the same thread that continues another run's conversation. The
// previous run stays as it was (immutable, resumable as before); the new run's first checkpoint
// refers to the checkpoint it continues from, like a fork's does, but the thread is the same.
import { copyJson } from '../core/copy';
import { CheckpointNotFoundError, InvalidInputError } from '../api/errors';
import * as J from '../core/journal';
import { RunModel } from '../core/runModel';
import type { Effect, RunMeta, RunSummary, RuntimeSnapshot } from '../api/schema';
import type { CommitOp } from '../core/storedSchema';
import type { ContinueRunInput, OwnerInfo, RunLease } from '../api/types';
import { checkRunId, prepareAppend } from '../core/validate';
import type { PortableHost } from './portable';

export async function continueRun(
  host: PortableHost,
  input: ContinueRunInput,
  owner: OwnerInfo,
): Promise<{ run: RunSummary; lease: RunLease }> {
  const from = input?.from;
  if (typeof from !== 'object' || from === null)
    throw new InvalidInputError('continueRun needs `from`, the checkpoint it continues');
  const srcId = checkRunId(from.run_id);
  const src = (await host.readHandle(srcId)).model;
  if (!Number.isInteger(from.seq) || from.seq < 1 || from.seq > src.lastSeq) {
    throw new CheckpointNotFoundError(
      `Run ${srcId} has no checkpoint ${String(from.seq)} to continue from (it has ${src.lastSeq}).`,
      srcId,
    );
  }
  if (!input.first?.snapshot)
    throw new InvalidInputError('the first checkpoint of a continued run must carry the snapshot it continues with');
  if (!Array.isArray(input.messages)) throw new InvalidInputError('messages must be an array');
  const now = host.now();
  const effects = carriedEffects(src.effects, input.first.snapshot);
  const build = (newId: string) => {
    const meta: RunMeta = {
      run_id: newId,
      thread_id: src.meta.thread_id,
      title: input.title,
      task: input.task,
      agent_name: input.agent_name,
      model: input.model,
      created_ms: now,
      forked_from: null,
      continued_from: { run_id: srcId, seq: from.seq },
      parent_run_id: null,
    };
    const model = new RunModel(meta);
    const ops: CommitOp[] = effects.map((e) => ({ op: 'effect' as const, effect: { ...e, run_id: newId } }));
    model.apply(ops);
    const first = prepareAppend(model, input.first, now);
    model.apply([first]);
    ops.push(first);
    for (const m of input.messages) {
      const posted = J.inboxPost(model, m, now);
      if (posted.op) {
        model.apply([posted.op]);
        ops.push(posted.op);
      }
    }
    return { meta, ops };
  };
  const r = await host.adoptNewRun(build, undefined, owner, { keepLease: true, renameOnCollision: true });
  return { run: r.run, lease: r.lease! };
}

/** The effect records of the calls a carried pending LLM response has not finished: they replay instead of running again. */
function carriedEffects(effects: ReadonlyMap<string, Effect>, snapshot: RuntimeSnapshot): Effect[] {
  const ids = new Set((snapshot.pending_llm_response?.message.tool_calls ?? []).map((c) => c.id));
  return [...effects.values()].filter((e) => ids.has(e.tool_call_id)).map((e) => copyJson(e));
}
