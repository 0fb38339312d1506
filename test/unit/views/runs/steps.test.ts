// The tree's step labels: a run made by the real runner against the scripted model server (memory
// store) is grouped by step and labelled from its records and approvals alone; the states a real
// run passes through briefly (working, waiting, replayed) are checked on records shaped like them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import type { CheckpointRecord, RunSummary } from '../../../../src/store/api/schema';
import { describeSteps, endOfSteps, groupBySteps } from '../../../../src/views/runs/steps';
import { makeRunner } from '../../loop/support';

const reply = (content: string | null, calls: { name: string; arguments: Record<string, unknown> }[] = []) => ({
  reply: { content, ...(calls.length ? { tool_calls: calls } : {}) },
});

const FOUR_STEPS: Scenario = {
  name: 'tree-steps',
  description: 'offline demo model: read, edit (approved), a command (rejected), answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    reply('Looking.', [
      { name: 'list_files', arguments: { path: '.' } },
      { name: 'read_file', arguments: { path: 'missing.txt' } },
    ]),
    reply('Editing.', [{ name: 'edit_file', arguments: { path: 'src/slugify.js', old_text: 'a', new_text: 'b' } }]),
    reply('Cleaning.', [{ name: 'run_command', arguments: { command: 'rm -rf build' } }]),
    reply('Done.'),
  ],
};

describe('runs tree: steps', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: FOUR_STEPS })));
  afterEach(async () => server.close());

  async function labelsOf(store: ReturnType<typeof makeRunner>['store'], runId: string) {
    const run = (await store.getRun(runId))!;
    const approvals = new Map((await store.listApprovals(runId)).map((a) => [a.tool_call_id, a]));
    return describeSteps(groupBySteps(await store.list(runId, { limit: 1000 })), { run, approvals });
  }

  it('labels each step of a real run with its calls and what came of them: auto, failed, approved, rejected, final answer', async () => {
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'ask', subagent: 'auto' } },
    });
    fs.mkdirSync(path.join(t.workspace, 'src'));
    fs.writeFileSync(path.join(t.workspace, 'src/slugify.js'), 'a\n');
    const h = await t.runner.start({ task: 'Fix slugify' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const waiting = await labelsOf(t.store, h.runId);
    assert.equal(waiting[0]!.label, 'Step 2 · edit_file src/slugify.js · waiting for approval');
    assert.equal(waiting[0]!.outcome, 'waiting');

    const [edit] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    const second = await t.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: edit!.tool_call_id, inputHash: edit!.input_hash },
    ]);
    assert.equal((await second!.done).state, 'awaiting_approval');
    const [command] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    const third = await t.runner.decideApprovals(h.runId, [
      { kind: 'reject', toolCallId: command!.tool_call_id, reason: 'keep the build', inputHash: command!.input_hash },
    ]);
    assert.equal((await third!.done).state, 'completed');

    const steps = await labelsOf(t.store, h.runId);
    assert.deepEqual(
      steps.map((s) => s.label),
      [
        'Step 4 · final answer',
        'Step 3 · run_command rm -rf build · rejected',
        'Step 2 · edit_file src/slugify.js · approved',
        'Step 1 · list_files ., read_file missing.txt · auto, 1 failed',
        'Start',
      ],
    );
    assert.deepEqual(
      steps.map((s) => s.outcome),
      ['final', 'rejected', 'approved', 'failed', 'start'],
    );
    assert.equal(steps[1]!.calls[0]!.reason, 'keep the build');
    // Every checkpoint is in exactly one step, oldest first inside it; a resume's run_started joins the step it continues.
    const all = steps.flatMap((s) => s.records.map((r) => r.seq)).sort((a, b) => a - b);
    assert.deepEqual(
      all,
      Array.from({ length: all.length }, (_, i) => i + 1),
    );
    for (const s of steps)
      assert.deepEqual(
        s.records.map((r) => r.seq),
        [...s.records.map((r) => r.seq)].sort((a, b) => a - b),
      );
    assert.deepEqual(
      steps[2]!.records.map((r) => r.phase),
      ['step_started', 'pre_llm', 'post_llm', 'run_started', 'pre_tool_batch', 'post_tool_batch'],
    );
  });
});

describe('runs tree: step states between checkpoints', () => {
  const run = (over: Partial<RunSummary> = {}): RunSummary => ({
    run_id: 'r1',
    thread_id: 'r1',
    title: 't',
    task: 't',
    agent_name: 'a',
    model: 'm',
    created_ms: 0,
    forked_from: null,
    parent_run_id: null,
    state: 'running',
    state_detail: null,
    step: 2,
    last_seq: 0,
    last_phase: null,
    updated_ms: 0,
    pending_approvals: 0,
    ...over,
  });
  let seq = 0;
  const rec = (
    step: number,
    phase: CheckpointRecord['phase'],
    over: { calls?: string[]; replayed?: number; failures?: number } = {},
  ): CheckpointRecord => ({
    run_id: 'r1',
    thread_id: 'r1',
    schema_version: 2,
    phase,
    seq: ++seq,
    parent: null,
    timestamp_ms: seq,
    step,
    payload: phase === 'post_tool_batch' ? { tool_calls_total: 1, tool_failures: over.failures ?? 0 } : {},
    snapshot:
      over.replayed === undefined
        ? null
        : ({
            replayed_effect_count: over.replayed,
            pending_llm_response: over.calls
              ? {
                  message: {
                    role: 'assistant',
                    content: null,
                    tool_calls: over.calls.map((c, i) => ({
                      id: `c${step}${i}`,
                      type: 'function',
                      function: { name: 'run_command', arguments: JSON.stringify({ command: c }) },
                    })),
                  },
                }
              : null,
          } as unknown as CheckpointRecord['snapshot']),
  });
  const newestFirst = (records: CheckpointRecord[]) => [...records].reverse();

  it('the latest step says what the run is doing or why it stopped; replayed calls are counted from the snapshots around them', () => {
    seq = 0;
    const records = [
      rec(0, 'run_started'),
      rec(1, 'step_started', { replayed: 0 }),
      rec(1, 'post_llm', { replayed: 0, calls: ['npm test', 'npm run lint'] }),
      rec(1, 'pre_tool_batch'),
      rec(1, 'post_tool_batch'),
      rec(2, 'step_started', { replayed: 2 }),
      rec(2, 'pre_llm'),
    ];
    const describe = (r: RunSummary) =>
      describeSteps(groupBySteps(newestFirst(records)), { run: { ...r, last_seq: seq }, approvals: new Map() });
    const live = describe(run());
    assert.deepEqual(
      live.map((s) => s.label),
      ['Step 2 · thinking…', 'Step 1 · run_command npm test, run_command npm run lint · auto, replayed', 'Start'],
    );
    assert.deepEqual(
      live.map((s) => s.outcome),
      ['working', 'replayed', 'start'],
    );
    assert.equal(describe(run({ state: 'paused_error' }))[0]!.label, 'Step 2 · paused: error');

    records.push(rec(2, 'post_llm', { replayed: 2, calls: ['a', 'b', 'c'] }), rec(2, 'pre_tool_batch'));
    const tools = describe(run());
    assert.equal(tools[0]!.label, 'Step 2 · run_command a, run_command b +1 · running tools…');
    assert.equal(
      describe(run({ state: 'interrupted' }))[0]!.label,
      'Step 2 · run_command a, run_command b +1 · interrupted',
    );
  });

  it('pages end on whole steps', () => {
    seq = 0;
    const records = newestFirst([
      rec(0, 'run_started'),
      rec(1, 'step_started'),
      rec(1, 'pre_llm'),
      rec(2, 'step_started'),
      rec(2, 'pre_llm'),
      rec(2, 'post_llm'),
    ]);
    assert.equal(endOfSteps(records, 1), 3, 'step 2 is the first three records');
    assert.equal(endOfSteps(records, 2), 5);
    assert.equal(endOfSteps(records, 3), -1, 'no more than three steps: the page may have cut the last one');
  });
});
