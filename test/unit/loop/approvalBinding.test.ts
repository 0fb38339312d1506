// Decisions are bound to the call they were made for (issue 18, finding 2): a stored decision runs
// a call only when the approval's input_hash is the hash of the call as it stands; edited arguments
// are validated by the tool's schema and hashed here, never taken from the record; a call waiting
// for the user keeps waiting whatever the policy says later. And a run works in the folder of the
// window running it, never in the one its records name. Real runner, real store, real tools.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { inputHash } from '../../../src/runner/hash';
import type { CheckpointStore } from '../../../src/store/api/types';
import { makeRunner, owner, tmp } from './support';

const call = (name: string, args: Record<string, unknown>, id = 'call_1') => ({
  reply: { content: null, tool_calls: [{ id, name, arguments: args }] },
});
const scenario = (name: string, turns: Scenario['turns']): Scenario => ({
  name,
  description: `offline demo model: ${name}`,
  model: DEMO_MODEL_ID,
  turns,
  subconversations: [],
});
const COMMAND = { command: 'echo ran >> log.txt' };
/** The arguments run_command's schema makes of COMMAND (its defaults filled in): what approvals are bound to. */
const PREPARED = { command: COMMAND.command, cwd: '.', timeout_ms: 120_000 };

/** Replaces the approval of call_1 by one for `args`, decided as `decision` — what a record from elsewhere can hold. */
async function plantApproval(
  store: CheckpointStore,
  runId: string,
  args: unknown,
  decision: Parameters<CheckpointStore['decideApproval']>[2] | null,
): Promise<void> {
  const lease = await store.acquire(runId, owner('planter'));
  const prev = (await store.listApprovals(runId)).find((a) => a.tool_call_id === 'call_1')!;
  if (!prev.decision) await store.decideApproval(runId, 'call_1', { kind: 'reject', reason: 'x', input_hash: null });
  await store.requestApproval(runId, {
    ...prev,
    arguments: args,
    input_hash: inputHash('run_command', args),
  });
  if (decision) await store.decideApproval(runId, 'call_1', decision);
  await lease.release();
}

describe('approvals are bound to the call', function () {
  this.timeout(60_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  async function waiting() {
    server = await startModelServer({
      scenario: scenario('bound', [call('run_command', COMMAND), { reply: { content: 'ok' } }]),
    });
    const t = makeRunner({ baseURL: server.url });
    const h = await t.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [pending] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(pending!.input_hash, inputHash('run_command', PREPARED), 'bound to the prepared arguments');
    return { ...t, runId: h.runId, log: path.join(t.workspace, 'log.txt') };
  }

  it('a decision recorded for other arguments is not applied: the call is asked about again, saying why', async () => {
    const t = await waiting();
    await plantApproval(
      t.store,
      t.runId,
      { ...PREPARED, command: 'echo harmless' },
      {
        kind: 'approve',
        reason: null,
        input_hash: null,
      },
    );
    const out = await (await t.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval', 'asked again instead of running');
    assert.equal(fs.existsSync(t.log), false, 'the call did not run');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.equal(asked!.input_hash, inputHash('run_command', PREPARED), 'the new request is for the call as it stands');
    assert.match(
      asked!.reason,
      /decision \(approve\) was recorded for other arguments than this call's; it was not applied/,
    );

    const done = await t.runner.decideApprovals(t.runId, [
      { kind: 'approve', toolCallId: 'call_1', inputHash: asked!.input_hash },
    ]);
    assert.equal((await done!.done).state, 'completed');
    assert.equal(fs.readFileSync(t.log, 'utf8'), 'ran\n', 'it runs once the user approves this call');
  });

  it('a pending approval for other arguments is closed as not applied and the call asked about as it stands', async () => {
    const t = await waiting();
    await plantApproval(t.store, t.runId, { ...PREPARED, command: 'echo other' }, null);
    const out = await (await t.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval', out.detail ?? '');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.equal(asked!.input_hash, inputHash('run_command', PREPARED));
    assert.match(asked!.reason, /An approval was recorded for other arguments/);
    assert.equal(fs.existsSync(t.log), false);
  });

  it('approve_edited runs the edited arguments as the schema reads them, under a hash computed here, never the record’s', async () => {
    const t = await waiting();
    const lease = await t.store.acquire(t.runId, owner('planter'));
    await t.store.decideApproval(t.runId, 'call_1', {
      kind: 'approve_edited',
      reason: null,
      arguments: { command: 'echo edited >> log.txt' },
      input_hash: 'f'.repeat(64),
    });
    await lease.release();
    const out = await (await t.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.equal(fs.readFileSync(t.log, 'utf8'), 'edited\n');
    const [effect] = await t.store.listEffects(t.runId);
    assert.equal(
      effect!.input_hash,
      inputHash('run_command', { ...PREPARED, command: 'echo edited >> log.txt' }),
      'the hash of what ran, with the schema’s defaults — not the stored one',
    );
  });

  it('approve_edited with arguments the tool’s schema refuses is not applied: asked again with the validation error', async () => {
    const t = await waiting();
    const lease = await t.store.acquire(t.runId, owner('planter'));
    await t.store.decideApproval(t.runId, 'call_1', {
      kind: 'approve_edited',
      reason: null,
      arguments: { command: 42, cwd: '../..' },
      input_hash: 'f'.repeat(64),
    });
    await lease.release();
    const out = await (await t.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval');
    assert.equal(fs.existsSync(t.log), false);
    assert.deepEqual(await t.store.listEffects(t.runId), [], 'nothing was started');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.match(asked!.reason, /The edited arguments were not applied: Invalid arguments for run_command: command:/);
  });

  it('a call waiting for the user keeps waiting when the policy changes to auto: only a decision runs it', async () => {
    const t = await waiting();
    const auto = makeRunner({
      baseURL: server.url,
      store: t.store,
      workspace: t.workspace,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const out = await (await auto.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval');
    assert.equal(fs.existsSync(t.log), false, 'not run by the policy');
  });
});

describe('a run works in the workspace of the window running it', function () {
  this.timeout(60_000);
  let server: ModelServer;
  afterEach(async () => server?.close());

  it('resumed in another window’s folder, its tools and its file journal act there; the recorded folder stays as history', async () => {
    server = await startModelServer({
      scenario: scenario('moved', [
        call('write_file', { path: 'a.txt', content: 'A' }),
        call('run_command', { command: 'echo cmd > b.txt' }, 'call_2'),
        { reply: { content: 'ok' } },
      ]),
    });
    const first = makeRunner({ baseURL: server.url });
    const h = await first.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const elsewhere = tmp('elsewhere');
    const here = makeRunner({ baseURL: server.url, store: first.store, workspace: elsewhere });
    let [a] = await first.store.listApprovals(h.runId, { pendingOnly: true });
    await (await here.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: a!.tool_call_id, inputHash: a!.input_hash },
    ]))!.done;
    [a] = await first.store.listApprovals(h.runId, { pendingOnly: true });
    const done = await here.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: a!.tool_call_id, inputHash: a!.input_hash },
    ]);
    assert.equal((await done!.done).state, 'completed');
    assert.equal(fs.readFileSync(path.join(elsewhere, 'a.txt'), 'utf8'), 'A');
    assert.equal(fs.readFileSync(path.join(elsewhere, 'b.txt'), 'utf8'), 'cmd\n');
    assert.deepEqual(fs.readdirSync(first.workspace), [], 'nothing in the folder the run was recorded in');
    const effects = await first.store.listEffects(h.runId);
    assert.deepEqual(
      effects.flatMap((e) => (e.files ?? []).map((f) => f.path)),
      ['a.txt', 'b.txt'],
      'journaled relative to the folder it works in',
    );
    const ctx = (await first.store.loadSnapshot(h.runId)).snapshot.context as { workspace_root: string };
    assert.equal(ctx.workspace_root, first.workspace, 'the recorded folder is kept as history');
  });

  it('a follow-up turn records and works in its window’s folder, not the previous turn’s', async () => {
    server = await startModelServer({
      scenario: scenario('follow', [
        { reply: { content: 'first' } },
        call('write_file', { path: 'f.txt', content: 'F' }),
        { reply: { content: 'ok' } },
      ]),
    });
    const first = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
    });
    const h = await first.runner.start({ task: 't' });
    assert.equal((await h.done).state, 'completed');
    const elsewhere = tmp('elsewhere');
    const here = makeRunner({
      baseURL: server.url,
      store: first.store,
      workspace: elsewhere,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
    });
    const sent = await here.runner.send(h.runId, 'and write f.txt');
    assert.equal(sent.kind, 'follow-up');
    assert.equal((await (sent as { handle: { done: Promise<{ state: string }> } }).handle.done).state, 'completed');
    assert.equal(fs.readFileSync(path.join(elsewhere, 'f.txt'), 'utf8'), 'F');
    assert.equal(fs.existsSync(path.join(first.workspace, 'f.txt')), false);
    const ctx = (await first.store.loadSnapshot(sent.runId)).snapshot.context as { workspace_root: string };
    assert.equal(ctx.workspace_root, elsewhere);
  });
});
