// Restores in the transcript model: a card per restore record at its place (after the step of the
// checkpoint it followed), saying what it did per file and why; waypoints say whether "Restore
// files to here" has anything to restore. Runs are made by the real runner against the scripted
// model server; restores are planned and recorded by the real restore code (runner/files).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointStore } from '../../../../src/store/api/types';
import type { RestoreItem, TranscriptItem, WaypointItem } from '../../../../src/views/run/items';
import { placeRestores } from '../../../../src/views/run/restores';
import { buildRunItems } from '../../../../src/views/run/transcript';
import { loadRunData } from '../../../../src/views/run/thread';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { productRestore } from '../../runner/files/journalSupport';
import { makeRunner } from '../../loop/support';
import { assertNewestIsTheEnd } from './support';

const call = (calls: { name: string; arguments: Record<string, unknown> }[]) => ({
  reply: { content: '(offline demo model) working', tool_calls: calls },
});
const SCENARIO: Scenario = {
  name: 'transcript-restores',
  description: 'offline demo model: two steps of edits, then an answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    call([
      { name: 'write_file', arguments: { path: 'a.txt', content: 'agent a\n' } },
      { name: 'write_file', arguments: { path: 'b.txt', content: 'agent b\n' } },
    ]),
    call([{ name: 'edit_file', arguments: { path: 'a.txt', old_text: 'agent a', new_text: 'agent a, edited' } }]),
    { reply: { content: '(offline demo model) Done.' } },
  ],
};
const idle = { isActive: () => false, runningCalls: () => new Set<string>() };
const kinds = (items: TranscriptItem[]) => items.map((i) => i.kind);
const waypoints = (items: TranscriptItem[]) => items.filter((i): i is WaypointItem => i.kind === 'waypoint');

async function items(store: CheckpointStore, runId: string): Promise<TranscriptItem[]> {
  return buildRunItems(await loadRunData(store, (await store.getRun(runId))!, 1, idle));
}

/** The product's restore action with the preview's default ticks (conflicts kept); resolves to its record. */
async function restore(store: CheckpointStore, runId: string, workspace: string, toSeq: number) {
  const record = await productRestore(store, workspace).run({ runId, seq: toSeq }, { rewind: false });
  assert.ok(record, `restored to #${toSeq}`);
  return record;
}

describe('run view: restores in the transcript', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: SCENARIO })));
  afterEach(async () => server.close());

  it('waypoints name their step’s first checkpoint and whether files changed after it', async () => {
    const { runner, store } = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const h = await runner.start({ task: 'Write two files' });
    assert.equal((await h.done).state, 'completed');
    const records = (await store.list(h.runId, { limit: 1000 })).reverse();
    const [w1, w2, w3] = waypoints(await items(store, h.runId));
    for (const w of [w1!, w2!, w3!])
      assert.equal(w.seq, records.find((r) => r.step === w.step)!.seq, `step ${w.step}: its first checkpoint`);
    assert.equal(records.find((r) => r.seq === w1!.seq)!.phase, 'step_started');
    assert.deepEqual(
      [w1!.filesAfter, w2!.filesAfter, w3!.filesAfter],
      [true, true, false],
      'the answer step changed nothing: nothing to restore to it',
    );
    assert.equal(w1!.running, false);
  });

  it('a restore made while the run waits is a card after that step, before the steps that followed; what it did per file and why', async () => {
    const { runner, store, workspace } = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } },
    });
    fs.writeFileSync(path.join(workspace, 'b.txt'), 'original b\n');
    const h = await runner.start({ task: 'Write two files' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const decideAll = async () => {
      const pending = await store.listApprovals(h.runId, { pendingOnly: true });
      return runner.decideApprovals(
        h.runId,
        pending.map((a) => ({ kind: 'approve' as const, toolCallId: a.tool_call_id, inputHash: a.input_hash })),
      );
    };
    assert.equal((await (await decideAll())!.done).state, 'awaiting_approval', 'step 2’s edit waits');
    const step1 = waypoints(await items(store, h.runId))[0]!;

    // The user changes b.txt; the restore to step 1 deletes the agent's a.txt and keeps b.txt.
    fs.writeFileSync(path.join(workspace, 'b.txt'), 'the user’s b\n');
    const record = await restore(store, h.runId, workspace, step1.seq!);
    assert.equal(fs.existsSync(path.join(workspace, 'a.txt')), false);

    // The run goes on: step 2's edit is approved (it fails: a.txt is gone), step 3 answers.
    await (await decideAll())!.done;
    const all = await items(store, h.runId);
    const card = all.find((i): i is RestoreItem => i.kind === 'restore')!;
    const at = all.indexOf(card);
    const [prev, next] = [all[at - 1], all[at + 1]];
    assert.ok(
      prev?.kind === 'tool' && prev.step === 2,
      'after step 2’s tool card (the restore followed its checkpoint)',
    );
    assert.ok(next?.kind === 'waypoint' && next.step === 3, 'before step 3');
    assert.deepEqual(
      {
        key: card.key,
        restoreId: card.restoreId,
        toSeq: card.toSeq,
        toStep: card.toStep,
        counts: card.counts,
        undoable: card.undoable,
        forked: card.forkedRunId,
      },
      {
        key: `${h.runId}:r:${record.id}`,
        restoreId: record.id,
        toSeq: step1.seq,
        toStep: 1,
        counts: '1 restored · 1 kept',
        undoable: true,
        forked: null,
      },
    );
    assert.deepEqual(
      card.files.map((f) => [f.path, f.what]),
      [
        ['a.txt', 'restored'],
        ['b.txt', 'kept'],
      ],
    );
    assert.match(card.files[1]!.reason, /changed/, 'why it was kept');
    assert.equal(new Set(all.map((i) => i.key)).size, all.length, 'keys are unique');
    await assertNewestIsTheEnd(store, h.runId, [3, 6, 9, 12, 15, 20, 30]);
  });

  it('restores after the run’s last step go at the end, oldest first; one before any step goes before the first waypoint', () => {
    const runId = 'r1';
    const base: TranscriptItem[] = [
      { kind: 'turn', key: 'r1:turn', runId, turn: 1, title: 't', continued: false },
      {
        kind: 'waypoint',
        key: 'r1:w:1',
        runId,
        step: 1,
        summary: 's',
        phases: [],
        seq: 2,
        filesAfter: true,
        running: false,
      },
      { kind: 'assistant', key: 'r1:a:2', runId, step: 1, text: 'x', reasoning: null, final: true },
    ];
    const records = [
      { seq: 1, step: 0 },
      { seq: 2, step: 1 },
      { seq: 3, step: 1 },
    ];
    const rec = (id: string, checkpoint_seq: number, created_ms: number) => ({
      id,
      to_seq: 2,
      checkpoint_seq,
      created_ms,
      files: [],
      forked_run_id: null,
      notes: [],
    });
    const out = placeRestores(
      base,
      [rec('restore-2', 3, 20), rec('restore-1', 3, 10), rec('restore-0', 1, 5)],
      records,
      (card): TranscriptItem => card,
    );
    assert.deepEqual(
      out.map((i) => i.key),
      ['r1:turn', 'r1:r:restore-0', 'r1:w:1', 'r1:a:2', 'r1:r:restore-1', 'r1:r:restore-2'],
    );
    const first = out[1] as RestoreItem;
    assert.deepEqual([first.counts, first.undoable, first.toStep], ['no files to change', false, 1]);
    assert.deepEqual(kinds(placeRestores(base, [], records, (card): TranscriptItem => card)), kinds(base));
  });
});
