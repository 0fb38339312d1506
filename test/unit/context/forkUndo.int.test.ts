// A condense is a checkpoint like any other: a fork from before it gets the full pre-condense
// context back, and Undo condense gives the run's next request the context it had before.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer, type RequestRecord } from '../../fixtures/modelServer/server';
import { modelMessages, stepLookup } from '../../../src/runner/context/render';
import type { CheckpointRecord } from '../../../src/store/api/schema';
import { makeRunner, tmp } from '../loop/support';
import { loadRunData } from '../../../src/views/run/thread';
import { buildRunItems } from '../../../src/views/run/transcript';
import { runHeader } from '../../../src/views/run/header';
import type { CheckpointStore } from '../../../src/store/api/types';

const idle = { isActive: () => false, runningCalls: () => new Set<string>() };
async function markers(store: CheckpointStore, runId: string) {
  const run = (await store.getRun(runId))!;
  return buildRunItems(await loadRunData(store, run, 1, idle)).filter((i) => i.kind === 'condense');
}
import { longScenario, prepareWorkspace } from './longRun';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
const isSummary = (q: RequestRecord) => q.messages.some((m) => m.content?.startsWith('[Summary of the earlier'));
const budget = (steps: number) => ({ max_steps: steps, max_cost_usd: null, max_tokens: null, max_wall_ms: null });

describe('context management: fork from before a condense, Undo condense', function () {
  this.timeout(300_000);
  let server: ModelServer;
  before(async () => {
    server = await startModelServer({ scenario: longScenario(60), contextWindow: 16_384 });
  });
  after(async () => server?.close());

  async function runUntilCondensed(thresholdPct: number) {
    server.reset();
    const workspace = tmp('ctx-fork');
    prepareWorkspace(workspace);
    const t = makeRunner({ baseURL: server.url, workspace, policy: AUTO, deps: { context: { thresholdPct } } });
    // First find the step of the first condense, then stop a run right after it.
    const probe = await t.runner.start({ task: 'Work through every step of the long task.', budget: budget(70) });
    assert.equal((await probe.done).state, 'completed');
    const records = (await t.store.list(probe.runId, { limit: 100_000 })).reverse();
    const firstCondense = records.find((r) => r.phase === 'post_condense')!;
    assert.ok(firstCondense, 'the run condensed');
    return { ...t, runId: probe.runId, records, condenseStep: firstCondense.step, workspace };
  }

  it('a fork from the checkpoint before the condense sends the full pre-condense context', async () => {
    const t = await runUntilCondensed(80);
    const before: CheckpointRecord = t.records.find(
      (r) => r.phase === 'step_started' && r.step === t.condenseStep - 1,
    )!;
    const original = server.requests.filter((q) => !q.condense);
    const { run, lease } = await t.store.fork(t.runId, before.seq, t.runner.owner);
    await lease.release();
    server.reset();
    const fork = await t.runner.resume(run.run_id, { budget: { max_steps: t.condenseStep } });
    await fork.done;
    const next = server.requests.find((q) => !q.condense)!;
    assert.ok(!isSummary(next), 'no summary in the fork: the context from before the condense');
    const same = original.find((q) => q.position === next.position && !q.overflow)!;
    assert.deepEqual(next.raw_messages, same.raw_messages, 'exactly the request the run sent from that checkpoint');
    const snap = (await t.store.loadSnapshot(run.run_id)).snapshot;
    assert.ok(snap.messages.length >= next.message_count, 'every message of the checkpoint is in it');
  });

  it('Undo condense: the next request holds the previous context; the summary stays in the history', async () => {
    const t = await runUntilCondensed(60);
    server.reset();
    const h = await t.runner.start({
      task: 'Work through every step of the long task.',
      budget: budget(t.condenseStep),
    });
    assert.equal((await h.done).state, 'paused_budget');
    const paused = (await t.store.loadSnapshot(h.runId)).snapshot;
    assert.ok(paused.model_context?.condense, 'condensed before the pause');
    // The run view: a "condensed here" marker with the summary, which Undo condense applies to now.
    const [marker] = await markers(t.store, h.runId);
    assert.ok(
      marker?.kind === 'condense' && marker.undoable && !marker.undone && marker.summary.startsWith('Scripted summary'),
    );
    const header = await runHeader(t.store, (await t.store.getRun(h.runId))!, { active: false });
    assert.match(header.context?.label ?? '', /^context: \d+% of 16k$/);
    const undone = await t.runner.undoCondense(h.runId);
    const [after1] = await markers(t.store, h.runId);
    assert.ok(after1?.kind === 'condense' && after1.undone && !after1.undoable, 'the marker says undone');
    assert.equal(undone, paused.model_context.condense.id);
    const after = (await t.store.loadSnapshot(h.runId)).snapshot;
    assert.equal(after.model_context?.condense ?? null, null, 'the previous context has no condense');
    assert.equal(after.model_context?.hold, true);
    const expected = modelMessages(after.messages, after.model_context, stepLookup(after.tool_executions));
    server.reset();
    const resumed = await t.runner.resume(h.runId, { budget: { max_steps: t.condenseStep + 1 } });
    await resumed.done;
    const next = server.requests.find((q) => !q.condense)!;
    assert.ok(!isSummary(next), 'the next request has no summary');
    // The paused snapshot is the step's post_llm: its call's result (replayed from the journal on resume) follows.
    assert.deepEqual(
      next.messages.slice(0, expected.length),
      expected.map((m) => ({ role: m.role, content: m.content })),
      'the next request is the previous context',
    );
    assert.deepEqual(
      next.messages.slice(expected.length).map((m) => m.role),
      ['tool'],
      'then the result of the call that was pending',
    );
    const records = (await t.store.list(h.runId, { limit: 100_000 })).reverse();
    const undo = records.find((r) => r.phase === 'post_condense' && r.payload.undo_of)!;
    assert.equal(undo.payload.undo_of, undone);
    assert.ok(
      records.some((r) => r.phase === 'post_condense' && !r.payload.undo_of),
      'the condense itself stays in the history',
    );
    await assert.rejects(t.runner.undoCondense(h.runId), /no condense to undo/);
  });
});
