// The fork action (src/actions/fork.ts) on a real run: conversation only (asked only when the
// agent changed files after the checkpoint), a paused fork, its notification's Resume now; with
// files: a restore that rewinds; a checkpoint the run does not have is refused before anything.
import assert from 'node:assert/strict';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { actedRun, TWO_WRITES, until } from './support';

describe('fork action', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: TWO_WRITES })));
  afterEach(async () => server.close());

  it('conversation only: asked only when files changed after the checkpoint; the fork waits, paused, until Resume now', async () => {
    const v = await actedRun(server.url);
    const last = (await v.store.getRun(v.runId))!.last_seq;
    const atEnd = (await v.actions.fork.run({ runId: v.runId, seq: last }))!;
    assert.ok(atEnd, 'no files changed after the last checkpoint: no question');
    assert.deepEqual(v.notices.said, [
      `info: Forked into “${(await v.store.getRun(atEnd))!.title}”. Resume it to continue from checkpoint #${last}.`,
    ]);
    const paused = (await v.store.getRun(atEnd))!;
    assert.deepEqual(
      [paused.state, paused.state_detail, paused.forked_from],
      [
        'paused_cancelled',
        `Forked from run ${v.runId} at checkpoint #${last}. Resume it to continue from there.`,
        { run_id: v.runId, seq: last },
      ],
    );

    const seq = await v.stepStart(2);
    assert.equal(await v.actions.fork.run({ runId: v.runId, seq }), undefined, 'the question dismissed: no fork');
    assert.equal(v.notices.said.at(-1), `choose: Fork from checkpoint #${seq}`);
    v.notices.answer(/^Fork from checkpoint #/, 'Conversation only');
    v.notices.answer(/^Forked into/, 'Resume now');
    const forkId = (await v.actions.fork.run({ runId: v.runId, seq }))!;
    assert.equal(v.file('b.txt'), 'agent b\n', 'conversation only: the files stay');
    const done = await until('the fork to finish', async () => {
      const r = await v.store.getRun(forkId);
      return r?.state === 'completed' ? r : undefined;
    });
    assert.equal(done.forked_from?.run_id, v.runId);
    assert.deepEqual(v.views.tracked, [forkId], 'Resume now resumed it, shown in its view');
  });

  it('conversation and files: the restore that rewinds (preview first), the fork named in its record', async () => {
    const v = await actedRun(server.url);
    const seq = await v.stepStart(1);
    const forkId = (await v.actions.fork.run({ runId: v.runId, seq }, { withFiles: true }))!;
    assert.deepEqual([v.file('a.txt'), v.file('b.txt')], ['original a\n', null]);
    const [record] = await v.store.listRestores(v.runId);
    assert.equal(record?.forked_run_id, forkId);
    assert.equal(v.editor.previews.length, 1);
    assert.match((await v.store.getRun(forkId))!.state_detail!, /with its files restored/);
  });

  it('refuses a checkpoint the run does not have, before any question', async () => {
    const v = await actedRun(server.url);
    const last = (await v.store.getRun(v.runId))!.last_seq;
    assert.equal(await v.actions.fork.run({ runId: v.runId, seq: last + 1 }), undefined);
    assert.deepEqual(v.notices.said, [
      `warn: Agent Waypoints: checkpoint #${last + 1} is not in run ${v.runId} (its last is #${last})`,
    ]);
    assert.equal((await v.store.listRuns()).runs.length, 1, 'no fork');
  });
});
