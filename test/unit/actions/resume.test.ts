// The resume action (src/actions/resume.ts) on real runs: a finished run shows its result (nothing
// runs), a run waiting for decisions opens at the first card, a run paused on its budget asks for
// a higher one, changed conditions ask for confirmation, a run another window holds offers its
// latest checkpoint read-only, an unknown id is said.
import assert from 'node:assert/strict';
import { testActions } from '../../support/actions';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner, owner } from '../loop/support';
import { actedRun, AUTO, TWO_WRITES, until } from './support';

describe('resume action', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: TWO_WRITES })));
  afterEach(async () => server.close());

  it('a finished run shows its result; a run waiting for decisions opens at its first card; nothing runs', async () => {
    const done = await actedRun(server.url);
    assert.equal(await done.actions.resume.run(done.runId), 'completed');
    const waiting = await actedRun(server.url, { policy: { categories: { ...AUTO.categories, write: 'ask' } } });
    assert.equal(await waiting.actions.resume.run(waiting.runId), 'awaiting_approval');
    assert.deepEqual(done.views.shown, [[done.runId, undefined]]);
    assert.deepEqual(waiting.views.shown, [[waiting.runId, { kind: 'firstPending' }]]);
    assert.deepEqual([done.views.tracked, waiting.views.tracked], [[], []]);
    assert.equal(server.stats().total, 4, 'the model was asked by the two runs only (3 + 1)');
  });

  it('paused on its budget: asks for a higher one (a whole number above its step), then continues', async () => {
    const v = await actedRun(server.url, { budget: { max_steps: 1 } });
    const run = (await v.store.getRun(v.runId))!;
    assert.equal(run.state, 'paused_budget');
    assert.equal(await v.actions.resume.run(run), undefined, 'dismissed: nothing runs');
    v.notices.answer(/higher budget/, String(run.step)); // not above its step: refused by the box
    assert.equal(await v.actions.resume.run(run), undefined);
    v.notices.answer(/higher budget/, '10');
    assert.equal(await v.actions.resume.run(run), 'running');
    assert.deepEqual(v.views.tracked, [v.runId]);
    await until('the run to finish', async () => (await v.store.getRun(v.runId))?.state === 'completed');
    assert.deepEqual(v.notices.said, [
      `input: Resume “${run.title}” with a higher budget`,
      `input: Resume “${run.title}” with a higher budget`,
      `input: Resume “${run.title}” with a higher budget`,
    ]);
  });

  it('asks before resuming under changed conditions (another extension version); Resume anyway continues', async () => {
    const first = await actedRun(server.url, { budget: { max_steps: 1 } });
    const later = makeRunner({
      baseURL: server.url,
      store: first.store,
      workspace: first.workspace,
      version: '0.2.0',
      policy: AUTO,
    });
    const ui = testActions({
      store: first.store,
      runner: later.runner,
      workspace: first.workspace,
      owner: later.runner.owner,
    });
    const run = (await first.store.getRun(first.runId))!;
    ui.notices.answer(/higher budget/, '10');
    assert.equal(await ui.actions.resume.run(run), undefined, 'not confirmed: nothing runs');
    assert.equal(ui.notices.said.at(-1), `confirm: Resume “${run.title}”?`);
    ui.notices.answer(/higher budget/, '10').answer(/^Resume “/, 'Resume anyway');
    assert.equal(await ui.actions.resume.run(run), 'running');
    await until('the run to finish', async () => (await first.store.getRun(first.runId))?.state === 'completed');
  });

  it('a run another window holds: offers its latest checkpoint read-only; an unknown run is said', async () => {
    const v = await actedRun(server.url, { budget: { max_steps: 1 } });
    const lease = await v.store.acquire(v.runId, owner('other window'));
    const run = (await v.store.getRun(v.runId))!;
    v.notices.answer(/higher budget/, '10').answer(/is held by other window/, 'Open latest checkpoint (read-only)');
    assert.equal(await v.actions.resume.run(run), undefined);
    assert.deepEqual(v.views.checkpoints, [[v.runId, run.last_seq]]);
    await lease.release();
    assert.equal(await v.actions.resume.run('run-that-is-not'), undefined);
    assert.equal(v.notices.said.at(-1), 'error: Agent Waypoints: no run with id run-that-is-not in this workspace.');
  });
});
