// SIGKILL during a condense, then resume in a new process: the long run (80 steps by default, condensed
// a dozen times; AW_CONDENSE_CRASH_STEPS or AW_SOAK for longer) completes with the same effects (each
// exactly once), the history is whole, and no range is condensed twice.
import assert from 'node:assert/strict';
import path from 'node:path';
import { bundleScript } from '../../support/bundleChild';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import { tmp } from '../loop/support';
import { effectLines, expectedEffects, longScenario, prepareWorkspace } from './longRun';
import { runJsonChild } from '../../support/jsonChild';
import { trials } from '../../support/trials';

const STEPS = trials(80, 'AW_CONDENSE_CRASH_STEPS');
let childJs = '';

const runChild = (env: Record<string, string>) => runJsonChild([childJs], env);

describe('context management: SIGKILL during a condense, then resume', function () {
  this.timeout(600_000);
  let server: ModelServer;

  before(async () => {
    childJs = await bundleScript(path.join(__dirname, 'crashChild.ts'));
    server = await startModelServer({ scenario: longScenario(STEPS), contextWindow: 16_384 });
  });
  after(async () => server?.close());

  for (const killOn of ['pre_condense', 'post_condense'] as const) {
    it(`killed right after ${killOn}: the resumed run completes with every effect once and condenses no range twice`, async () => {
      server.reset();
      const store = tmp('ctx-crash-store');
      const workspace = tmp('ctx-crash-ws');
      prepareWorkspace(workspace);
      const env = { BASE_URL: server.url, STORE_DIR: store, WORKSPACE: workspace };
      const first = await runChild({ ...env, MODE: 'start', KILL_ON: killOn, KILL_NTH: '2' });
      assert.equal(first.signal, 'SIGKILL', 'the child was killed mid-run');
      const runId = String(first.events.find((e) => e.event === 'started')?.runId);
      const summariesBefore = server.requests.filter((q) => q.condense).length;
      const second = await runChild({ ...env, MODE: 'resume', RUN_ID: runId });
      assert.equal(second.events.find((e) => e.event === 'done')?.state, 'completed');
      assert.deepEqual(effectLines(workspace), expectedEffects(STEPS), 'each effect exactly once, in order');
      const s = openDiskStore(store);
      try {
        const snap = (await s.loadSnapshot(runId)).snapshot;
        const outputs = snap.messages.filter((m) => m.role === 'tool');
        assert.equal(outputs.length, STEPS, 'the whole history is kept');
        const records = (await s.list(runId, { limit: 100_000 })).reverse();
        const ranges = records
          .filter((r) => r.phase === 'post_condense')
          .map((r) => {
            const mc = r.snapshot?.model_context;
            return `${mc?.condense?.head}-${mc?.condense?.through}`;
          });
        assert.equal(new Set(ranges).size, ranges.length, `no range condensed twice: ${ranges.join(', ')}`);
        if (killOn === 'post_condense') {
          // It was durable before the kill: resume went on with that summary instead of paying for it again.
          const killedSeq = Number(first.events.find((e) => e.event === 'killing')?.seq);
          const kept = records.find((r) => r.seq === killedSeq);
          assert.equal(kept?.phase, 'post_condense', 'the condense written before the kill is in the history');
          const range = `${kept.snapshot?.model_context?.condense?.head}-${kept.snapshot?.model_context?.condense?.through}`;
          assert.equal(ranges.filter((r) => r === range).length, 1, 'and it was not condensed again');
          assert.ok(server.requests.filter((q) => q.condense).length > summariesBefore, 'later condenses happened');
        }
      } finally {
        await s.close();
      }
    });
  }
});
