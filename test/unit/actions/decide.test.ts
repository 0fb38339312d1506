// The decide action (src/actions/decide.ts): approve, reject, approve edited and approve all reach
// the real runner bound to the call and the hash the user saw, and the run continues; restricted
// mode and a run another window holds are refused with the guard's reason before anything is
// written; "Always allow" only on a pending external approval with the hash the user saw.
import assert from 'node:assert/strict';
import { DecideAction } from '../../../src/actions/decide';
import { ActionRefusedError } from '../../../src/actions/guards';
import type { DecisionInput } from '../../../src/runner/runner';
import { createMemoryStore } from '../../../src/store/memory/store';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { owner } from '../loop/support';
import { actedRun, TWO_WRITES, until } from './support';

const ASK_WRITES = { categories: { read: 'auto', write: 'ask', command: 'auto', subagent: 'auto' } } as const;
const HASH = 'b'.repeat(64);

describe('decide action', function () {
  this.timeout(30_000);
  let server: ModelServer;
  beforeEach(async () => (server = await startModelServer({ scenario: TWO_WRITES })));
  afterEach(async () => server.close());

  const pendingOf = async (v: Awaited<ReturnType<typeof actedRun>>) => {
    const [a] = await v.store.listApprovals(v.runId, { pendingOnly: true });
    assert.ok(a, 'a call waits');
    return { toolCallId: a.tool_call_id, inputHash: a.input_hash };
  };

  it('approve, approve edited and reject reach the runner for the call the user saw; the run goes on', async () => {
    const v = await actedRun(server.url, { policy: ASK_WRITES });
    await v.actions.decide.approveEdited(
      v.runId,
      await pendingOf(v),
      JSON.stringify({ path: 'a.txt', content: 'edited a\n' }),
    );
    const second = await until(
      'step 2 to wait',
      async () => (await v.store.listApprovals(v.runId, { pendingOnly: true }))[0],
    );
    await v.actions.decide.reject(v.runId, { toolCallId: second.tool_call_id, inputHash: second.input_hash }, 'not b');
    await until('the run to finish', async () => (await v.store.getRun(v.runId))?.state === 'completed');
    assert.equal(v.file('a.txt'), 'edited a\n', 'the edited arguments ran');
    assert.equal(v.file('b.txt'), null, 'the rejected call did not');
    const decisions = (await v.store.listApprovals(v.runId)).map((a) => [a.decision?.kind, a.decision?.reason ?? null]);
    assert.deepEqual(decisions, [
      ['approve_edited', null],
      ['reject', 'not b'],
    ]);
  });

  it('a stale hash is refused by the runner; restricted mode and another window’s run by the guard, before anything is written', async () => {
    let trusted = true;
    const v = await actedRun(server.url, { policy: ASK_WRITES, trusted: () => trusted });
    const call = await pendingOf(v);
    await assert.rejects(
      v.actions.decide.approve(v.runId, { ...call, inputHash: 'f'.repeat(64) }),
      /arguments changed/,
    );
    trusted = false;
    await assert.rejects(
      v.actions.decide.approveAll(v.runId, [call]),
      (e) => e instanceof ActionRefusedError && /^Restricted mode/.test(e.message),
    );
    trusted = true;
    const lease = await v.store.acquire(v.runId, owner('other window'));
    await assert.rejects(
      v.actions.decide.approve(v.runId, call),
      /^Error: Read-only: this run is held by other window/,
    );
    await lease.release();
    assert.equal((await v.store.listApprovals(v.runId, { pendingOnly: true })).length, 1, 'still waiting, undecided');
    await v.actions.decide.approve(v.runId, call);
    await until('step 2 to wait', async () => (await v.store.listApprovals(v.runId, { pendingOnly: true }))[0]);
  });

  it('"Always allow" allows the tool and approves exactly the call the user saw; never the extension’s own tools', async () => {
    const store = createMemoryStore();
    const pending = async (category: 'external' | 'command') => {
      const { run, lease } = await store.createRun({ title: 't', task: 't', agent_name: 'a', model: 'm' }, owner());
      await store.requestApproval(run.run_id, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: category === 'external' ? 'everything__echo' : 'run_command',
        category,
        arguments: { message: 'hi' },
        input_hash: HASH,
        uncertain: false,
        reason: 'ask',
      });
      await lease.release();
      return run.run_id;
    };
    const allowed: string[] = [];
    const decided: DecisionInput[][] = [];
    const decide = new DecideAction({
      store,
      runner: { decideApprovals: async (_: string, d: DecisionInput[]) => void decided.push(d) },
      guards: { decide: async () => null },
      allowTool: async (name) => (allowed.push(name), 'echo of everything'),
    });
    const runId = await pending('external');
    await assert.rejects(decide.approveAndAllow(runId, { toolCallId: 'call_1', inputHash: 'c'.repeat(64) }), /changed/);
    await assert.rejects(decide.approveAndAllow(runId, { toolCallId: 'call_2', inputHash: HASH }), /not waiting/);
    assert.deepEqual(allowed, [], 'nothing allowed by a stale or forged request');
    assert.equal(await decide.approveAndAllow(runId, { toolCallId: 'call_1', inputHash: HASH }), 'echo of everything');
    assert.deepEqual(allowed, ['everything__echo']);
    assert.deepEqual(decided, [[{ kind: 'approve', toolCallId: 'call_1', inputHash: HASH }]]);

    const own = await pending('command');
    await assert.rejects(
      decide.approveAndAllow(own, { toolCallId: 'call_1', inputHash: HASH }),
      /not an external tool/,
    );
    const noAllow = new DecideAction({
      store,
      runner: { decideApprovals: async () => undefined },
      guards: { decide: async () => null },
    });
    await assert.rejects(
      noAllow.approveAndAllow(runId, { toolCallId: 'call_1', inputHash: HASH }),
      /cannot be allowed/,
    );
  });
});
