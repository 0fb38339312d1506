// Hostile model output through the real runner (the real openai client over real HTTP to the scripted
// server, real tools on a temp folder): a 100 MB answer, a 100 MB word, arguments nested 10,000 deep,
// and a 64 KB word that is within every bound. Whatever arrives, the host's event loop is never kept
// busy for more than 200 ms and its memory grows by at most 4× the response bound; the model or the
// user is told clearly what happened, and the run resumes. The server runs in a process of its own,
// so what is measured is the host's work alone.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import { countText } from '../../../src/runner/context/tokens';
import { createProvider } from '../../../src/runner/provider';
import { MAX_RESPONSE_BYTES } from '../../../src/runner/provider/guardedFetch';
import { MAX_JSON_DEPTH } from '../../../src/common/jsonBounds';
import type { ToolItem } from '../../../src/views/run/items';
import { EDIT_MAX_CHARS } from '../../../src/views/run/bounds';
import { buildRunItems } from '../../../src/views/run/transcript';
import { loadRunData } from '../../../src/views/run/runData';
import { StallSampler, mb, type StallReport } from '../../support/stallSampler';
import { idle } from '../views/run/support';
import { startModelServerProcess, type ModelServerProcess } from '../../support/modelServerProcess';
import { until } from '../actions/support';
import { makeRunner, type TestRunner } from './support';

/** Longest the loop may be kept busy: the bound (the sampler counts CPU time only, see stallSampler.ts). */
const MAX_STALL_MS = 200;
/** The memory bound: 4× the most the host reads of one response. */
const MAX_GROWTH = 4 * MAX_RESPONSE_BYTES;
const HUNDRED_MB = 100 * 1024 * 1024;

const scenario = (turns: Scenario['turns']): Scenario => ({
  name: 'bounds',
  description: 'offline demo model: hostile output',
  model: DEMO_MODEL_ID,
  turns,
  subconversations: [],
});
const done = { reply: { content: 'Done.' } };

function assertBounded(r: StallReport, what: string): void {
  assert.ok(r.maxStallMs <= MAX_STALL_MS, `${what}: the event loop was busy for ${r.maxStallMs.toFixed(0)} ms`);
  assert.ok(r.peakGrowthBytes <= MAX_GROWTH, `${what}: memory grew by ${mb(r.peakGrowthBytes)}`);
}

/** A word of lowercase letters (one pre-token for o200k: the costliest kind to count), the same every run. */
function word(chars: number): string {
  let x = 12345;
  let s = '';
  for (let i = 0; i < chars; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += String.fromCharCode(97 + (x % 26));
  }
  return s;
}

describe('hostile model output is bounded: the host neither stalls nor fills up, and the run resumes', function () {
  this.timeout(120_000);
  let server: ModelServerProcess | undefined;

  before(async () => {
    // Not the input's cost, so done before anything is measured: loading o200k's ranks (once per
    // process) and the runner's modules, and a first pass through the paths the tests take (a tool
    // error, an approval, a pause).
    await countText('warm up the tokenizer');
    const warm = await startModelServerProcess(
      scenario([
        {
          reply: {
            content: null,
            tool_calls: [
              { name: 'write_file', arguments: { path: 1 } },
              { name: 'write_file', arguments: { path: 'a.txt', content: 'a' } },
            ],
          },
        },
        { fault: { kind: 'truncated_stream' }, times: 1, ...done },
      ]),
    );
    const t = makeRunner({
      baseURL: warm.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'ask', subagent: 'auto' } },
    });
    const h = await t.runner.start({ task: 'warm up' });
    assert.equal((await h.done).state, 'awaiting_approval');
    const [a] = await t.store.listApprovals(h.runId, { pendingOnly: true });
    const decided = await t.runner.decideApprovals(h.runId, [
      { kind: 'approve', toolCallId: a!.tool_call_id, inputHash: a!.input_hash },
    ]);
    assert.equal((await decided!.done).state, 'paused_error');
    assert.equal((await (await t.runner.resume(h.runId)).done).state, 'completed');
    buildRunItems(await loadRunData(t.store, (await t.store.getRun(h.runId))!, 1, idle));
    await warm.close();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** Starts a run of `task` and waits for it to stop, sampling all the while. */
  async function sampledRun(t: TestRunner, task: string) {
    const { result, report } = await StallSampler.during(async () => {
      const h = await t.runner.start({ task });
      return { runId: h.runId, out: await h.done };
    });
    return { ...result, report };
  }

  async function sampledResume(t: TestRunner, runId: string) {
    return StallSampler.during(async () => (await t.runner.resume(runId)).done);
  }

  const floods: {
    name: string;
    flood: NonNullable<Scenario['turns'][number]['flood']>;
    stream: boolean;
    says: RegExp;
  }[] = [
    {
      name: 'a streamed answer of 100 MB of text',
      flood: { into: 'content', chars: HUNDRED_MB, char: 'a', tool: 'write_file' },
      stream: true,
      says: /answer passed 8,388,608 characters of text and tool-call arguments/,
    },
    {
      name: 'one 100 MB word as tool-call arguments, streamed in pieces',
      flood: { into: 'arguments', chars: HUNDRED_MB, char: 'a', tool: 'write_file' },
      stream: true,
      says: /answer passed 8,388,608 characters of text and tool-call arguments/,
    },
    {
      name: 'one 100 MB word as tool-call arguments, in a single stream event',
      flood: { into: 'arguments', chars: HUNDRED_MB, char: 'a', tool: 'write_file', piece: HUNDRED_MB },
      stream: true,
      says: /too large: the stream event was larger than 8 MiB/,
    },
    {
      name: 'a 100 MB answer in one JSON body (streaming off)',
      flood: { into: 'content', chars: HUNDRED_MB, char: 'a', tool: 'write_file' },
      stream: false,
      says: /too large: the response was larger than 8 MiB/,
    },
  ];
  for (const c of floods)
    it(`${c.name}: reading stops at the bound, the run pauses saying why, and resumes`, async () => {
      server = await startModelServerProcess(scenario([{ flood: c.flood, flood_times: 1, ...done }]));
      const url = server.url;
      const t = makeRunner({
        baseURL: url,
        deps: { provider: (model) => createProvider({ baseURL: url, model, maxRetries: 0, stream: c.stream }) },
      });
      const { runId, out, report } = await sampledRun(t, 'answer at length');
      assert.equal(out.state, 'paused_error', out.detail ?? '');
      assert.match(out.detail ?? '', c.says);
      assertBounded(report, c.name);
      const sent = await until('the server to stop writing', async () => {
        const flood = (await server!.requests())[0]?.flood;
        return flood?.ended && flood;
      });
      assert.ok(sent.cut, 'the host closed the connection before the end');
      assert.ok(sent.written < HUNDRED_MB / 2, `the server wrote ${mb(sent.written)} before the host stopped reading`);

      const resumed = await sampledResume(t, runId);
      assert.equal(resumed.result.state, 'completed', resumed.result.detail ?? '');
      assert.equal((await t.store.loadSnapshot(runId)).snapshot.final_text, 'Done.');
      assertBounded(resumed.report, `${c.name} (resume)`);
    });

  it('a 64 KB word in tool-call arguments, within every bound, is counted without stalling, before and after a resume', async () => {
    const content = word(64 * 1024);
    server = await startModelServerProcess(
      scenario([
        { reply: { content: null, tool_calls: [{ name: 'write_file', arguments: { path: 'word.txt', content } }] } },
        done,
      ]),
    );
    const t = makeRunner({
      baseURL: server.url,
      policy: { categories: { read: 'auto', write: 'ask', command: 'ask', subagent: 'auto' } },
    });
    const first = await sampledRun(t, 'write the word');
    assert.equal(first.out.state, 'awaiting_approval', first.out.detail ?? '');
    assertBounded(first.report, 'the answer with the word');

    // Approving resumes the run: a new execution counts the conversation again, the word included.
    const [approval] = await t.store.listApprovals(first.runId, { pendingOnly: true });
    const { result, report } = await StallSampler.during(async () => {
      const resumed = await t.runner.decideApprovals(first.runId, [
        { kind: 'approve', toolCallId: approval!.tool_call_id, inputHash: approval!.input_hash },
      ]);
      return resumed!.done;
    });
    assert.equal(result.state, 'completed', result.detail ?? '');
    assertBounded(report, 'the resume');
    assert.equal(fs.readFileSync(path.join(t.workspace, 'word.txt'), 'utf8'), content);
    // The word was counted: the request after it is at least a token per 4 of its characters larger.
    const sizes = (await t.store.list(first.runId, { limit: 100 }))
      .filter((r) => r.phase === 'pre_llm')
      .map((r) => (r.payload.context as { tokens: number }).tokens)
      .sort((a, b) => a - b);
    assert.ok(sizes.at(-1)! - sizes[0]! >= content.length / 4, `prompt sizes ${sizes.join(', ')}`);
  });

  it('arguments nested 10,000 deep get a clear tool error, the run goes on, and its view shows the call', async () => {
    const deep = `{"path":"deep.txt","content":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const srv = (server = await startModelServerProcess(
      scenario([{ reply: { content: null, tool_calls: [{ name: 'write_file', arguments: deep }] } }, done]),
    ));
    const t = makeRunner({
      baseURL: srv.url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
    });
    const { runId, out, report } = await sampledRun(t, 'write something deep');
    assert.equal(out.state, 'completed', out.detail ?? '');
    assertBounded(report, 'deep arguments');
    const told = (await srv.requests())[1]!.messages.find((m) => m.role === 'tool')!.content ?? '';
    assert.match(told, new RegExp(`nest more than ${MAX_JSON_DEPTH} levels deep`));
    assert.ok(!fs.existsSync(path.join(t.workspace, 'deep.txt')));

    const items = buildRunItems(await loadRunData(t.store, (await t.store.getRun(runId))!, 1, idle));
    const card = items.find((i): i is ToolItem => i.kind === 'tool')!;
    assert.equal(card.status, 'error');
    assert.ok(card.argumentsJson.startsWith('{"path":"deep.txt"'), 'shown as the model sent it');
    assert.ok(card.argumentsJson.length <= EDIT_MAX_CHARS, 'bounded for the view');
  });

  it('arguments over the arguments bound get a clear tool error instead of being parsed, hashed or shown', async () => {
    const big = JSON.stringify({ path: 'big.txt', content: 'lorem ipsum dolor sit amet '.repeat(80_000) });
    const srv = (server = await startModelServerProcess(
      scenario([{ reply: { content: null, tool_calls: [{ name: 'write_file', arguments: big }] } }, done]),
    ));
    // Not streamed: the scripted server would send these arguments in 7-character events.
    const url = srv.url;
    const t = makeRunner({
      baseURL: url,
      policy: { categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } },
      deps: { provider: (model) => createProvider({ baseURL: url, model, stream: false }) },
    });
    const { runId, out, report } = await sampledRun(t, 'write something big');
    assert.equal(out.state, 'completed', out.detail ?? '');
    assertBounded(report, 'large arguments');
    const told = (await srv.requests())[1]!.messages.find((m) => m.role === 'tool')!.content ?? '';
    assert.match(
      told,
      /^Arguments for write_file refused: The arguments are 2,160,\d{3} characters long; at most 1,048,576/,
    );
    assert.ok(!fs.existsSync(path.join(t.workspace, 'big.txt')));
    const items = buildRunItems(await loadRunData(t.store, (await t.store.getRun(runId))!, 1, idle));
    const card = items.find((i): i is ToolItem => i.kind === 'tool')!;
    assert.ok(card.argumentsJson.length <= EDIT_MAX_CHARS, 'cut for the view');
    assert.equal(card.argumentsEditable, false, 'a cut copy is not offered for editing');
  });
});
