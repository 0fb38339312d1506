// SIGKILL torture of the client process, against the shared store on a real server, and database
// restarts (`pg_ctl restart -m immediate`) in the middle of runs: every acknowledged write intact,
// nothing lost, side effects never silently twice, every run resumed to the uninterrupted transcript.
// SIGKILLs: 30 trials by default (AW_PG_TORTURE_TRIALS or AW_SOAK for more), and more until a run has
// finished across kills. (`npm run torture -- --pg --trials 500` for a soak.)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runTorture, type TortureResult } from '../../../torture/run';
import { pgBackend } from '../../../torture/pgTorture';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import { trials } from '../../../support/trials';

const KILLS = trials(30, 'AW_PG_TORTURE_TRIALS');

function summary(r: TortureResult): string {
  const log = fs.readFileSync(path.join(r.dir, 'effects.log'), 'utf8');
  const ran = log.split('\n').filter(Boolean).length;
  const again = (log.match(/ uncertain:/g) ?? []).length;
  return `${r.trials} trials, ${r.kills} SIGKILLs, ${r.faults} faults, ${r.pauses} pauses, ${r.runsFinished} runs finished, ${r.failures.length} failures; side effects run: ${ran}, re-run behind an uncertain approval: ${again}`;
}

describe('shared store (postgres): torture', function () {
  this.timeout(600_000);

  it(`${KILLS}+ SIGKILLs of the client: every ACKed write intact, 0 lost, 0 silent duplicates, 0 quarantined rows`, async () => {
    const r = await runTorture({
      trials: KILLS,
      until: (res) => res.runsFinished >= 1,
      maxTrials: 4 * KILLS,
      seed: 42,
      backend: pgBackend(sharedPostgres().url(), freshWorkspace('torture')),
    });
    try {
      console.log(`      torture (postgres): ${summary(r)}`);
      assert.deepEqual(r.failures, []);
      assert.ok(r.kills >= 0.6 * r.trials, `most trials end in a SIGKILL (${r.kills} of ${r.trials})`);
      assert.ok(r.runsFinished >= 1, 'runs are resumed to the end across kills');
    } finally {
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });

  it('pg_ctl restart -m immediate mid-run: the run rides through or pauses on the error, resumes, every effect once', async () => {
    const cluster = sharedPostgres();
    const r = await runTorture({
      trials: 8,
      seed: 7,
      backend: pgBackend(cluster.url(), freshWorkspace('restart')),
      fault: { name: 'restart', act: () => cluster.restart('immediate') },
    });
    try {
      console.log(`      restarts (postgres): ${summary(r)}`);
      assert.deepEqual(r.failures, []);
      assert.ok(r.faults >= 6, `the server restarted under most runs (${r.faults})`);
      assert.ok(r.runsFinished >= 2);
    } finally {
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });

  it('the server stopped hard mid-run and started again after the run paused: resumed, every effect once', async () => {
    const cluster = sharedPostgres();
    const r = await runTorture({
      trials: 10,
      until: (res) => res.pauses >= 4,
      maxTrials: 40,
      seed: 11,
      backend: pgBackend(cluster.url(), freshWorkspace('outage')),
      fault: { name: 'stop', act: () => cluster.stopServer('immediate'), heal: () => cluster.start() },
    });
    try {
      console.log(`      outages (postgres): ${summary(r)}`);
      assert.deepEqual(r.failures, []);
      assert.ok(r.pauses >= 4, `the run paused on the database's absence and was resumed (${r.pauses})`);
    } finally {
      if (!cluster.running()) cluster.start();
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });
});
