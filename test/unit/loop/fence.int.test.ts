// Fenced before every side effect, on the shared store, through the real runner: owner A is cut off
// from PostgreSQL in the middle of a batch of four commands (a proxy between A and the server refuses
// and drops every connection), at a different point each trial — right after a call's result was
// recorded, or when a call ended before its result could be; B, on another checkout of the same
// project, takes the run over once A's lease lapsed and resumes it. Every command runs exactly once:
// A never starts a call after the cut, B runs the rest, and asks only about the call whose result
// A could not record (it did run: B is told so and does not run it again).
import assert from 'node:assert/strict';
import { RunLockedError } from '../../../src/store/api/errors';
import { openPgStoreReady, type PgStore } from '../../../src/store/pg/store';
import type { AgentRunner } from '../../../src/runner/runner';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { CuttingProxy } from '../../support/pgProxy';
import { freshWorkspace, sharedPostgres } from '../../support/postgres';
import { lines, makeRunner, owner, tmp } from './support';
import path from 'node:path';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
const CALLS = ['c1', 'c2', 'c3', 'c4'];
const scenario: ScenarioInput = {
  name: 'fenced-batch',
  description: 'offline demo model: a batch of four commands, then an answer',
  model: DEMO_MODEL_ID,
  turns: [
    {
      reply: {
        content: null,
        tool_calls: CALLS.map((id) => ({ id, name: 'run_command', arguments: { command: `echo ${id} >> ran.log` } })),
      },
    },
    { reply: { content: 'done' } },
  ],
};

type Cut = 'after-result' | 'at-call-end';

/** Resumes the run on `runner` as soon as its lease is free (A's lapsed): polled, no fixed wait. */
async function takeOver(runner: AgentRunner, runId: string) {
  const until = Date.now() + 20_000;
  for (;;) {
    try {
      return await runner.resume(runId);
    } catch (err) {
      if (!(err instanceof RunLockedError) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('fenced before every side effect: an owner cut off from the shared store mid-batch', function () {
  this.timeout(180_000);
  let server: ModelServer;
  let proxy: CuttingProxy;
  const stores: PgStore[] = [];
  before(async () => {
    server = await startModelServer({ scenario });
    const c = sharedPostgres();
    proxy = await new CuttingProxy(c.socketDir, c.port).start();
  });
  after(async () => {
    await server.close();
    await proxy.close();
  });
  afterEach(async () => {
    proxy.up();
    for (const s of stores.splice(0)) await s.close(2_000).catch(() => undefined);
  });

  async function trial(k: number, cut: Cut): Promise<void> {
    const label = `cut ${cut} of c${k}`;
    const project = freshWorkspace('fence-run');
    const lease = { heartbeatMs: 100, staleMs: 1_000, settleMs: 200 };
    const storeA = await openPgStoreReady({ connectionString: proxy.url(), workspace: project, ...lease });
    const storeB = await openPgStoreReady({ connectionString: sharedPostgres().url(), workspace: project, ...lease });
    stores.push(storeA, storeB);
    const a = makeRunner({ baseURL: server.url, store: storeA, policy: AUTO, deps: { owner: owner('A') } });
    const b = makeRunner({ baseURL: server.url, store: storeB, policy: AUTO, deps: { owner: owner('B') } });
    const partition = () => {
      proxy.down();
      void proxy.dropAll();
    };
    if (cut === 'after-result')
      storeA.onEvent((e) => {
        if (e.kind === 'effect' && e.effect.tool_call_id === `c${k}` && e.effect.result) partition();
      });
    else
      a.runner.events.on((e) => {
        if (e.type === 'tool' && e.toolCallId === `c${k}` && e.status === 'end') partition();
      });

    const started = await a.runner.start({ task: 'four commands' });
    const outA = await started.done;
    assert.equal(outA.state, 'paused_error', `${label}: A pauses (${outA.detail})`);
    assert.deepEqual(lines(path.join(a.workspace, 'ran.log')), CALLS.slice(0, k), `${label}: A ran c1…c${k} only`);

    let outB = await (await takeOver(b.runner, started.runId)).done;
    if (cut === 'at-call-end') {
      // c_k ran on A but its result never reached the store: B asks, and is told it ran
      assert.equal(outB.state, 'awaiting_approval', `${label}: ${outB.detail}`);
      const asked = await storeB.listApprovals(started.runId, { pendingOnly: true });
      assert.deepEqual(
        asked.map((x) => [x.tool_call_id, x.uncertain]),
        [[`c${k}`, true]],
        label,
      );
      const resumed = await b.runner.decideApprovals(started.runId, [
        { kind: 'reject', toolCallId: `c${k}`, inputHash: asked[0]!.input_hash, reason: 'it ran on A' },
      ]);
      outB = await resumed!.done;
    }
    assert.equal(outB.state, 'completed', `${label}: ${outB.detail}`);
    assert.deepEqual(lines(path.join(b.workspace, 'ran.log')), CALLS.slice(k), `${label}: B ran the rest, once`);

    // A reconnects: nothing it still holds in memory lands, and it starts nothing
    proxy.up();
    await storeA.flush(2_000).catch(() => undefined);
    assert.deepEqual(lines(path.join(a.workspace, 'ran.log')), CALLS.slice(0, k), `${label}: A started nothing more`);
    const effects = await storeB.listEffects(started.runId);
    assert.deepEqual(
      effects.map((e) => [e.tool_call_id, e.result !== null]),
      CALLS.map((id) => [id, !(cut === 'at-call-end' && id === `c${k}`)]),
      `${label}: one effect record per call, answered but for the one A ran and could not record`,
    );
    assert.equal((await storeB.getRun(started.runId))?.state, 'completed');
  }

  it('10 trials, the cut at a different point each: every command runs once, the ones after the cut by B', async () => {
    const points: [number, Cut][] = [1, 2, 3].flatMap((k) => [
      [k, 'after-result'],
      [k, 'at-call-end'],
    ]);
    for (let i = 0; i < 10; i++) {
      const [k, cut] = points[i % points.length]!;
      await trial(k, cut);
      proxy.up();
      for (const s of stores.splice(0)) await s.close(2_000).catch(() => undefined);
    }
  });
});
