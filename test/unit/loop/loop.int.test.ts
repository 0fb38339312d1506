// The two scripted scenarios end to end through the real loop (the crash/integration tier): the demo
// on a copy of demo/workspace, whose own tests must pass afterwards, and every fault a model or its
// server can produce, some of which wait out the client's deadline.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { PHASES } from '../../../src/store/api/schema';
import { makeRunner, phases, REPO, tmp } from './support';

describe('agent loop: scenarios end to end', function () {
  this.timeout(60_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('demo scenario: reads, edits slugify.js, adds a test and runs npm test on a copy of demo/workspace', async () => {
    server = await startModelServer({ scenario: 'demo' });
    const workspace = tmp('demo');
    fs.cpSync(path.join(REPO, 'demo/workspace'), workspace, { recursive: true });
    const { runner, store } = makeRunner({
      baseURL: server.url,
      workspace,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    const handle = await runner.start({
      task: 'Make slugify reject non-string input with a TypeError, and add a test.',
    });
    const out = await handle.done;
    assert.equal(out.state, 'completed', out.detail ?? '');
    assert.match(fs.readFileSync(path.join(workspace, 'src/slugify.js'), 'utf8'), /TypeError/);
    execFileSync('node', ['--test'], { cwd: workspace, stdio: 'pipe' }); // the edited project's tests pass
    const seen = new Set(await phases(store, handle.runId));
    // A short run needs neither subagents nor a condense (context/*.test.ts write those).
    for (const p of PHASES.filter((p) => !p.includes('subagent') && !p.includes('condense')))
      assert.ok(seen.has(p), `phase ${p} written`);
    const snap = (await store.loadSnapshot(handle.runId))!.snapshot;
    assert.equal(snap.state, 'completed');
    assert.equal(snap.llm_calls, server.stats().total);
    assert.ok(snap.tool_calls >= 4);
    assert.equal(snap.total_cost_usd, 0, 'the scripted demo model is priced (free)');
  });

  it('bad model output becomes clear tool errors or a resumable pause, never a crash (faults scenario)', async () => {
    server = await startModelServer({ scenario: 'faults' });
    const { runner, store } = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    });
    let h = await runner.start({ task: 'faults' });
    let out = await h.done;
    // Faults that outlast the SDK's retries pause the run; resuming continues from the same point.
    for (let i = 0; i < 10 && out.state === 'paused_error'; i++) {
      assert.match(out.detail ?? '', /resume/i);
      h = await runner.resume(h.runId);
      out = await h.done;
    }
    assert.equal(out.state, 'completed', out.detail ?? '');
    const tools = (await store.loadSnapshot(h.runId))!.snapshot.messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    assert.ok(
      tools.some((t) => /Invalid JSON in the arguments/.test(t)),
      'malformed JSON arguments → tool error',
    );
    assert.ok(
      tools.some((t) => /Unknown tool/.test(t)),
      'unknown tool → tool error',
    );
    assert.ok(
      tools.some((t) => /output truncated/.test(t)),
      'huge output → truncated with a note',
    );
  });
});
