// recordRetry: a call the sandbox blocked runs again only with an approved retry for exactly its
// next attempt, decided after its result; the earlier result is kept as an attempt, the call holds
// an intent without a result again, and the disk store reads all of it back as written.
import assert from 'node:assert/strict';
import { StoreConflictError } from '../../../src/store/api/errors';
import type { CheckpointStore } from '../../../src/store/api/types';
import { openDiskStore } from '../../../src/store';
import { createMemoryStore } from '../../../src/store/memory/store';
import * as h from './helpers';

const SANDBOXED = {
  kind: 'sandboxed',
  profile: 'p'.repeat(64),
  summary: 'workspace writable · network: none',
} as const;
const BLOCKED = { domains: ['registry.npmjs.org'], writes: [], unix_sockets: false, process_limit: false };

async function blockedCall(store: CheckpointStore) {
  const { run } = await store.createRun(h.newRun(), h.owner('t'));
  const runId = run.run_id;
  await store.recordIntent(runId, { ...h.commandIntent('c1'), sandbox: SANDBOXED });
  await store.recordResult(runId, 'c1', {
    output: 'blocked',
    output_hash: 'o1',
    is_error: true,
    blob: null,
    blocked: BLOCKED,
  });
  const ask = (attempt: number) =>
    store.requestApproval(runId, {
      tool_call_id: 'c1',
      step: 1,
      tool_name: 'run_command',
      category: 'command',
      arguments: { command: 'npm install' },
      input_hash: 'ih-c1',
      uncertain: false,
      reason: 'blocked',
      retry: { attempt, blocked: BLOCKED },
    });
  const allow = () =>
    store.decideApproval(runId, 'c1', {
      kind: 'approve',
      reason: null,
      input_hash: null,
      access: { kind: 'domains', domains: ['registry.npmjs.org'], always: false },
    });
  return { runId, ask, allow };
}

describe('store: a blocked call retried', () => {
  const tmp = h.suiteTmp();

  it('only with an approved retry for its next attempt; the result so far becomes an attempt', async () => {
    const store = createMemoryStore();
    const { runId, ask, allow } = await blockedCall(store);
    const retry = () => store.recordRetry(runId, 'c1', { input_hash: 'ih-c1', sandbox: SANDBOXED });
    await assert.rejects(retry(), StoreConflictError, 'no approval');
    await ask(3);
    await assert.rejects(retry(), /has no approved retry/, 'still pending');
    await allow();
    await assert.rejects(retry(), /has no approved retry for attempt 2/, 'approved for another attempt');
    await ask(2);
    await store.decideApproval(runId, 'c1', { kind: 'reject', reason: 'no', input_hash: null });
    await assert.rejects(retry(), /has no approved retry/, 'rejected');
    await ask(2);
    await allow();
    await assert.rejects(
      store.recordRetry(runId, 'c1', { input_hash: 'other' }),
      /with other arguments/,
      'other arguments',
    );
    const again = await retry();
    assert.equal(again.result, null);
    assert.deepEqual(
      again.attempts?.map((a) => [a.result.output, a.result.blocked?.domains]),
      [['blocked', ['registry.npmjs.org']]],
    );
    assert.deepEqual(await retry(), again, 'the same retry again: the record as it is');
    await store.recordResult(runId, 'c1', { output: 'ok', output_hash: 'o2', is_error: false, blob: null });
    await assert.rejects(retry(), /has no approved retry/, 'that approval was used');
  });

  it('the disk store reads the attempts, the blocked report and the access back', async () => {
    const dir = tmp('retry');
    const store = openDiskStore(dir);
    const { runId, ask, allow } = await blockedCall(store);
    await ask(2);
    await allow();
    await store.recordRetry(runId, 'c1', { input_hash: 'ih-c1', sandbox: SANDBOXED });
    await store.recordResult(runId, 'c1', { output: 'ok', output_hash: 'o2', is_error: false, blob: null });
    const before = await store.listEffects(runId);
    await store.close();
    const reopened = openDiskStore(dir);
    assert.deepEqual(await reopened.listEffects(runId), before);
    const [approval] = await reopened.listApprovals(runId);
    assert.deepEqual(approval!.decision?.access, { kind: 'domains', domains: ['registry.npmjs.org'], always: false });
    assert.deepEqual(approval!.retry, { attempt: 2, blocked: BLOCKED });
    await reopened.close();
  });
});
