// Undo condense: the next request gets the context from before the latest condense back. Written
// as a checkpoint like any other (post_condense with `undo_of`), so it is itself durable,
// resumable and forkable; the summary stays in the history. After an undo the run condenses again
// only when a request would not fit the window at all (`hold`), not at the threshold.
import { InvalidInputError } from '../../store/api/errors';
import { isTerminalState, type ModelContext } from '../../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';
import type { ToolDefinition } from '../provider/types';
import { EMPTY_CONTEXT, modelMessages, stepLookup } from './render';
import { counterFor } from './tokens';

export interface UndoCondenseDeps {
  store: CheckpointStore;
  owner: OwnerInfo;
  tools: readonly ToolDefinition[];
}

/** Returns the id of the condense undone. Throws InvalidInputError when there is none or the run cannot change. */
export async function undoCondense(deps: UndoCondenseDeps, runId: string): Promise<string> {
  const { store } = deps;
  const run = await store.getRun(runId);
  if (!run) throw new InvalidInputError(`Run ${runId} does not exist.`);
  if (isTerminalState(run.state))
    throw new InvalidInputError(
      'A finished run is never changed: fork from a checkpoint before the condense to continue with the full context.',
    );
  const lease = await store.acquire(runId, deps.owner);
  try {
    const { snapshot } = await store.loadSnapshot(runId);
    const current = snapshot.model_context;
    const condense = current?.condense;
    if (!condense)
      throw new InvalidInputError(`Run ${runId} has no condense to undo: the model sees its whole context.`);
    const records = await store.list(runId, { limit: Number.MAX_SAFE_INTEGER });
    const made = records.find(
      (r) => r.phase === 'post_condense' && r.payload.condense_id === condense.id && !r.payload.undo_of,
    );
    const before = (made?.payload.before as ModelContext | null | undefined) ?? null;
    const restored: ModelContext = { ...(before ?? { ...EMPTY_CONTEXT, stub_chars: current.stub_chars }), hold: true };
    // Keep what the provider taught us about the window.
    restored.learned_window = current.learned_window;
    snapshot.model_context = restored;
    const messages = modelMessages(snapshot.messages, restored, stepLookup(snapshot.tool_executions));
    const counter = counterFor(snapshot.requested_model);
    const lastSize = records.find((r) => r.phase === 'pre_llm' && r.payload.context)?.payload.context as
      { window: number; window_source: string } | undefined;
    await store.append(runId, {
      phase: 'post_condense',
      step: snapshot.step,
      payload: {
        condense_id: condense.id,
        undo_of: condense.id,
        before: current,
        context: {
          tokens: await counter.count(messages, deps.tools),
          window: lastSize?.window ?? 1,
          window_source: lastSize?.window_source ?? 'unknown',
          estimated: !counter.exact,
        },
        usage: null,
        cost_usd: null,
      },
      snapshot,
    });
    return condense.id;
  } finally {
    await lease.release();
  }
}
