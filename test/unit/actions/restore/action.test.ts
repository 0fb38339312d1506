// The restore action (src/actions/restore/action.ts) as the user meets it, on a real run and real
// files, with a scripted user: the rewind question, the preview, files that change under the
// preview (planned again), a write that fails (said, nothing recorded, the run free again), an
// editor's unsaved file (kept), the notification's Undo restore / Show details / Resume fork, and
// restore-and-rewind (a paused fork that runs the restored calls again).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../../fixtures/modelServer/server';
import { actedRun, TWO_WRITES, until } from '../support';

describe('restore action', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: TWO_WRITES })));
  afterEach(async () => server.close());

  it('asks whether to rewind, previews, writes what is ticked, records it; dismissing either question changes nothing', async () => {
    const v = await actedRun(server.url);
    const to = { runId: v.runId, seq: await v.stepStart(1) };
    assert.equal(await v.actions.restore.run(to), undefined, 'the rewind question dismissed');
    v.notices.answer(/^Restore files to this checkpoint$/, 'Restore files');
    v.editor.ticks = () => undefined;
    assert.equal(await v.actions.restore.run(to), undefined, 'the preview dismissed');
    v.notices.answer(/^Restore files to this checkpoint$/, 'Restore files');
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['agent a\n', 'agent b\n']);
    assert.deepEqual(await v.store.listRestores(v.runId), []);

    v.editor.ticks = () => new Set(['a.txt']); // b.txt unticked: kept
    const record = (await v.actions.restore.run(to))!;
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['original a\n', 'agent b\n']);
    assert.deepEqual(
      record.files.map((f) => [f.path, f.action]),
      [
        ['a.txt', 'reverted'],
        ['b.txt', 'kept'],
      ],
    );
    assert.match(record.files[1]!.reason, /you chose to keep it/);
    assert.deepEqual(await v.store.listRestores(v.runId), [record]);
    assert.equal(v.editor.previews.at(-1)!.toSeq, to.seq);
    assert.deepEqual(v.notices.said, [
      'choose: Restore files to this checkpoint',
      'choose: Restore files to this checkpoint',
      'choose: Restore files to this checkpoint',
      `info: Restored 1 file to checkpoint #${to.seq}; 1 kept (changed since, or not restorable).`,
    ]);
  });

  it('plans again when a file changes while the preview is open; a failing write is said, recorded nowhere, and frees the run', async () => {
    let failOnce = true;
    const v = await actedRun(server.url, {
      writer: (product) => ({
        ...product,
        write: async (runId, plan, overwrite) => {
          if (failOnce) throw new Error('disk full (injected)');
          return product.write(runId, plan, overwrite);
        },
      }),
    });
    const to = { runId: v.runId, seq: await v.stepStart(1) };
    let previews = 0;
    v.editor.ticks = (plan) => {
      // The user edits a.txt while the first preview is open.
      if (++previews === 1) fs.writeFileSync(path.join(v.workspace, 'a.txt'), 'typed meanwhile\n');
      return new Set(plan.files.filter((f) => f.action === 'revert').map((f) => f.path));
    };
    assert.equal(await v.actions.restore.run(to, { rewind: false }), undefined, 'the write failed');
    assert.equal(previews, 2, 'planned and previewed again after the change');
    assert.equal(v.editor.previews[1]!.files.find((f) => f.path === 'a.txt')!.action, 'conflict', 'the edit is kept');
    assert.deepEqual(v.notices.said, [
      'warn: Agent Waypoints: These files changed while the preview was open: a.txt. Look at the new preview.',
      'error: Agent Waypoints: could not restore the files: disk full (injected)',
    ]);
    assert.deepEqual(await v.store.listRestores(v.runId), [], 'nothing recorded');
    assert.equal(v.file('a.txt'), 'typed meanwhile\n');

    failOnce = false;
    const record = (await v.actions.restore.run(to, { rewind: false }))!;
    assert.ok(record, 'the lease was released: the next restore goes through');
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['typed meanwhile\n', null]);
  });

  it('an editor’s unsaved file is a conflict, never written by default', async () => {
    const v = await actedRun(server.url);
    v.editor.dirty.add('a.txt');
    const record = (await v.actions.restore.run({ runId: v.runId, seq: await v.stepStart(1) }, { rewind: false }))!;
    const a = record.files.find((f) => f.path === 'a.txt')!;
    assert.equal(a.action, 'kept');
    assert.match(a.reason, /unsaved changes/);
    assert.equal(v.file('a.txt'), 'agent a\n');
  });

  it('the notification: Undo restore puts the files back as they were; Show details opens the record', async () => {
    const v = await actedRun(server.url);
    v.notices.answer(/^Restored 2 files/, 'Undo restore');
    const first = (await v.actions.restore.run({ runId: v.runId, seq: await v.stepStart(1) }, { rewind: false }))!;
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['original a\n', null]);
    // Undo (the button acts after the action returned): a restore to the checkpoint the first one followed.
    const undo = await until('the undo', async () => (await v.store.listRestores(v.runId))[1]);
    assert.equal(undo.to_seq, first.checkpoint_seq);
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['agent a\n', 'agent b\n']);
    assert.ok(!v.notices.said.some((m) => m.startsWith('choose:')), 'Undo asks no rewind question');

    // A restore that wrote nothing (every file unticked: kept) offers no Undo, and cannot be undone.
    v.notices.answer(/^Restored 0 files/, 'Show details');
    v.editor.ticks = () => new Set();
    const noop = (await v.actions.restore.run({ runId: v.runId, seq: first.to_seq }, { rewind: false }))!;
    await until('the details', () => v.editor.details.length > 0);
    assert.match(v.notices.said.at(-1)!, /^info: Restored 0 files to checkpoint #\d+; 2 kept/);
    assert.deepEqual(v.editor.details, [noop]);
    assert.equal(await v.actions.restore.undo(v.runId, noop), undefined);
    assert.equal(
      v.notices.said.at(-1),
      'warn: Agent Waypoints: This restore wrote no files: there is nothing to undo.',
    );
  });

  it('restore and rewind: the files go back and a paused fork continues from the checkpoint, running the restored calls again', async () => {
    const v = await actedRun(server.url);
    // Before step 2's tool batch: its write_file is the pending call a plain fork would carry (and replay).
    const seq = (await v.store.list(v.runId, { limit: 100 })).find(
      (r) => r.step === 2 && r.phase === 'pre_tool_batch',
    )!.seq;
    const step2Call = (await v.store.listEffects(v.runId)).find((e) => e.step === 2)!.tool_call_id;
    v.notices.answer(/The conversation continues in a fork/, 'Resume fork');
    const record = (await v.actions.restore.run({ runId: v.runId, seq }, { rewind: true }))!;
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['agent a\n', null]);
    const fork = (await v.store.getRun(record.forked_run_id!))!;
    assert.equal(fork.state, 'paused_cancelled');
    assert.equal(
      fork.state_detail,
      `Forked from run ${v.runId} at checkpoint #${seq}, with its files restored. Resume it to continue from there.`,
    );
    assert.ok(fork.forked_from?.seq, 'a fork');
    assert.deepEqual(
      (await v.store.listEffects(fork.run_id)).map((e) => e.tool_call_id),
      [],
      `the restored call ${step2Call} is not carried into the fork: it runs again there`,
    );
    assert.match(v.notices.said.at(-1)!, /The conversation continues in a fork: resume it to go on\.$/);
    assert.equal(v.editor.previews[0]!.toSeq, seq);

    // Resume fork (the notification's button): the fork writes b.txt again and finishes.
    const done = await until('the fork to finish', async () => {
      const r = await v.store.getRun(fork.run_id);
      return r?.state === 'completed' ? r : undefined;
    });
    assert.equal(done.state, 'completed');
    assert.deepEqual(v.views.tracked, [fork.run_id]);
    assert.equal(v.file('b.txt'), 'agent b\n', 'the restored call ran again in the fork');
    assert.equal((await v.store.listEffects(fork.run_id))[0]?.files?.[0]?.before.kind, 'absent');
  });

  it('the guards: restricted mode, a checkpoint with nothing after it — said, nothing asked', async () => {
    const untrusted = await actedRun(server.url, { trusted: () => false });
    assert.equal(await untrusted.actions.restore.run({ runId: untrusted.runId, seq: 1 }), undefined);
    assert.match(untrusted.notices.said[0]!, /^warn: Agent Waypoints: Restricted mode: restoring files writes/);
    const v = await actedRun(server.url);
    const last = (await v.store.getRun(v.runId))!.last_seq;
    assert.equal(await v.actions.restore.run({ runId: v.runId, seq: last }), undefined);
    assert.deepEqual(v.notices.said, [
      `warn: Agent Waypoints: The agent changed no files after checkpoint #${last}: there is nothing to restore.`,
    ]);
    assert.deepEqual(v.editor.previews, []);
  });
});
