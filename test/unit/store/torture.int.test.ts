// SIGKILL torture in the crash tier: 20 trials by default (AW_TORTURE_TRIALS or AW_SOAK for more), and more
// until three deleted acknowledged tails were reported and a run finished across kills; how often a kill
// lands there is the machine's luck, not the product's. `npm run torture -- --trials 500` is the soak.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runTorture } from '../../torture/run';
import { trials } from '../../support/trials';

const TRIALS = trials(20, 'AW_TORTURE_TRIALS');

describe('store: SIGKILL torture', function () {
  this.timeout(300_000);

  it(`${TRIALS}+ trials: every ACKed write survives a SIGKILL intact, 0 corrupt files, side effects never silently twice; a deleted acknowledged tail is always reported`, async () => {
    const r = await runTorture({
      trials: TRIALS,
      seed: 42,
      lostTailEvery: 4,
      until: (res) => res.lostTails.acknowledged >= 3 && res.runsFinished >= 1,
      maxTrials: 4 * TRIALS,
    });
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
      assert.ok(r.trials >= TRIALS);
      assert.ok(r.kills >= r.trials / 2, `most trials end in a SIGKILL (${r.kills} of ${r.trials})`);
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
