// Contract cases for follow-up turns and the inbox (part of contract.ts's suite, kept apart for size):
// every backend must deliver a message exactly once and continue a run in the same thread.
import assert from 'node:assert/strict';
import { CheckpointNotFoundError, InvalidInputError, StoreConflictError } from '../../../src/store/api/errors';
import type { ChatMessage } from '../../../src/store/api/schema';
import type { TestStore } from './contract';
import * as h from './helpers';

export interface TurnsContext {
  store(): TestStore;
  openStore(opts?: { deferMs?: number }): Promise<TestStore>;
  runWithStep(
    s?: TestStore,
  ): Promise<{ runId: string; lease: { release(): Promise<void> }; post: ReturnType<typeof h.snapshot> }>;
}

export function turnsContract(c: TurnsContext): void {
  it('keeps an inbox: durable at once, idempotent per id, delivered once with the checkpoint that holds it', async () => {
    const s = await c.openStore({ deferMs: 60_000 });
    const { runId, post } = await c.runWithStep(s);
    const first = await s.postMessage(runId, { id: 'm1', text: 'also add a test' });
    assert.equal(first.delivered, null);
    assert.deepEqual(
      await s.postMessage(runId, { id: 'm1', text: 'also add a test' }),
      first,
      'a retried send is stored once',
    );
    await h.rejects(s.postMessage(runId, { id: 'm1', text: 'something else' }), StoreConflictError);
    await h.rejects(s.postMessage(runId, { text: '' }), InvalidInputError);
    const second = await s.postMessage(runId, { text: 'and update the README' });
    const other = await c.openStore();
    assert.deepEqual(
      (await other.listInbox(runId)).map((m) => m.text),
      ['also add a test', 'and update the README'],
      'durable before postMessage resolves, in order',
    );

    const messages: ChatMessage[] = [
      ...post.messages,
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      { role: 'user', content: first.text },
    ];
    const rec = await s.append(runId, { ...h.stepStarted(h.snapshot(2, messages)), deliver: ['m1'] });
    const delivered = (await other.listInbox(runId)).find((m) => m.id === 'm1')!;
    assert.deepEqual(delivered.delivered && { seq: delivered.delivered.seq, step: delivered.delivered.step }, {
      seq: rec.seq,
      step: 2,
    });
    assert.equal(
      (await other.latest(runId)).seq,
      rec.seq,
      'the delivering checkpoint is durable with the delivery (not write-behind)',
    );
    assert.deepEqual((await other.loadSnapshot(runId)).snapshot.messages.at(-1), {
      role: 'user',
      content: 'also add a test',
    });
    assert.deepEqual(
      (await s.listInbox(runId, { pendingOnly: true })).map((m) => m.id),
      [second.id],
    );
    await h.rejects(
      s.append(runId, { ...h.stepStarted(h.snapshot(3, messages)), deliver: ['m1'] }),
      StoreConflictError,
      /already delivered/,
    );
    await h.rejects(
      s.append(runId, { ...h.stepStarted(h.snapshot(3, messages)), deliver: ['nope'] }),
      StoreConflictError,
    );
    assert.equal((await s.latest(runId)).seq, rec.seq, 'a refused delivery writes no checkpoint');

    await s.compact(runId);
    const exported = await s.exportRun(runId);
    const again = await c.openStore();
    assert.deepEqual(await again.listInbox(runId), await s.listInbox(runId), 'compaction keeps the inbox');
    const imported = await again.importRun(exported, h.owner('importer'));
    assert.deepEqual(
      (await again.listInbox(imported.run_id)).map((m) => [m.text, m.delivered?.seq ?? null]),
      [
        ['also add a test', rec.seq],
        ['and update the README', null],
      ],
    );
  });

  it('continues a run as a new run in the same thread: first checkpoint refers to the previous run’s, effects carried, message queued', async () => {
    const s = c.store();
    const { runId, lease, post } = await c.runWithStep(s);
    await s.recordIntent(runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'write_file',
      input_hash: 'ih',
      side_effecting: true,
    });
    await s.recordResult(runId, 'call_1', { output: 'ok', output_hash: 'oh', is_error: false, blob: null });
    await s.recordIntent(runId, {
      tool_call_id: 'unrelated',
      step: 1,
      tool_name: 'read',
      input_hash: 'x',
      side_effecting: false,
    });
    await s.setRunState(runId, 'paused_budget', 'budget');
    await lease.release();
    const src = (await s.getRun(runId))!;
    const last = (await s.latest(runId)).seq;

    const { run, lease: newLease } = await s.continueRun(
      {
        from: { run_id: runId, seq: last },
        title: 'follow-up',
        task: 'now the docs',
        agent_name: 'coder',
        model: 'demo-model',
        first: { ...h.runStarted(), snapshot: post },
        messages: [{ id: 'f1', text: 'now the docs' }],
      },
      h.owner('w2'),
    );
    assert.notEqual(run.run_id, runId);
    assert.equal(run.thread_id, src.thread_id, 'the same conversation');
    assert.deepEqual(run.continued_from, { run_id: runId, seq: last });
    assert.equal(run.forked_from, null);
    assert.deepEqual(
      (await s.get(run.run_id, 1))?.parent,
      { run_id: runId, seq: last },
      'its first checkpoint refers to the previous run’s last',
    );
    assert.deepEqual((await s.loadSnapshot(run.run_id)).snapshot, post, 'resumable from its first checkpoint');
    assert.deepEqual(
      (await s.listEffects(run.run_id)).map((e) => [e.tool_call_id, e.result?.output]),
      [['call_1', 'ok']],
      'finished calls of the carried response replay',
    );
    assert.deepEqual(
      (await s.listInbox(run.run_id, { pendingOnly: true })).map((m) => m.text),
      ['now the docs'],
    );
    await s.append(run.run_id, h.preTools(1));
    await newLease.release();
    const other = await c.openStore();
    assert.deepEqual(
      (await other.getRun(run.run_id))?.continued_from,
      { run_id: runId, seq: last },
      'kept across a reopen',
    );
    assert.deepEqual(await other.getRun(runId), await s.getRun(runId), 'the previous run is unchanged');
    assert.equal((await other.latest(runId)).seq, last);

    const input = {
      title: 't',
      task: 't',
      agent_name: 'a',
      model: 'm',
      first: { ...h.runStarted(), snapshot: post },
      messages: [],
    };
    await h.rejects(
      s.continueRun({ ...input, from: { run_id: runId, seq: last + 1 } }, h.owner('x')),
      CheckpointNotFoundError,
      new RegExp(runId),
    );
    await h.rejects(
      s.continueRun({ ...input, from: { run_id: 'no-such-run', seq: 1 } }, h.owner('x')),
      CheckpointNotFoundError,
    );
    await h.rejects(
      s.continueRun({ ...input, from: { run_id: runId, seq: last }, first: h.runStarted() }, h.owner('x')),
      InvalidInputError,
    );
  });
}
