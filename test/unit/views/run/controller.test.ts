// The run view controller's restore requests (vscode-free): "Restore files to here", "Fork from
// here" and a restore card's actions reach the product's actions (src/actions, with a scripted
// user) only for a checkpoint the run has, with file changes after it, in a run this window may
// write; forged and stale ones are refused with the guard's reason before anything happens. A
// restore recorded while the view is open appears in it (the store's event).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { RestoreRecord } from '../../../../src/store/api/schema';
import { RunViewController, type RunViewDeps } from '../../../../src/views/run/controller';
import type { HostMessage } from '../../../../src/views/run/protocol';
import { threadRuns } from '../../../../src/views/run/thread';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../../fixtures/modelServer/scenario';
import { testActions } from '../../../support/actions';
import { productRestore } from '../../runner/files/journalSupport';
import { makeRunner } from '../../loop/support';

const SCENARIO: Scenario = {
  name: 'controller-restores',
  description: 'offline demo model: write a file, then answer',
  model: DEMO_MODEL_ID,
  subconversations: [],
  turns: [
    {
      reply: {
        content: '(offline demo model) writing',
        tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'agent a\n' } }],
      },
    },
    { reply: { content: '(offline demo model) Done.' } },
  ],
};

type Called = [string, ...unknown[]];

describe('run view controller: restore requests', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: SCENARIO })));
  afterEach(async () => server.close());

  async function openView(o: { trusted?: boolean } = {}) {
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const h = await t.runner.start({ task: 'Write a.txt' });
    assert.equal((await h.done).state, 'completed');
    const called: Called[] = [];
    const warnings: string[] = [];
    const ui = testActions({
      store: t.store,
      runner: t.runner,
      workspace: t.workspace,
      owner: t.runner.owner,
      trusted: () => o.trusted ?? true,
    });
    const deps: RunViewDeps = {
      store: t.store,
      runner: t.runner,
      threadRuns: (id) => threadRuns(t.store, id),
      actions: ui.actions,
      editor: {
        showDiff: async (...a) => void called.push(['showDiff', ...a]),
        openCheckpoint: async (...a) => void called.push(['openCheckpoint', ...a]),
        openRun: async (...a) => void called.push(['openRun', ...a]),
        exportRun: async (...a) => void called.push(['exportRun', ...a]),
        revealInTree: async (...a) => void called.push(['revealInTree', ...a]),
      },
      log: { info: () => undefined, warn: (m) => void warnings.push(m) },
    };
    const posted: HostMessage[] = [];
    const controller = new RunViewController((await t.store.getRun(h.runId))!.thread_id, h.runId, deps, (m) =>
      posted.push(m),
    );
    await controller.receive({ type: 'ready' });
    let id = 0;
    /** Sends a request as the webview does; resolves to the host's response. */
    const request = async (method: string, params: Record<string, unknown>) => {
      const requestId = ++id;
      await controller.receive({ type: 'request', id: requestId, method, params });
      const r = posted.find((m) => m.type === 'response' && m.id === requestId);
      assert.ok(r && r.type === 'response', `a response to ${method}`);
      return r;
    };
    const records = (await t.store.list(h.runId, { limit: 100 })).reverse();
    const stepStart = (step: number) => records.find((r) => r.step === step && r.phase === 'step_started')!.seq;
    return {
      ...t,
      ...ui,
      runId: h.runId,
      controller,
      called,
      warnings,
      posted,
      request,
      stepStart,
      lastSeq: records.at(-1)!.seq,
    };
  }

  /** A restore made elsewhere (the tree, the palette): the product's action, default ticks. */
  async function recordRestore(v: Awaited<ReturnType<typeof openView>>, toSeq: number): Promise<RestoreRecord> {
    const record = await productRestore(v.store, v.workspace).run({ runId: v.runId, seq: toSeq }, { rewind: false });
    assert.ok(record);
    return record;
  }

  it('Restore files to here and Fork from here reach the actions for a checkpoint with file changes after it', async () => {
    const v = await openView();
    const seq = v.stepStart(1);
    const file = path.join(v.workspace, 'a.txt');
    v.notices.answer(/^Restore files to this checkpoint$/, 'Restore files');
    assert.equal((await v.request('waypointAction', { runId: v.runId, seq, action: 'restoreFiles' })).ok, true);
    assert.equal(fs.existsSync(file), false, 'the file the agent created after the checkpoint is gone');
    const [restored] = await v.store.listRestores(v.runId);
    assert.deepEqual([restored?.to_seq, restored?.forked_run_id], [seq, null], 'recorded, no fork');
    assert.deepEqual(v.editor.previews.length, 1, 'after the preview');

    v.notices.answer(/^Fork from checkpoint #/, 'Conversation only');
    assert.equal((await v.request('waypointAction', { runId: v.runId, seq, action: 'forkHere' })).ok, true);
    const forked = (await v.store.listRuns()).runs.find((r) => r.forked_from?.run_id === v.runId);
    assert.equal(forked?.state, 'paused_cancelled', 'a fork, paused until resumed');
    assert.deepEqual(v.notices.said, [
      'choose: Restore files to this checkpoint',
      `info: Restored 1 file to checkpoint #${seq}.`,
      `choose: Fork from checkpoint #${seq}`,
      `info: Forked into “${forked!.title}”. Resume it to continue from checkpoint #${seq}.`,
    ]);
    assert.deepEqual(v.called, [], 'nothing else opened in the editor');
    assert.equal(v.controller.rejectedMessages, 0);
  });

  it('refuses forged and stale waypoint requests: a checkpoint the run lacks, nothing changed after it, another thread, a read-only run', async () => {
    const v = await openView();
    const refused = async (params: Record<string, unknown>, reason: RegExp) => {
      const r = await v.request('waypointAction', params);
      assert.ok(r.type === 'response' && !r.ok, JSON.stringify(params));
      assert.match(r.error, reason);
    };
    await refused({ runId: v.runId, seq: v.lastSeq + 1, action: 'restoreFiles' }, /is not in run/);
    await refused({ runId: v.runId, seq: v.lastSeq + 1, action: 'forkHere' }, /is not in run/);
    await refused({ runId: v.runId, seq: v.stepStart(2), action: 'restoreFiles' }, /changed no files after checkpoint/);
    await refused({ runId: 'someone-else', seq: 1, action: 'restoreFiles' }, /not in this view's thread/);
    assert.deepEqual([v.called, v.notices.said, v.editor.previews], [[], [], []], 'nothing reached the actions');
    assert.equal(v.controller.rejectedMessages, 4);
    assert.equal(v.warnings.length, 4, 'each is logged');
    assert.equal(fs.readFileSync(path.join(v.workspace, 'a.txt'), 'utf8'), 'agent a\n');

    const ro = await openView({ trusted: false });
    const r = await ro.request('waypointAction', { runId: ro.runId, seq: ro.stepStart(1), action: 'restoreFiles' });
    assert.ok(r.type === 'response' && !r.ok && /Restricted mode/.test(r.error));
    assert.equal(
      (await ro.request('waypointAction', { runId: ro.runId, seq: ro.stepStart(1), action: 'openCheckpoint' })).ok,
      true,
      'reading stays allowed',
    );
    assert.deepEqual(ro.called, [['openCheckpoint', ro.runId, ro.stepStart(1)]]);
  });

  it('a restore recorded while the view is open shows as a card; its actions name the record, unknown or stale ones are refused', async () => {
    const v = await openView();
    const record = await recordRestore(v, v.stepStart(1));
    const key = `${v.runId}:r:${record.id}`;
    for (let i = 0; i < 50 && !v.posted.some((m) => m.type === 'state' && m.outline.some(([k]) => k === key)); i++)
      await new Promise((r) => setTimeout(r, 20));
    const state = v.posted.filter((m) => m.type === 'state').at(-1);
    assert.ok(
      state?.type === 'state' && state.outline.at(-1)![0] === key,
      'the card is the last item (the run has not gone on since)',
    );
    const page = await v.request('page', { from: 0, to: 100 });
    const card =
      page.type === 'response' && page.ok
        ? (page.result as { items: { kind: string; counts?: string }[] }).items.at(-1)
        : undefined;
    assert.deepEqual([card?.kind, card?.counts], ['restore', '1 restored']);

    // Undo this restore: a restore to the checkpoint it followed (no rewind question), the agent's file is back.
    assert.equal((await v.request('restoreAction', { runId: v.runId, restoreId: record.id, action: 'undo' })).ok, true);
    assert.equal(fs.readFileSync(path.join(v.workspace, 'a.txt'), 'utf8'), 'agent a\n');
    const undo = (await v.store.listRestores(v.runId)).at(-1)!;
    assert.equal(undo.to_seq, record.checkpoint_seq);
    assert.equal(
      (await v.request('restoreAction', { runId: v.runId, restoreId: record.id, action: 'showDetails' })).ok,
      true,
    );
    assert.deepEqual(v.editor.details, [record]);
    assert.deepEqual(v.notices.said, [`info: Restored 1 file to checkpoint #${record.checkpoint_seq}.`]);
    const unknown = await v.request('restoreAction', { runId: v.runId, restoreId: 'restore-99', action: 'undo' });
    assert.ok(unknown.type === 'response' && !unknown.ok && /has no restore restore-99/.test(unknown.error));
    const noFork = await v.request('restoreAction', { runId: v.runId, restoreId: record.id, action: 'openFork' });
    assert.ok(noFork.type === 'response' && !noFork.ok && /made no fork/.test(noFork.error));
    assert.deepEqual([v.called, v.notices.said.length], [[], 1], 'refused requests reach nothing');

    // After the restores, the journal has their writes after the last checkpoint: restoring to the answer step undoes them.
    v.notices.answer(/^Restore files to this checkpoint$/, 'Restore files');
    assert.equal(
      (await v.request('waypointAction', { runId: v.runId, seq: v.stepStart(2), action: 'restoreFiles' })).ok,
      true,
    );
    assert.equal(fs.readFileSync(path.join(v.workspace, 'a.txt'), 'utf8'), 'agent a\n', 'as at the answer step');
    assert.equal((await v.store.listRestores(v.runId)).length, 3, 'the third restore is recorded');
  });
});
