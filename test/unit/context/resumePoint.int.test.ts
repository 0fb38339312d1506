// A long run with context management, SIGKILLed, resumed from its resume point: the runtime holds what
// the model sees (the messages a condense summarised left on disk), the run completes with every effect
// once and the whole history kept, and the model is sent exactly what a resume of the whole run sends it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { bundleScript } from '../../support/bundleChild';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import { tmp } from '../loop/support';
import { effectLines, expectedEffects, longScenario, prepareWorkspace } from './longRun';
import { runJsonChild } from '../../support/jsonChild';

const STEPS = 60;

describe('context management: a run resumed from its resume point', function () {
  this.timeout(600_000);
  let server: ModelServer;
  let childJs = '';

  before(async () => {
    childJs = await bundleScript(path.join(__dirname, 'crashChild.ts'));
    server = await startModelServer({ scenario: longScenario(STEPS), contextWindow: 16_384 });
  });
  after(async () => server?.close());

  /** Starts the run, SIGKILLs it after its third condense, resumes it: what the model was sent after. */
  async function killAndResume(resumeEvery: string | null) {
    server.reset();
    const store = tmp('rp-store');
    const workspace = tmp('rp-ws');
    prepareWorkspace(workspace);
    const env = {
      BASE_URL: server.url,
      STORE_DIR: store,
      WORKSPACE: workspace,
      ...(resumeEvery ? { RESUME_EVERY: resumeEvery } : {}),
    };
    const first = await runJsonChild([childJs], { ...env, MODE: 'start', KILL_ON: 'post_condense', KILL_NTH: '3' });
    assert.equal(first.signal, 'SIGKILL', 'the child was killed mid-run');
    const runId = String(first.events.find((e) => e.event === 'started')?.runId);
    const before = server.requests.length;
    const second = await runJsonChild([childJs], { ...env, MODE: 'resume', RUN_ID: runId });
    assert.equal(second.events.find((e) => e.event === 'done')?.state, 'completed', JSON.stringify(second.events));
    assert.deepEqual(effectLines(workspace), expectedEffects(STEPS), 'each effect exactly once, in order');
    const s = openDiskStore(store);
    try {
      const snap = (await s.loadSnapshot(runId)).snapshot;
      assert.equal(snap.messages.filter((m) => m.role === 'tool').length, STEPS, 'the whole history is kept');
    } finally {
      await s.close();
    }
    const sent = server.requests.slice(before).map((q) => JSON.stringify(q.raw_messages));
    return { sent, resumed: second.events.find((e) => e.event === 'runner-resume') };
  }

  it('holds what the model sees, completes with every effect once, and sends the model what a whole resume sends', async () => {
    const fromPoint = await killAndResume('0');
    const omitted = (fromPoint.resumed?.omitted ?? {}) as { messages?: { from: number; to: number } };
    assert.ok(
      omitted.messages && omitted.messages.to > omitted.messages.from,
      `resumed with holes: ${JSON.stringify(fromPoint.resumed)}`,
    );
    const whole = await killAndResume(null);
    assert.ok(fromPoint.sent.length > 5, `requests after the resume: ${fromPoint.sent.length}`);
    assert.equal(fromPoint.sent.length, whole.sent.length, 'as many requests');
    assert.deepEqual(fromPoint.sent, whole.sent);
  });
});
