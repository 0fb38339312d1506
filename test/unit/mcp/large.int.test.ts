// Large MCP results through the real runner, on stdio and streamable HTTP (the scripted server,
// test/fixtures/mcp/scripted.mjs): kept whole in blobs, capped for the model, read without blocking
// the host's event loop; over the host's limit, the call fails saying so and the server lives on.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { ServerDef } from '../../../src/runner/mcp/config';
import type { Effect } from '../../../src/store/api/schema';
import { MessageIntake } from '../../../src/runner/mcp/intake';
import { resultText } from '../../../src/runner/mcp/result';
import { openDiskStore } from '../../../src/store';
import { defs, scriptedStdio, startScriptedHttp, type HttpServer } from '../../support/mcpServers';
import { collectGarbage } from '../../support/stallSampler';
import { scaled } from '../../support/timeScale';
import { tmp } from '../loop/support';
import { closeServers, mcpRunner, type McpRunnerOptions, type McpTestRunner } from './support';

const MB = 1024 * 1024;

/**
 * The longest the event loop was blocked while `fn` ran, in ms (Node's sampler, 10 ms resolution),
 * and how far the process's memory (RSS, the worker's included) rose above where it started.
 */
/**
 * The longest the host's event loop may be blocked: 200 ms on a quiet machine, stretched by the
 * machine's load (a busy machine delays every turn of the loop, whoever blocks it); the stalls this
 * guards against lasted seconds.
 */
const STALL_BOUND = () => scaled(200);

async function sampled<T>(fn: () => Promise<T>): Promise<{ value: T; stallMs: number; peakGrowth: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  // From a collected heap: garbage the earlier work left, collected or not while `fn` runs, is not its cost.
  collectGarbage();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  h.enable();
  try {
    const value = await fn();
    return { value, stallMs: h.max / 1e6, peakGrowth: Math.max(peak, process.memoryUsage.rss()) - base };
  } finally {
    h.disable();
    clearInterval(timer);
  }
}

/** What scripted.mjs sends for `big` (lines of 99 x and a newline), as the model's text: parts joined by newlines. */
function expected(bytes: number, parts = 1): string {
  const each = Math.floor(bytes / parts);
  const one = ('x'.repeat(99) + '\n').repeat(Math.floor(each / 100)) + 'x'.repeat(each % 100);
  return Array.from({ length: parts }, () => one).join('\n');
}

describe('MCP: large results (scripted server, real runner)', function () {
  this.timeout(120_000);
  let model: ModelServer | undefined;
  let http: HttpServer | undefined;
  const runners: McpTestRunner[] = [];
  afterEach(async () => {
    await closeServers(...runners.splice(0));
    await model?.close();
    await http?.stop();
    model = undefined;
    http = undefined;
  });

  /** A run of calls to `big` (each always allowed), after a warm-up run; returns the measured run. */
  async function bigRun(servers: ServerDef[], calls: Record<string, unknown>[], o: Partial<McpRunnerOptions> = {}) {
    model = await startModelServer({
      scenario: {
        name: 'mcp-big',
        description: 'calls of big, then an answer',
        turns: [
          {
            reply: {
              content: 'Calling it.',
              tool_calls: calls.map((args) => ({ name: 'scripted__big', arguments: args })),
            },
          },
          { reply: { content: 'Done.' } },
        ],
      },
    });
    const rules = [{ server: 'scripted', tool: 'big', identity: servers[0]!.identity }];
    const warm = mcpRunner({ baseURL: model.url, servers, store: openDiskStore(tmp('mcp-warm-store')), rules, ...o });
    runners.push(warm);
    const r = mcpRunner({
      baseURL: model.url,
      servers,
      store: openDiskStore(tmp('mcp-big-store')),
      rules,
      ...o,
    });
    runners.push(r);
    // A first run loads what every first run loads (tokenizer, shell grammar) and starts the server.
    await (
      await warm.runner.start({ task: 'warm up' })
    ).done;
    await r.tools.refresh();
    model.reset();
    const {
      value: h,
      stallMs,
      peakGrowth,
    } = await sampled(async () => {
      const handle = await r.runner.start({ task: 'big' });
      await handle.done;
      return handle;
    });
    assert.equal((await r.store.getRun(h.runId))!.state, 'completed');
    const sent = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content!);
    return { r, runId: h.runId, sent, stallMs, peakGrowth, effects: await r.store.listEffects(h.runId) };
  }

  async function checkKept(r: McpTestRunner, runId: string, effect: Effect, bytes: number, parts = 1) {
    const out = effect.result!;
    const text = expected(bytes, parts);
    const note = `\\[output truncated: 32768 of ${text.length} bytes shown; full output in blob [0-9a-f]{64}\\]$`;
    assert.match(out.output, new RegExp(note));
    assert.ok(out.output.startsWith(text.slice(0, 32768)), 'the head of the text');
    const whole = await r.store.getBlob(runId, out.blob!);
    assert.ok(whole === text, 'the whole text, exactly');
    const raw = JSON.parse(await r.store.getBlob(runId, out.raw_blob!)) as CallToolResult;
    assert.equal(raw.content.length, parts, 'the exact result');
    assert.equal((raw.content[0] as { text: string }).text.length, Math.floor(bytes / parts));
  }

  it('a 95 MB result over stdio: capped for the model, whole in blobs, the host never blocked', async () => {
    const bytes = 95 * MB; // the host reads up to 100 MB; the SDK's own reader stopped at 10 MiB
    const { r, runId, sent, stallMs, peakGrowth, effects } = await bigRun(defs({ scripted: scriptedStdio() }), [
      { bytes },
    ]);
    assert.ok(sent[0]!.startsWith('x'.repeat(99) + '\n'), sent[0]!.slice(0, 200));
    await checkKept(r, runId, effects[0]!, bytes);
    console.log(
      `      (95 MB: event loop blocked ${Math.round(stallMs)} ms at most; RSS peak +${Math.round(peakGrowth / MB)} MB)`,
    );
    assert.ok(stallMs < STALL_BOUND(), `the host's event loop was blocked for ${Math.round(stallMs)} ms`);
    assert.ok(peakGrowth < 4 * bytes, `memory grew by ${Math.round(peakGrowth / MB)} MB for a ${bytes / MB} MB result`);
  });

  it('a 30 MB result over streamable HTTP: the same', async () => {
    http = await startScriptedHttp();
    const bytes = 30 * MB;
    const servers = defs({ scripted: { type: 'http', url: http.url } });
    const { r, runId, stallMs, peakGrowth, effects } = await bigRun(servers, [{ bytes }]);
    await checkKept(r, runId, effects[0]!, bytes);
    console.log(
      `      (30 MB: event loop blocked ${Math.round(stallMs)} ms at most; RSS peak +${Math.round(peakGrowth / MB)} MB)`,
    );
    assert.ok(stallMs < STALL_BOUND(), `the host's event loop was blocked for ${Math.round(stallMs)} ms`);
  });

  for (const transport of ['stdio', 'http'] as const)
    it(`over the host's limit (${transport}): the call fails saying so, the next large one is kept`, async () => {
      http = transport === 'http' ? await startScriptedHttp() : undefined;
      const servers = defs({ scripted: http ? { type: 'http', url: http.url } : scriptedStdio() });
      const limits = { maxBytes: 2 * MB, largeBytes: 256 * 1024 };
      const { r, runId, sent, effects } = await bigRun(
        servers,
        [{ bytes: 3 * MB }, { bytes: MB, parts: 3, isError: true }],
        { limits },
      );
      assert.match(
        sent[0]!,
        /^scripted__big failed: MCP server "scripted": its answer was more than 2 MB \(the most the host reads\); it was skipped, not read/,
      );
      assert.equal(effects[1]!.result!.is_error, true, "the result's isError");
      await checkKept(r, runId, effects[1]!, MB, 3);
      assert.equal(r.mcp.status()[0]!.state.kind, 'ready', 'the server lives on');
    });

  it('over the limit: a notification is dropped; a line no request can be told from closes stdio, saying why', async () => {
    const servers = defs({ scripted: scriptedStdio() });
    model = await startModelServer({
      scenario: {
        name: 'mcp-noisy',
        description: 'a server that logs 3 MB, then one that writes 3 MB of garbage',
        turns: [
          {
            reply: {
              content: 'Calling it.',
              tool_calls: [
                { name: 'scripted__noisy', arguments: { bytes: 3 * MB } },
                { name: 'scripted__garbage', arguments: { bytes: 3 * MB } },
              ],
            },
          },
          { reply: { content: 'Done.' } },
        ],
      },
    });
    const limits = { maxBytes: 2 * MB, largeBytes: 256 * 1024 };
    const rules = ['noisy', 'garbage'].map((tool) => ({ server: 'scripted', tool, identity: servers[0]!.identity }));
    const r = mcpRunner({ baseURL: model.url, servers, rules, limits });
    runners.push(r);
    const h = await r.runner.start({ task: 'noisy' });
    assert.equal((await h.done).state, 'completed');
    const sent = model.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content!);
    assert.equal(sent[0], 'said it', 'the log message over the limit was dropped, the call answered');
    assert.match(
      sent[1]!,
      /MCP server "scripted" stopped during the call: the server sent a message of more than 2 MB \(the most the host reads; 3 MB seen\), which was not read; the host closed the connection\./,
    );
  });

  it("the worker's text is resultText's, part for part", async () => {
    const results: CallToolResult[] = [
      {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'é\nb' },
        ],
      },
      {
        content: [
          { type: 'image', mimeType: 'image/png', data: 'aGVsbG8=' },
          { type: 'audio', mimeType: 'audio/wav', data: 'x'.repeat(4000) },
        ],
      },
      {
        content: [
          { type: 'resource', resource: { uri: 'file:///a', mimeType: 'text/plain', text: 'body' } },
          { type: 'resource', resource: { uri: 'file:///b', blob: 'AAAA' } },
        ],
      },
      {
        content: [
          { type: 'resource_link', name: 'n', uri: 'file:///c', description: 'd' },
          { type: 'resource_link', name: 'm', uri: 'u' },
        ],
      },
      { content: [], structuredContent: { a: 1, b: [true] } },
      { content: [{ type: 'text', text: 't' }], structuredContent: { ignored: true } },
      { content: [], isError: true },
      { content: [] },
    ];
    for (const [i, result] of results.entries()) {
      const intake = new MessageIntake({ maxBytes: MB, largeBytes: 0 }, () => undefined);
      intake.sent({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'x' } });
      const bytes = Buffer.from(JSON.stringify({ result, jsonrpc: '2.0', id: i }));
      const standIn = (await intake.convert([bytes], bytes.length)) as { result: { _meta: Record<string, string> } };
      const kept = intake.take(Object.values(standIn.result._meta)[0]!)!;
      assert.equal(kept.text.toString('utf8'), resultText(result), JSON.stringify(result));
      assert.deepEqual(JSON.parse(kept.raw.toString('utf8')), result);
    }
  });
});
