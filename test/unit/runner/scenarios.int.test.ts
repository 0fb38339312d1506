// The shipped scenarios, run end to end through the product's own loop (AgentRunner →
// RunExecution): scripted server → provider → checkpoints → tools on real files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createProvider } from '../../../src/runner/provider';
import type { RuntimeSnapshot } from '../../../src/store/api/schema';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner, type TestRunner } from '../loop/support';
import { demoWorkspaceCopy, rmrf } from './helpers';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

/** Tool results in order, as `ok …` / `ERR …` (the content the model saw). */
function results(snap: RuntimeSnapshot): string[] {
  const errors = new Map(snap.tool_executions.map((e) => [e.tool_call_id, e.is_error]));
  return snap.messages.flatMap((m) =>
    m.role === 'tool' ? [`${errors.get(m.tool_call_id) ? 'ERR' : 'ok'} ${m.content}`] : [],
  );
}

describe('scenarios end to end through the run loop (offline demo model)', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let ws: string;
  const runner = (over: Partial<Parameters<typeof makeRunner>[0]> = {}): TestRunner =>
    makeRunner({ baseURL: server.url, workspace: ws, policy: AUTO, ...over });
  const finished = async (t: TestRunner, task: string) => {
    const h = await t.runner.start({ task });
    const out = await h.done;
    return { out, snap: (await t.store.loadSnapshot(h.runId))!.snapshot, runId: h.runId };
  };
  beforeEach(() => (ws = demoWorkspaceCopy()));
  afterEach(async () => {
    await server?.close();
    rmrf(ws);
  });

  it('demo: the edits apply to a copy of demo/workspace and npm test passes afterwards', async () => {
    server = await startModelServer({ scenario: 'demo' });
    const probe = (): string =>
      execFileSync('node', ['-e', "try{require('./src/slugify').slugify(42)}catch(e){console.log(e.message)}"], {
        cwd: ws,
      })
        .toString()
        .trim();
    assert.equal(probe(), 'title.toLowerCase is not a function', 'before: an accidental error');
    const { out, snap } = await finished(
      runner(),
      'Make slugify reject non-string input with a TypeError, and add a test.',
    );
    assert.equal(out.state, 'completed', out.detail ?? '');
    const r = results(snap);
    assert.deepEqual(
      r.map((x) => x.split(' ')[0]),
      ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'],
      r.join('\n---\n'),
    );
    assert.match(r[1] ?? '', /^ok 'use strict';/, 'read_file returned the module');
    assert.match(r[2] ?? '', /src\/slugify\.js:\d+: function slugify\(title\) \{/);
    assert.match(r[5] ?? '', /^ok exit code: 0\n/);
    assert.match(r[5] ?? '', /pass 3/);
    assert.match(out.finalText ?? '', /offline demo model.*npm test` passes/);
    assert.equal(probe(), 'slugify expects a string, got number', 'after: the deliberate TypeError');
    const npmOut = execFileSync('npm', ['test'], { cwd: ws, stdio: 'pipe' }).toString();
    assert.match(npmOut, /rejects non-string input with a TypeError/);
    assert.equal(server.stats().total, 6);
    assert.equal(snap.llm_calls, 6);
  });

  it('append: three side-effecting commands each append their line once', async () => {
    server = await startModelServer({ scenario: 'append' });
    const { out, snap } = await finished(runner(), 'append');
    assert.equal(fs.readFileSync(path.join(ws, 'log.txt'), 'utf8'), 'step 1\nstep 2\nstep 3\n');
    assert.equal(results(snap).length, 3);
    assert.match(out.finalText ?? '', /Appended steps 1 to 3/);
    assert.deepEqual(server.stats().per_turn, { 'main#0': 1, 'main#1': 1, 'main#2': 1, 'main#3': 1 });
  });

  it('approval: the write asks under the default policy; approved, it runs once', async () => {
    server = await startModelServer({ scenario: 'approval' });
    const t = runner({ policy: {} });
    const h = await t.runner.start({ task: 'plan' });
    assert.equal((await h.done).state, 'awaiting_approval');
    assert.equal(fs.existsSync(path.join(ws, 'notes/plan.md')), false, 'nothing written before the decision');
    const [a] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    assert.equal(a?.tool_name, 'write_file');
    const out = await (await t.runner.decideApprovals(h.runId, [
      { toolCallId: a.tool_call_id, inputHash: a.input_hash, kind: 'approve' },
    ]))!.done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.equal(
      fs.readFileSync(path.join(ws, 'notes/plan.md'), 'utf8'),
      '# Plan\n\n1. Validate slugify input.\n2. Add a test.\n',
    );
    assert.match(
      results((await t.store.loadSnapshot(h.runId))!.snapshot)[0] ?? '',
      /^ok Created notes\/plan\.md \(50 bytes\)\.$/,
    );
  });

  it('faults: every scripted fault pauses the run with a clear reason (or is retried by the SDK); resume continues; tool errors go back to the model', async () => {
    server = await startModelServer({ scenario: 'faults' });
    const t = runner({
      deps: {
        provider: (model) => createProvider({ baseURL: server.url, model, maxRetries: 1, timeoutMs: 300 }),
        outputCap: 4096,
      },
    });
    const h = await t.runner.start({ task: 'survive' });
    const pauses: string[] = [];
    let out = await h.done;
    while (out.state === 'paused_error' && pauses.length < 10) {
      pauses.push(out.detail ?? '');
      out = await (await t.runner.resume(h.runId)).done;
    }
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.match(out.finalText ?? '', /Survived every scripted fault/);
    const expected = [
      /returned no choices/,
      /ended before a finish_reason/,
      /Malformed response/,
      /ended before a finish_reason/,
      /stalled: no data within the timeout/,
    ];
    assert.equal(pauses.length, expected.length, pauses.join('\n'));
    pauses.forEach((p, i) => assert.match(p, expected[i]!, pauses.join('\n')));
    const snap = (await t.store.loadSnapshot(h.runId))!.snapshot;
    const r = results(snap).map((x) => x.slice(0, 64));
    assert.match(r[1] ?? '', /^ERR Invalid JSON in the arguments for read_file/);
    assert.match(r[2] ?? '', /^ERR Unknown tool "frobnicate"/);
    assert.match(r[3] ?? '', /^ERR The tool call has no tool name/);
    assert.match(r[4] ?? '', /^ERR Invalid arguments for read_file: path/);
    const huge = snap.tool_executions[5];
    const hugeMessage = snap.messages.find((m) => m.role === 'tool' && m.tool_call_id === huge?.tool_call_id);
    assert.ok(
      hugeMessage && Buffer.byteLength(hugeMessage.content ?? '') < 4096 + 300,
      'huge command output capped for the model',
    );
    const effect = (await t.store.listEffects(h.runId)).find((e) => e.tool_call_id === huge?.tool_call_id);
    assert.ok(
      effect?.result?.blob && (await t.store.getBlob(h.runId, effect.result.blob))?.includes('x'.repeat(300000)),
      'the full output kept with the run',
    );
    assert.ok(
      snap.messages.some((m) => m.role === 'assistant' && (m.content?.length ?? 0) > 100_000),
      'a huge assistant text arrives whole',
    );
  });

  it('delegate: the parent delegates, the child run has its own conversation and checkpoints', async () => {
    server = await startModelServer({ scenario: 'delegate' });
    const t = runner();
    const { out, snap } = await finished(t, 'Count the files in src using a helper.');
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.deepEqual(results(snap), ['ok (offline demo model) There is 1 file under src: slugify.js.']);
    assert.match(out.finalText ?? '', /one file under src/);
    assert.deepEqual(server.stats().per_turn, { 'main#0': 1, 'helper#0': 1, 'helper#1': 1, 'main#1': 1 });
    const child = snap.subagent_executions[0]!;
    assert.equal((await t.store.getRun(child.child_run_id))?.state, 'completed');
  });
});
