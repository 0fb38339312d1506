// The shipped scenarios, run end to end: scripted server → provider → tools on real files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createProvider, type ChatProvider } from '../../../src/runner/provider';
import { createCodingRegistry, decide, DEFAULT_POLICY } from '../../../src/runner/tools';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { blobSink, demoWorkspaceCopy, miniLoop, rmrf, toolCtx } from './helpers';

describe('scenarios end to end (offline demo model)', function () {
  this.timeout(60_000);
  let server: ModelServer;
  let ws: string;
  const provider = (over: { timeoutMs?: number } = {}): ChatProvider =>
    createProvider({ baseURL: server.url, model: 'waypoints-demo-model', maxRetries: 1, timeoutMs: over.timeoutMs ?? 5000 });
  beforeEach(() => (ws = demoWorkspaceCopy()));
  afterEach(async () => {
    await server?.close();
    rmrf(ws);
  });

  it('demo: the edits apply to a copy of demo/workspace and npm test passes afterwards', async () => {
    server = await startModelServer({ scenario: 'demo' });
    const probe = (): string => execFileSync('node', ['-e', "try{require('./src/slugify').slugify(42)}catch(e){console.log(e.message)}"], { cwd: ws }).toString().trim();
    assert.equal(probe(), 'title.toLowerCase is not a function', 'before: an accidental error');
    const run = await miniLoop(provider(), createCodingRegistry(), 'Make slugify reject non-string input with a TypeError, and add a test.', toolCtx(ws));
    assert.deepEqual(
      run.results.map((r) => r.is_error),
      [false, false, false, false, false, false],
      run.results.map((r) => r.output).join('\n---\n'),
    );
    assert.match(run.results[1]?.output ?? '', /^'use strict';/, 'read_file returned the module');
    assert.match(run.results[2]?.output ?? '', /src\/slugify\.js:\d+: function slugify\(title\) \{/);
    assert.match(run.results[5]?.output ?? '', /^exit code: 0\n/);
    assert.match(run.results[5]?.output ?? '', /pass 3/);
    assert.match(run.finalText, /offline demo model.*npm test` passes/);
    assert.equal(probe(), 'slugify expects a string, got number', 'after: the deliberate TypeError');
    // Independently of the tool: the project's own tests pass, including the new one.
    const out = execFileSync('npm', ['test'], { cwd: ws, stdio: 'pipe' }).toString();
    assert.match(out, /rejects non-string input with a TypeError/);
    assert.equal(server.stats().total, 6);
  });

  it('append: three side-effecting commands each append their line once', async () => {
    server = await startModelServer({ scenario: 'append' });
    const run = await miniLoop(provider(), createCodingRegistry(), 'append', toolCtx(ws));
    assert.equal(fs.readFileSync(path.join(ws, 'log.txt'), 'utf8'), 'step 1\nstep 2\nstep 3\n');
    assert.equal(run.results.length, 3);
    assert.match(run.finalText, /Appended steps 1 to 3/);
    // A resumed run that re-sends the conversation so far gets the next scripted turn, not step 1 again.
    const resent = await provider().complete({ messages: run.messages.slice(0, 4) });
    assert.equal(JSON.parse(resent.response.message.tool_calls?.[0]?.function.arguments ?? '{}').command, 'echo step 2 >> log.txt');
  });

  it('approval: the write asks under the default policy; approved, it runs', async () => {
    server = await startModelServer({ scenario: 'approval' });
    const reg = createCodingRegistry();
    const first = await provider().complete({ messages: [{ role: 'user', content: 'plan' }] });
    const call = first.response.message.tool_calls?.[0];
    assert.ok(call);
    const prepared = reg.prepare(call);
    assert.ok(prepared.ok && prepared.tool);
    assert.equal(decide({ toolName: call.function.name, category: prepared.tool.category, args: prepared.args }, DEFAULT_POLICY).decision, 'ask');
    const r = await reg.run(prepared, toolCtx(ws));
    assert.equal(r.output, 'Created notes/plan.md (50 bytes).');
    assert.equal(fs.readFileSync(path.join(ws, 'notes/plan.md'), 'utf8'), '# Plan\n\n1. Validate slugify input.\n2. Add a test.\n');
  });

  it('faults: every scripted fault is survived (SDK retries or a clear error), tool errors go back to the model', async () => {
    server = await startModelServer({ scenario: 'faults' });
    const sink = blobSink();
    const run = await miniLoop(provider({ timeoutMs: 300 }), createCodingRegistry(), 'survive', { ...toolCtx(ws), outputCap: 4096, putBlob: sink.putBlob });
    assert.match(run.finalText, /Survived every scripted fault/);
    assert.deepEqual(
      run.providerErrors.map((e) => e.kind),
      ['empty_response', 'bad_response', 'bad_response', 'bad_response', 'timeout'],
      'empty choices, missing message, malformed, truncated, stalled; 429/500/timeout were retried by the SDK',
    );
    const outputs = run.results.map((r) => `${r.is_error ? 'ERR' : 'ok'} ${r.output.slice(0, 60)}`);
    assert.match(outputs[1] ?? '', /^ERR Invalid JSON in the arguments for read_file/);
    assert.match(outputs[2] ?? '', /^ERR Unknown tool "frobnicate"/);
    assert.match(outputs[3] ?? '', /^ERR The tool call has no tool name/);
    assert.match(outputs[4] ?? '', /^ERR Invalid arguments for read_file: path/);
    const huge = run.results[5];
    assert.ok(huge && huge.blob && sink.blobs.get(huge.blob)?.includes('x'.repeat(300000)), 'huge command output capped into a blob');
    assert.ok(Buffer.byteLength(huge?.output ?? '') < 4096 + 200);
    const longText = run.messages.find((m) => m.role === 'assistant' && (m.content?.length ?? 0) > 100_000);
    assert.ok(longText, 'a huge assistant text arrives whole');
  });

  it('delegate: the parent delegates, the child conversation runs with its own turns', async () => {
    server = await startModelServer({ scenario: 'delegate' });
    const p = provider();
    const childRegistry = createCodingRegistry({ withDelegate: false });
    const ctx = toolCtx(ws, {
      delegate: async (task) => {
        const child = await miniLoop(p, childRegistry, task, toolCtx(ws));
        return { final_text: child.finalText, child_run_id: 'child-1' };
      },
    });
    const run = await miniLoop(p, createCodingRegistry(), 'Count the files in src using a helper.', ctx);
    assert.equal(run.results[0]?.output, '(offline demo model) There is 1 file under src: slugify.js.');
    assert.match(run.finalText, /one file under src/);
    assert.deepEqual(server.stats().per_turn, { 'main#0': 1, 'helper#0': 1, 'helper#1': 1, 'main#1': 1 });
  });
});
