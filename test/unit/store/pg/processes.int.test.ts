// One owner per run across machines, with real processes on one real server: two "machines"
// (children with different host names) contending round after round; a SIGKILLed holder taken
// over once the server saw its session go; a SIGSTOPped holder taken over once its lease went
// stale, whose writes are refused when it is continued — nothing lost, nothing run twice silently.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bundleChild } from '../../../torture/run';
import { runTakeover } from '../../../torture/takeover';
import { pgBackend } from '../../../torture/pgTorture';
import { Window } from '../../../support/lineChild';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';
import { pgWorkspace, machine } from './support';

describe('shared store (postgres): owners in different processes', function () {
  this.timeout(180_000);
  let ws: ReturnType<typeof pgWorkspace>;
  let js: string;
  let dir: string;
  const windows: Window[] = [];
  before(async () => {
    dir = h.tmpDir('aw-pg-locks-');
    js = await bundleChild(dir, 'lockChild');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => (ws = pgWorkspace('processes')));
  afterEach(async () => {
    for (const w of windows.splice(0)) if (w.proc.exitCode === null && w.proc.signalCode === null) await w.kill();
    await ws.closeAll();
  });
  const open = (label: string, host: string, runId: string) => {
    const w = new Window(js, {
      STORE_KIND: 'pg',
      PG_URL: ws.url,
      WORKSPACE: ws.workspace,
      RUN_ID: runId,
      LABEL: label,
      MACHINE: host,
      HEARTBEAT_MS: '100',
    });
    windows.push(w);
    return w;
  };
  const newRun = async () => {
    const s = await ws.open();
    const { run, lease } = await s.createRun(h.newRun('contended'), machine('creator', 'h'));
    await s.append(run.run_id, h.runStarted());
    await lease.release();
    return run.run_id;
  };

  it('two machines acquiring at the same moment, 10 rounds: exactly one owner each round; the other names its machine', async () => {
    const runId = await newRun();
    const a = open('window A', 'machine-a', runId);
    const b = open('window B', 'machine-b', runId);
    assert.equal((await a.next()).ready, true);
    assert.equal((await b.next()).ready, true);
    for (let round = 0; round < 10; round++) {
      a.send('TRY');
      b.send('TRY');
      const [ra, rb] = await Promise.all([a.next(), b.next()]);
      assert.equal([ra, rb].filter((r) => r.owner === true).length, 1, `round ${round}: ${JSON.stringify([ra, rb])}`);
      const [winner, loser, host] = ra.owner ? [a, rb, 'machine-a'] : [b, ra, 'machine-b'];
      assert.match(String(loser.message), new RegExp(`held by window [AB] \\(pid \\d+ on ${host}\\)`));
      winner.send('RELEASE');
      assert.equal((await winner.next()).released, true);
    }
    a.send('EXIT');
    b.send('EXIT');
    assert.equal((await (await ws.open()).latest(runId)).seq, 1 + 10, 'one write per round, by its one owner');
  });

  it('a SIGKILLed holder on another machine: its run is taken once the server saw its session close, long before it is stale', async () => {
    const runId = await newRun();
    const a = open('window A', 'machine-a', runId);
    await a.next();
    a.send('TRY');
    assert.equal((await a.next()).owner, true);
    await a.kill();
    // staleMs is an hour: only the closed session can free the run
    const b = await ws.open({ staleMs: 3_600_000 });
    let lease;
    while (!(lease = await b.acquire(runId, machine('window B', 'machine-b')).catch(() => undefined)))
      await new Promise((r) => setTimeout(r, 50));
    await b.append(runId, h.preTools(1));
    await lease.release();
    assert.equal((await b.latest(runId)).seq, 3);
  });

  it('SIGSTOP the owner past its lease, another machine takes over and finishes, SIGCONT: its writes are refused, nothing lost or doubled', async () => {
    const staleMs = 1_500;
    const watcher = await ws.open({ staleMs });
    for (const [seed, at] of [
      [501, 23],
      [502, 57],
    ] as const) {
      const r = await runTakeover({
        backend: pgBackend(sharedPostgres().url(), freshWorkspace('takeover')),
        seed,
        stopAfterAcks: at,
        staleMs,
        holderGone: async (runId) => !(await watcher.owner(runId)),
      }).catch((err: Error) => ({ problems: [err.message], a: '', dir: '' }));
      try {
        assert.deepEqual(r.problems, [], `seed ${seed}, stopped after ACK ${at}`);
        assert.match(r.a, /RunNotOwnedError/);
      } finally {
        if (r.dir) fs.rmSync(r.dir, { recursive: true, force: true });
      }
    }
  });
});
