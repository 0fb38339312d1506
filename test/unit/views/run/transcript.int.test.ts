// The run view's plan of a long condensed run's end, from its newest checkpoints only: a 40-step run
// through the real runner and the scripted model with a small context window (the crash/integration
// tier: it takes seconds). transcript.test.ts holds the rest of the transcript model.
import assert from 'node:assert/strict';
import { startModelServer } from '../../../fixtures/modelServer/server';
import { buildRunItems } from '../../../../src/views/run/transcript';
import { loadRunData } from '../../../../src/views/run/runData';
import { makeRunner, tmp } from '../../loop/support';
import { longScenario, prepareWorkspace } from '../../context/longRun';
import { assertNewestIsTheEnd, idle } from './support';

describe('run view: the end of a condensed run from its newest checkpoints', function () {
  this.timeout(300_000);

  it('plans exactly the end of the whole run, its "condensed here" markers included', async () => {
    const server = await startModelServer({ scenario: longScenario(40), contextWindow: 16_384 });
    try {
      const workspace = tmp('view-condensed');
      prepareWorkspace(workspace);
      const t = makeRunner({
        baseURL: server.url,
        workspace,
        policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
        deps: { context: { thresholdPct: 60 } },
      });
      const h = await t.runner.start({
        task: 'Work through every step of the long task.',
        budget: { max_steps: 50, max_cost_usd: null, max_tokens: null, max_wall_ms: null },
      });
      assert.equal((await h.done).state, 'completed');
      const condenses = buildRunItems(await loadRunData(t.store, (await t.store.getRun(h.runId))!, 1, idle)).filter(
        (i) => i.kind === 'condense',
      );
      assert.ok(condenses.length >= 2, `the run condensed (${condenses.length} times)`);
      await assertNewestIsTheEnd(t.store, h.runId, [10, 25, 40, 60, 90, 120, 150]);
      await t.store.close();
    } finally {
      await server.close();
    }
  });
});
