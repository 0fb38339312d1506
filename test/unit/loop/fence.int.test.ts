// Fenced before every side effect, on the shared store, through the real runner: owner A is cut off
// from PostgreSQL in the middle of a batch of four commands (a proxy between A and the server refuses
// and drops every connection), at a different point each trial — right after a call's result was
// recorded, or when a call ended before its result could be; B, on another checkout of the same
// project, takes the run over once A's lease lapsed and resumes it. Every command runs exactly once:
// A never starts a call after the cut, B runs the rest, and asks only about the call whose result
// A could not record (it did run: B is told so and does not run it again). And owner A stopped
// (SIGSTOP) between two calls past its lease, taken over, continued: it starts no call, and nothing
// it writes lands — its summary included.
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
import fs from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { bundleScript } from '../../support/bundleChild';
import { admin } from '../store/pg/support';

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

/** A child's JSON lines, and a wait for the next one of a kind. */
function watchChild(p: ChildProcess) {
  const events: Record<string, unknown>[] = [];
  let err = '';
  let buf = '';
  p.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    for (const l of parts) if (l) events.push(JSON.parse(l) as Record<string, unknown>);
  });
  p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => p.on('exit', () => r()));
  return {
    exited,
    async next(kind: string): Promise<Record<string, unknown>> {
      const until = Date.now() + 60_000;
      for (;;) {
        const e = events.find((x) => x.event === kind || x.event === 'error');
        if (e?.event === 'error') throw new Error(`child failed: ${String(e.message)}\n${err}`);
        if (e) return e;
        if (Date.now() > until || p.exitCode !== null) throw new Error(`no ${kind} from the child\n${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** The process is stopped (state T in /proc). */
async function stopped(pid: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (!/^\d+ \(.*\) [Tt]/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) {
    if (Date.now() > until) throw new Error(`process ${pid} did not stop`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('fenced before every side effect: an owner stopped (SIGSTOP) between two calls, past its lease', function () {
  this.timeout(180_000);
  let server: ModelServer;
  let childJs: string;
  const stores: PgStore[] = [];
  before(async () => {
    server = await startModelServer({ scenario });
    childJs = await bundleScript(path.join(__dirname, 'fenceChild.ts'));
  });
  after(async () => {
    await server.close();
    fs.rmSync(path.dirname(childJs), { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close(2_000).catch(() => undefined);
  });

  for (const k of [1, 2])
    it(`stopped after c${k}: B takes over and finishes; A, continued, starts no call and nothing it writes lands`, async () => {
      const project = freshWorkspace('fence-stop');
      const wsA = tmp('fence-a');
      const p = spawn(process.execPath, [childJs], {
        env: {
          ...process.env,
          PG_URL: sharedPostgres().url(),
          PROJECT: project,
          WORKSPACE: wsA,
          MODEL_URL: server.url,
          STOP_AFTER: `c${k}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const child = watchChild(p);
      try {
        const { runId } = (await child.next('stopping')) as { runId: string };
        await stopped(p.pid!);
        const storeB = await openPgStoreReady({
          connectionString: sharedPostgres().url(),
          workspace: project,
          heartbeatMs: 100,
          staleMs: 1_000,
        });
        stores.push(storeB);
        const b = makeRunner({ baseURL: server.url, store: storeB, policy: AUTO, deps: { owner: owner('B') } });
        const outB = await (await takeOver(b.runner, runId)).done;
        assert.equal(outB.state, 'completed', outB.detail ?? '');
        await storeB.flush();
        const row = () =>
          admin(async (c) => {
            const r = await c.query<{ summary: string; commits: number; lease_owner: string | null }>(
              `SELECT summary, commits, lease_owner FROM agent_waypoints.runs WHERE workspace = $1 AND run_id = $2`,
              [project, runId],
            );
            return r.rows[0]!;
          });
        const byB = await row();
        assert.equal((JSON.parse(byB.summary) as { state: string }).state, 'completed');

        p.kill('SIGCONT');
        const done = await child.next('done');
        assert.equal(done.state, 'paused_error');
        assert.match(String(done.detail), /does not own run/);
        await child.next('closed');
        await child.exited;
        assert.deepEqual(
          lines(path.join(wsA, 'ran.log')),
          CALLS.slice(0, k),
          'A started no call after it was continued',
        );
        assert.deepEqual(lines(path.join(b.workspace, 'ran.log')), CALLS.slice(k), 'B ran the rest, once');
        const after = await row();
        assert.equal(after.commits, byB.commits, "none of A's writes landed");
        assert.equal(after.summary, byB.summary, "A's summary did not land");
      } finally {
        if (p.exitCode === null && p.signalCode === null) {
          p.kill('SIGCONT');
          p.kill('SIGKILL');
        }
      }
    });
});
