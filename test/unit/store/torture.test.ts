// SIGKILL torture in the unit suite (CI: 50 trials; `npm run torture -- --trials 500` for a soak).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runTorture } from '../../torture/run';

describe('store: SIGKILL torture', function () {
  this.timeout(300_000);

  it('50 trials: every ACKed write survives a SIGKILL intact, 0 corrupt files, side effects never silently twice; a deleted acknowledged tail is always reported', async () => {
    const r = await runTorture({ trials: 50, seed: 42, lostTailEvery: 4 });
    try {
      const lt = r.lostTails;
      console.log(
        `      torture: ${r.trials} trials, ${r.kills} SIGKILLs, ${r.runsFinished} runs finished, ${lt.trials} lost tails (${lt.acknowledged} acknowledged, ${lt.withEffects} with effect records), ${r.failures.length} failures`,
      );
      const log = fs.readFileSync(path.join(r.dir, 'effects.log'), 'utf8');
      console.log(
        `      side effects run: ${log.split('\n').filter(Boolean).length}, re-run behind an uncertain approval: ${(log.match(/ uncertain:/g) ?? []).length}`,
      );
      assert.deepEqual(r.failures, []);
      assert.equal(r.trials, 50);
      assert.ok(r.kills >= 25, `most trials end in a SIGKILL (${r.kills})`);
      assert.ok(r.runsFinished >= 1, 'runs are resumed to the end across kills');
      assert.ok(
        r.lostTails.acknowledged >= 3,
        `acknowledged tails were deleted and reported (${JSON.stringify(r.lostTails)})`,
      );
    } finally {
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });
});
