// "Auto in sandbox" through the real runner, the scripted model over HTTP and the real bubblewrap:
// any command runs without asking, inside; a deny rule still wins; a blocked domain stops the run
// with a retry approval before the model sees the result, and "Allow for this run" runs that one
// command once more with the domain; Deny gives the model the blocked result; the checkpoint says
// under which sandbox each command ran; where the sandbox is unavailable the command asks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { countingServer } from '../../support/countingServer';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { COMMAND_POLICY } from '../../../src/runner/sandbox';
import type { ApprovalPolicy } from '../../../src/runner/tools';
import { testActions } from '../../support/actions';
import { createMemoryStore } from '../../../src/store/memory/store';
import type { CheckpointStore } from '../../../src/store/api/types';
import { makeRunner, tmp } from '../loop/support';

const command = (cmd: string, id = 'call_1') => ({
  reply: { content: null, tool_calls: [{ id, name: 'run_command', arguments: { command: cmd } }] },
});
const scenario = (turns: Scenario['turns']): Scenario => ({
  name: 'sandbox-mode',
  description: 'offline demo model: commands in the sandbox',
  model: DEMO_MODEL_ID,
  turns: [...turns, { reply: { content: 'Done.' } }],
  subconversations: [],
});

export const SANDBOX_MODE: Partial<ApprovalPolicy> = {
  categories: { read: 'auto', write: 'ask', command: 'sandbox', subagent: 'auto' },
  sandbox: { policy: { ...COMMAND_POLICY, reportDomains: true }, unavailable: null },
};

describe('auto in sandbox (real runner, real bubblewrap)', function () {
  this.timeout(60_000);
  let model: ModelServer | undefined;
  let web: Awaited<ReturnType<typeof countingServer>> | undefined;
  afterEach(async () => {
    await model?.close();
    web?.close();
    model = web = undefined;
  });

  async function started(
    turns: Scenario['turns'],
    policy: Partial<ApprovalPolicy> = SANDBOX_MODE,
    o: { store?: CheckpointStore; before?: (workspace: string) => void } = {},
  ) {
    model = await startModelServer({ scenario: scenario(turns) });
    const workspace = tmp('ws');
    o.before?.(workspace);
    const t = makeRunner({ baseURL: model.url, policy, workspace, ...(o.store ? { store: o.store } : {}) });
    const h = await t.runner.start({ task: 'Run it' });
    const out = await h.done;
    const ui = testActions({ store: t.store, runner: t.runner, workspace: t.workspace, owner: t.runner.owner });
    const file = (rel: string) => {
      const abs = path.join(t.workspace, rel);
      return fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : null;
    };
    return { ...t, ...ui, runId: h.runId, out, file };
  }
  /** What the model was shown as the result of call_1 in its last request. */
  const shown = () =>
    model!.requests
      .at(-1)!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);

  it('runs a command that is on no allow list without asking, inside the sandbox, and records the profile', async () => {
    const t = await started([command('cat /proc/1/cmdline > pid1.txt; echo made > out.txt')]);
    assert.equal(t.out.state, 'completed', t.out.detail ?? '');
    assert.deepEqual(await t.store.listApprovals(t.runId), [], 'nobody was asked');
    assert.match(t.file('pid1.txt')!, /bwrap/, "pid 1 was the sandbox's");
    assert.equal(t.file('out.txt'), 'made\n');
    const [effect] = await t.store.listEffects(t.runId);
    assert.equal(effect!.sandbox?.kind, 'sandboxed');
    assert.match(
      effect!.sandbox!.kind === 'sandboxed' ? effect!.sandbox!.summary : '',
      /^workspace writable · network: none · 512 processes/,
    );
    assert.match(effect!.sandbox!.kind === 'sandboxed' ? effect!.sandbox!.profile : '', /^[0-9a-f]{64}$/);
    assert.deepEqual(
      effect!.files?.map((f) => f.path).sort(),
      ['out.txt', 'pid1.txt'],
      'the file journal saw its writes',
    );
  });

  it('a deny rule still wins over auto in sandbox; the call beside it runs unasked', async () => {
    const calls = [
      { id: 'call_1', name: 'run_command', arguments: { command: 'rm -rf build; echo ran > denied.txt' } },
      { id: 'call_2', name: 'run_command', arguments: { command: 'echo ran > ran.txt' } },
    ];
    const t = await started([{ reply: { content: null, tool_calls: calls } }], {
      ...SANDBOX_MODE,
      commandDeny: ['rm'],
    });
    assert.equal(t.out.state, 'completed', t.out.detail ?? '');
    assert.deepEqual(await t.store.listApprovals(t.runId), [], 'nobody was asked');
    assert.equal(t.file('denied.txt'), null, 'the denied line did not run');
    assert.equal(t.file('ran.txt'), 'ran\n');
    assert.match(shown()[0]!, /^Denied by policy: Command "rm -rf build" matches the deny list entry "rm"/);
    assert.deepEqual(
      (await t.store.listEffects(t.runId)).map((e) => [e.tool_call_id, e.sandbox?.kind]),
      [['call_2', 'sandboxed']],
    );
  });

  it('a blocked domain asks before the model sees it; Allow for this run runs that one command once more, with the domain', async () => {
    web = await countingServer();
    const url = `http://127.0.0.1:${web.port}/`;
    const t = await started([command(`echo try >> tries.txt; curl -sS -m 5 ${url} > got.txt`)]);
    assert.equal(t.out.state, 'awaiting_approval', t.out.detail ?? '');
    assert.equal(model!.requests.length, 1, 'the model has not seen the blocked result yet');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.deepEqual(asked!.retry, {
      attempt: 2,
      blocked: { domains: ['127.0.0.1'], writes: [], unix_sockets: false, process_limit: false },
    });
    assert.match(asked!.reason, /^The sandbox blocked this command: it wanted network access to 127\.0\.0\.1\./);
    assert.equal(web.hits(), 0, 'the sandbox let nothing through');
    assert.equal(t.file('tries.txt'), 'try\n');

    await assert.rejects(
      t.runner.decideApprovals(t.runId, [{ kind: 'approve', toolCallId: 'call_1', inputHash: asked!.input_hash }]),
      /choose what it may do/,
      'a plain approve is not a retry: the access is chosen',
    );
    await t.actions.decide.retry(t.runId, { toolCallId: 'call_1', inputHash: asked!.input_hash }, 'allowForRun');
    const done = await until(async () => {
      const r = await t.store.getRun(t.runId);
      return r?.state === 'completed' ? r : undefined;
    });
    assert.equal(done.state, 'completed');
    assert.equal(t.file('tries.txt'), 'try\ntry\n', 'ran exactly once more');
    assert.equal(t.file('got.txt'), 'reached\n');
    assert.equal(web.hits(), 1);
    assert.match(
      shown()[0]!,
      /^\[The sandbox blocked this command \(it wanted network access to 127\.0\.0\.1\); the user allowed 127\.0\.0\.1 for this run and it ran again:\]\nexit code: 0\n/,
    );
    const [effect] = await t.store.listEffects(t.runId);
    assert.equal(effect!.attempts?.length, 1, 'the blocked attempt is kept');
    assert.deepEqual(effect!.attempts![0]!.result.blocked?.domains, ['127.0.0.1']);
    assert.match(effect!.sandbox!.kind === 'sandboxed' ? effect!.sandbox!.summary : '', /network: 127\.0\.0\.1 ·/);
    assert.notEqual(
      effect!.sandbox!.kind === 'sandboxed' && effect!.sandbox!.profile,
      effect!.attempts![0]!.sandbox?.kind === 'sandboxed' && effect!.attempts![0]!.sandbox!.profile,
      'another profile: the retry had the domain',
    );
    assert.deepEqual(effect!.files?.map((f) => [f.path, f.before.kind]).sort(), [
      ['got.txt', 'absent'],
      ['tries.txt', 'absent'],
    ]);
  });

  it('a crash while the retry runs never runs it again silently: resume asks, marked as possibly run', async () => {
    web = await countingServer();
    let failResult = false;
    const memory = createMemoryStore();
    // The window dies after the command ran and before its result was recorded.
    const store = new Proxy(memory, {
      get: (target, prop, recv) =>
        prop === 'recordResult' && failResult
          ? () => Promise.reject(new Error('the window closed (injected)'))
          : (Reflect.get(target, prop, recv) as unknown),
    });
    const t = await started(
      [command(`echo try >> tries.txt; curl -sS -m 5 http://127.0.0.1:${web.port}/`)],
      SANDBOX_MODE,
      {
        store,
      },
    );
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    failResult = true;
    await t.actions.decide.retry(t.runId, { toolCallId: 'call_1', inputHash: asked!.input_hash }, 'allowForRun');
    await until(async () => (await t.store.getRun(t.runId))?.state === 'paused_error');
    assert.equal(t.file('tries.txt'), 'try\ntry\n', 'the retry ran');
    failResult = false;
    const out = await (await t.runner.resume(t.runId, { confirmed: true })).done;
    assert.equal(out.state, 'awaiting_approval');
    const [again] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.equal(again!.uncertain, true);
    assert.match(again!.reason, /It may already have run/);
    assert.equal(t.file('tries.txt'), 'try\ntry\n', 'not run a third time');
    assert.equal(web.hits(), 1);
  });

  it('restore undoes what a sandboxed command wrote, every attempt of it', async () => {
    web = await countingServer();
    const t = await started(
      [command(`echo changed > a.txt; echo try >> tries.txt; curl -sS -m 5 http://127.0.0.1:${web.port}/ > got.txt`)],
      SANDBOX_MODE,
      { before: committed({ 'a.txt': 'original\n' }) },
    );
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    await t.actions.decide.retry(t.runId, { toolCallId: 'call_1', inputHash: asked!.input_hash }, 'allowForRun');
    await until(async () => (await t.store.getRun(t.runId))?.state === 'completed');
    assert.deepEqual(
      [t.file('a.txt'), t.file('tries.txt'), t.file('got.txt')],
      ['changed\n', 'try\ntry\n', 'reached\n'],
    );
    const seq = (await t.store.list(t.runId, { limit: 1000 })).find(
      (r) => r.phase === 'step_started' && r.step === 1,
    )!.seq;
    const record = await t.actions.restore.run({ runId: t.runId, seq }, { rewind: false });
    assert.ok(record, t.notices.said.join('\n'));
    assert.deepEqual([t.file('a.txt'), t.file('tries.txt'), t.file('got.txt')], ['original\n', null, null]);
  });

  it('Deny gives the model the blocked result; nothing runs again', async () => {
    web = await countingServer();
    const t = await started([command(`echo try >> tries.txt; curl -sS -m 5 http://127.0.0.1:${web.port}/`)]);
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    await t.actions.decide.reject(t.runId, { toolCallId: 'call_1', inputHash: asked!.input_hash }, 'no network');
    await until(async () => (await t.store.getRun(t.runId))?.state === 'completed');
    assert.equal(t.file('tries.txt'), 'try\n');
    assert.equal(web.hits(), 0);
    assert.match(
      shown()[0]!,
      new RegExp(`^exit code: \\d+\\nsandbox blocked: network: 127\\.0\\.0\\.1:${web.port} \\(not allowed\\)`),
    );
  });

  it('a blocked write offers one run outside the sandbox, as an approval; the record says it ran outside', async () => {
    const t = await started([command(`mkdir -p .vscode && echo '{}' > .vscode/settings.json`)]);
    assert.equal(t.out.state, 'awaiting_approval', t.out.detail ?? '');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.deepEqual(asked!.retry?.blocked.writes, ['.vscode/settings.json']);
    const seen = { toolCallId: 'call_1', inputHash: asked!.input_hash };
    await assert.rejects(t.actions.decide.retry(t.runId, seen, 'allowForRun'), /no domain to allow/);
    await t.actions.decide.retry(t.runId, seen, 'runOutside');
    await until(async () => (await t.store.getRun(t.runId))?.state === 'completed');
    assert.equal(t.file('.vscode/settings.json'), '{}\n');
    const [effect] = await t.store.listEffects(t.runId);
    assert.deepEqual(effect!.sandbox, {
      kind: 'unsandboxed',
      reason: 'the user approved running it once outside the sandbox after the sandbox blocked it',
    });
    assert.equal(effect!.attempts?.[0]?.sandbox?.kind, 'sandboxed');
  });

  it('resumed where the sandbox is unavailable, a command that was to run sandboxed asks instead', async () => {
    const calls = [
      { id: 'call_1', name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } },
      { id: 'call_2', name: 'run_command', arguments: { command: 'echo ran > ran.txt' } },
    ];
    const t = await started([{ reply: { content: null, tool_calls: calls } }]);
    const [write] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.equal(write!.tool_call_id, 'call_1');
    // Another machine: the same run, a sandbox that cannot start there.
    const elsewhere = makeRunner({
      baseURL: model!.url,
      store: t.store,
      workspace: t.workspace,
      policy: { ...SANDBOX_MODE, sandbox: { policy: COMMAND_POLICY, unavailable: 'no sandbox on this OS (darwin)' } },
    });
    const resumed = await elsewhere.runner.decideApprovals(t.runId, [
      { kind: 'approve', toolCallId: 'call_1', inputHash: write!.input_hash },
    ]);
    const stopped = await resumed!.done;
    assert.equal(stopped.state, 'awaiting_approval', stopped.detail ?? '');
    const [command2] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.equal(command2!.tool_call_id, 'call_2');
    assert.match(command2!.reason, /the sandbox is not available here \(no sandbox on this OS \(darwin\)\)/);
    assert.equal(t.file('ran.txt'), null, 'it did not run');
    assert.equal(t.file('a.txt'), null, 'the batch waits whole, as it does for any call that asks');
  });

  it('where the sandbox is unavailable the command asks, saying why; approved, it runs outside and the record says so', async () => {
    const t = await started([command('echo ran > ran.txt')], {
      ...SANDBOX_MODE,
      sandbox: { policy: COMMAND_POLICY, unavailable: 'bubblewrap is not installed (apt-get install -y bubblewrap)' },
    });
    assert.equal(t.out.state, 'awaiting_approval');
    const [asked] = await t.store.listApprovals(t.runId, { pendingOnly: true });
    assert.match(
      asked!.reason,
      /only in the sandbox, and the sandbox is not available here \(bubblewrap is not installed/,
    );
    assert.equal(asked!.retry, undefined);
    await t.actions.decide.approve(t.runId, { toolCallId: 'call_1', inputHash: asked!.input_hash });
    await until(async () => (await t.store.getRun(t.runId))?.state === 'completed');
    assert.equal(t.file('ran.txt'), 'ran\n');
    const [effect] = await t.store.listEffects(t.runId);
    assert.deepEqual(effect!.sandbox, { kind: 'unsandboxed', reason: 'approved by the user' });
  });
});

/** Files committed to a new git repository in the workspace: what the command scan knows their content from. */
function committed(files: Record<string, string>): (workspace: string) => void {
  return (ws) => {
    for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(ws, rel), text);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: ws, stdio: 'ignore' });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'files');
  };
}

async function until<T>(check: () => Promise<T | undefined | false>): Promise<T> {
  for (;;) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}
