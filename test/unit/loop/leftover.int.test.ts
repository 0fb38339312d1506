// A command outlives a SIGKILL of its window: run_command starts it in a process group of its own. On
// resume it must be found still running and waited for — asking "may already have run?" while it still
// works invites a second run. The command waits for a gate file the test creates only once the resumed
// window says it is waiting: how long a loaded machine takes to resume never decides the outcome.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { openDiskStore } from '../../../src/store';
import { runChild } from './crashSupport';
import { lines, tmp } from './support';

/** Waits for `go` in its folder (at most a minute, should the test fail first), then leaves its effect. */
const GATED = 'i=0; while [ ! -f go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo done >> effects.txt';
const slow: Scenario = {
  name: 'slow-command',
  description: 'offline demo model: one command that takes a while, then an answer',
  model: DEMO_MODEL_ID,
  turns: [
    { reply: { content: 'working', tool_calls: [{ name: 'run_command', arguments: { command: GATED } }] } },
    { reply: { content: 'finished' } },
  ],
  subconversations: [],
};

describe('agent loop: a command still running from before a crash (a real SIGKILL)', function () {
  this.timeout(120_000);
  let server: ModelServer;
  before(async () => (server = await startModelServer({ scenario: slow })));
  after(async () => server?.close());

  it('SIGKILL while the command runs: resume waits for it, then asks — with its effect already visible', async () => {
    // An uninterrupted run (its gate open from the start) numbers the store writes: the kill comes right
    // after the command's process is recorded, while the command waits for its gate in its own process group.
    const counted = tmp('leftover-ws');
    fs.writeFileSync(path.join(counted, 'go'), '');
    const writes = (
      await runChild({ BASE_URL: server.url, STORE_DIR: tmp('leftover-store'), WORKSPACE: counted, MODE: 'start' })
    ).events
      .filter((e) => e.event === 'write')
      .map((e) => String(e.what));
    const killAt = writes.indexOf('recordProcess') + 1;
    assert.ok(killAt > 0, `the command's process is recorded (${writes.join(', ')})`);

    const trial = { store: tmp('leftover-store2'), workspace: tmp('leftover-ws2') };
    const env = { BASE_URL: server.url, STORE_DIR: trial.store, WORKSPACE: trial.workspace };
    const effects = path.join(trial.workspace, 'effects.txt');
    server.reset();
    const killed = await runChild({ ...env, MODE: 'start', KILL_AT: String(killAt) });
    assert.equal(killed.signal, 'SIGKILL');
    assert.deepEqual(lines(effects), [], 'the command had not finished when its window died');
    const s = openDiskStore(trial.store);
    const runId = (await s.listRuns()).runs[0]!.run_id;
    await s.close();

    // The gate opens only when the resumed window reports the command as still running and waits for it.
    let effectsWhenWaiting: string[] | undefined;
    const resumed = await runChild({ ...env, MODE: 'resume', RUN_ID: runId }, (e) => {
      if (e.event !== 'leftovers' || e.status !== 'waiting' || effectsWhenWaiting) return;
      effectsWhenWaiting = lines(effects);
      fs.writeFileSync(path.join(trial.workspace, 'go'), '');
    });
    assert.deepEqual(effectsWhenWaiting, [], 'the resumed run found the command still running and waited for it');
    assert.equal(resumed.events.find((e) => e.event === 'done')?.state, 'awaiting_approval');
    assert.deepEqual(lines(effects), ['done'], 'when the user is asked, the effect is already visible');
    const s2 = openDiskStore(trial.store);
    const [approval] = await s2.listApprovals(runId, { pendingOnly: true });
    await s2.close();
    assert.equal(approval?.uncertain, true);
    assert.match(approval!.reason, /still running when the run resumed and was waited for/);
    const decided = await runChild({
      ...env,
      MODE: 'decide',
      RUN_ID: runId,
      DECISIONS: JSON.stringify([
        {
          kind: 'reject',
          toolCallId: approval!.tool_call_id,
          inputHash: approval!.input_hash,
          reason: 'it already ran',
        },
      ]),
    });
    assert.equal(decided.events.find((e) => e.event === 'done')?.state, 'completed');
    assert.deepEqual(lines(effects), ['done'], 'exactly once');
  });
});
