// Contract cases for the runner's durable barriers (docs/design.md, "Durable barriers per step"; part
// of contract.ts's suite, kept apart for size): a write handed over with durability 'next-barrier' is
// applied at once, reaches another store instance only with the next barrier — makeDurable or the run's
// next durable write — and nothing else changes about it.
import assert from 'node:assert/strict';
import { InvalidInputError } from '../../../src/store/api/errors';
import type { TestStore } from './contract';
import type { TurnsContext } from './contractTurns';
import * as h from './helpers';

export function barriersContract(c: Pick<TurnsContext, 'openStore' | 'runWithStep'>): void {
  it("hands writes over for the next barrier: applied at once, durable with makeDurable or the run's next durable write", async () => {
    const s = await c.openStore({ deferMs: 60_000 });
    const { runId, post } = await c.runWithStep(s);
    const fresh = async (): Promise<TestStore> => c.openStore();

    // The result rides on makeDurable.
    await s.recordIntent(runId, {
      tool_call_id: 'call_1',
      step: 1,
      tool_name: 'w',
      input_hash: 'i1',
      side_effecting: true,
    });
    const result = { output: 'ok', output_hash: 'o1', is_error: false, blob: null };
    await s.recordResult(runId, 'call_1', result, { durability: 'next-barrier' });
    assert.equal((await s.listEffects(runId))[0]!.result?.output, 'ok', 'applied at once');
    assert.equal((await (await fresh()).listEffects(runId))[0]!.result ?? null, null, 'not durable before the barrier');
    await s.makeDurable(runId);
    assert.equal((await (await fresh()).listEffects(runId))[0]!.result?.output, 'ok', 'durable after makeDurable');

    // The response rides on the next intent (a durable write carries everything before it).
    const messages = [...post.messages, { role: 'tool' as const, tool_call_id: 'call_1', content: 'ok' }];
    await s.append(runId, h.stepStarted(h.snapshot(2, messages)));
    const a = h.assistantWithCall(2);
    const next = h.snapshot(2, [...messages, a], { pending_llm_response: h.pendingResponse(a, 2) });
    const rec = await s.append(runId, h.postLlm(next), { durability: 'next-barrier' });
    assert.equal((await s.latest(runId)).seq, rec.seq);
    assert.notEqual((await (await fresh()).latest(runId)).seq, rec.seq, 'the response is not durable on its own');
    await s.recordIntent(runId, {
      tool_call_id: 'call_2',
      step: 2,
      tool_name: 'w',
      input_hash: 'i2',
      side_effecting: true,
    });
    const other = await fresh();
    assert.equal((await other.latest(runId)).seq, rec.seq, 'the intent carried the response');
    assert.deepEqual(
      (await other.loadSnapshot(runId)).snapshot.pending_llm_response?.message,
      a,
      'with its pending response',
    );

    await h.rejects(
      s.append(runId, h.preTools(2), { durability: 'soon' as never }),
      InvalidInputError,
      /durability must be/,
    );
  });
}
