// Continue in background and Bring back here as the window's actions do them, against a real
// PostgreSQL cluster and a real `agent-waypoints worker` process: the window (a runner and the
// product's actions on a store of the shared project, its own checkout) hands a run waiting for an
// approval to the workers; the worker takes it; the window follows it from the change feed alone
// (its store tells it nothing else), decides each call from its approval card's path — posted, the
// worker records it — hears when the run finishes, and brings it back: the worker's files land in
// the window's checkout, and the hand-off is over.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { localDecider } from '../../../src/runner/decider';
import { openPgStoreReady, type PgStore } from '../../../src/store/pg/store';
import { SharedWorkers } from '../../../src/store/pg/workers';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { testActions, type TestActions } from '../../support/actions';
import { cliBundle, type CliProcess } from '../../support/cliProcess';
import { sharedPostgres } from '../../support/postgres';
import { effectLines, project, startWorker, threeCommands, type Project } from '../cli/workerSupport';
import { lines, makeRunner, owner, tmp, type TestRunner } from '../loop/support';

const LEASE_MS = 1_000;

describe('actions: Continue in background, decisions from the window, Bring back here (real workers)', function () {
  this.timeout(90_000);
  let server: ModelServer;
  let p: Project;
  let store: PgStore;
  let window: TestRunner;
  let t: TestActions;
  let worker: CliProcess | undefined;
  const checkout = tmp('window-checkout');
  const win = owner('VS Code window “test”');
  const by = localDecider(win.hostname, 'window', 'session-1');

  before(() => cliBundle());
  beforeEach(async () => {
    server = await startModelServer({ scenario: threeCommands(0.05) });
    p = project(server.url);
    store = await openPgStoreReady({
      connectionString: sharedPostgres().url(),
      workspace: p.workspace,
      heartbeatMs: LEASE_MS / 5,
      staleMs: LEASE_MS,
    });
    window = makeRunner({ store, workspace: checkout, baseURL: server.url, deps: { owner: win } });
    t = testActions({ store, runner: window.runner, workspace: checkout, owner: win, by });
    t.actions.background.connect(new SharedWorkers(store));
  });
  afterEach(async () => {
    if (worker && worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await worker?.done;
    t.actions.background.dispose();
    await window.runner.shutdown(1000);
    await store.close();
    await server.close();
  });

  /** Resolves once `check` holds, asked at every store event and every change of the workers' runs. */
  const until = (what: string, check: () => Promise<boolean> | boolean, ms = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const look = () => void Promise.resolve(check()).then((ok) => ok && done(), done);
      const subs = [store.onEvent(look), t.actions.background.onDidChange(look)];
      const limit = setTimeout(() => done(new Error(`timed out waiting for ${what}`)), ms);
      const done = (err?: unknown) => {
        clearTimeout(limit);
        subs.forEach((s) => s.dispose());
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve();
      };
      look();
    });

  it('hands off, follows the worker live, decides from the window, hears it finish, brings the files back', async () => {
    const started = await window.runner.start({ task: 'write three lines' });
    assert.equal((await started.done).state, 'awaiting_approval');
    const runId = started.runId;
    worker = await startWorker(p, 'worker-a', ['--lease-ms', String(LEASE_MS)]);
    // What the Runs view and the run view redraw on: the store's events for the run.
    const updates: string[] = [];
    const sub = store.onEvent((e) => void (e.kind === 'run-updated' && e.run_id === runId && updates.push(e.kind)));

    assert.equal(await t.actions.handOff.continueInBackground(runId), true);
    assert.match(
      t.notices.said.at(-1)!,
      /continues in the background: a worker with a checkout of this project takes it/,
    );
    assert.match((await t.actions.guards.resume(runId))!, /with the workers: bring it back here/);
    await until(
      'the worker to take it and wait for a decision',
      () => t.actions.background.get(runId)?.status === 'waiting',
    );

    const seen: number[] = [];
    for (let i = 1; i <= 3; i++) {
      await until(`call ${i} asked`, async () => (await store.getRun(runId))!.pending_approvals > 0);
      const [a] = await store.listApprovals(runId, { pendingOnly: true });
      assert.equal(a!.tool_call_id, `call_e${i}`);
      assert.equal(await t.actions.guards.decide(runId), null, 'a run of the workers is decided here');
      const clicked = performance.now();
      await t.actions.decide.approve(runId, { toolCallId: a!.tool_call_id, inputHash: a!.input_hash });
      seen.push(performance.now() - clicked);
    }
    // The run's records reach this store's events only because the change feed named them (store.follow).
    await until(
      'the run finished, as the window sees it',
      async () => (await store.getRun(runId))!.state === 'completed',
    );
    sub.dispose();
    assert.ok(updates.length >= 3, `the worker's steps reached the views as events (${updates.length})`);
    assert.deepEqual(effectLines(p), ['e1', 'e2', 'e3'], 'each command ran once, in the worker’s checkout');
    assert.deepEqual(lines(path.join(checkout, 'effects.log')), [], 'nothing ran in the window’s checkout');
    const decided = await store.listApprovals(runId);
    assert.deepEqual(
      decided.map((a) => a.decision?.by),
      [by, by, by],
      'the worker recorded each decision as the window’s',
    );
    await until('the finish announced', () =>
      t.notices.said.some((s) => /“write three lines” finished in the background/.test(s)),
    );
    process.stdout.write(
      `      approve in the window → recorded by the worker: ${seen.map((d) => `${d.toFixed(0)} ms`).join(', ')}\n`,
    );

    const back = await t.actions.handOff.bringBackHere(runId);
    assert.equal(back, 'completed', `Bring back here said:\n${t.notices.said.slice(-4).join('\n')}`);
    assert.deepEqual(lines(path.join(checkout, 'effects.log')), ['e1', 'e2', 'e3'], 'the worker’s file, brought here');
    assert.equal(await new SharedWorkers(store).get(runId), undefined, 'the hand-off is over');
    assert.equal(t.actions.background.get(runId), undefined);
    assert.ok(
      t.notices.said.some((s) => /Brought back 1 file of run/.test(s)),
      t.notices.said.join('\n'),
    );
  });

  it('a decision on arguments the run no longer waits for is refused by the worker, and the card says why', async () => {
    const started = await window.runner.start({ task: 'write three lines' });
    await started.done;
    const runId = started.runId;
    worker = await startWorker(p, 'worker-b', ['--lease-ms', String(LEASE_MS)]);
    await t.actions.handOff.continueInBackground(runId);
    await until('waiting with the workers', () => t.actions.background.get(runId)?.status === 'waiting');
    const [a] = await store.listApprovals(runId, { pendingOnly: true });
    await assert.rejects(
      t.actions.decide.approve(runId, { toolCallId: a!.tool_call_id, inputHash: 'f'.repeat(64) }),
      /the worker refused it: the arguments of call_e1 are not the ones shown/,
    );
    assert.equal((await store.listApprovals(runId, { pendingOnly: true })).length, 1, 'still waiting');
    assert.equal(fs.existsSync(path.join(p.checkout, 'effects.log')), false, 'nothing ran');
  });
});
