// Every recorded response of a real server, replayed byte for byte by the scripted server and read
// by the real `openai` client through our provider: exact text, reasoning, tool calls, finish
// reason, usage and repairs. Broken and cut-off recordings become clear, retryable errors.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createProvider, ProviderError } from '../../../src/runner/provider';
import { wireMessages } from '../../../src/runner/provider/client';
import { recordedDir, replayPieces } from '../../fixtures/modelServer/replay';
import type { ScenarioInput } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { RECORDINGS } from './recordings';

const replaying = (file: string, extra: Record<string, unknown> = {}): ScenarioInput => ({
  name: 'replay',
  description: `recorded: ${file}`,
  model: 'waypoints-demo-model',
  turns: [{ replay: { file, ...extra } }],
  subconversations: [],
});

describe('recorded responses of real servers, through the openai client', function () {
  this.timeout(20_000);
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('the project holds every recording named in SOURCES.md, and a test for each', () => {
    const files = fs
      .readdirSync(recordedDir())
      .filter((f) => /\.(sse|json)$/.test(f))
      .sort();
    const sources = fs.readFileSync(`${recordedDir()}/SOURCES.md`, 'utf8');
    for (const f of files) assert.ok(sources.includes(`| ${f} |`), `${f} has its source in SOURCES.md`);
    assert.deepEqual(RECORDINGS.map((r) => r.file).sort(), files);
  });

  it('replay sends the recorded bytes exactly (SSE split at event boundaries, nothing added)', async () => {
    for (const r of RECORDINGS.filter((x) => !x.file.includes('-jsonl'))) {
      const bytes = fs.readFileSync(`${recordedDir()}/${r.file}`);
      server = await startModelServer({ scenario: replaying(r.file) });
      const res = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: r.stream, messages: [] }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), r.stream ? 'text/event-stream' : 'application/json');
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), `${r.file}: byte for byte`);
      assert.equal(Buffer.concat(replayPieces(bytes, r.stream ? 'sse' : 'json')).length, bytes.length);
      await server.close();
      server = undefined;
    }
  });

  for (const r of RECORDINGS) {
    it(`${r.file}: ${r.server}`, async () => {
      server = await startModelServer({ scenario: replaying(r.file, { event_delay_ms: 1 }) });
      const provider = createProvider({
        baseURL: server.url,
        model: 'requested-model',
        maxRetries: 0,
        timeoutMs: 5000,
      });
      const text: string[] = [];
      const reasoning: string[] = [];
      const result = await provider.complete({
        messages: [{ role: 'user', content: 'go' }],
        stream: r.stream,
        onText: (d) => text.push(d),
        onReasoning: (d) => reasoning.push(d),
      });
      const { received_ms, ...response } = result.response;
      assert.ok(received_ms > 0);
      assert.deepEqual(response, {
        id: r.id,
        model: r.model,
        finish_reason: r.finish_reason,
        message: r.message,
        usage: r.usage,
      });
      assert.deepEqual(result.response.message.tool_calls?.map((c) => JSON.parse(c.function.arguments)) ?? [], r.args);
      assert.deepEqual(result.warnings, r.warnings);
      assert.equal(text.length, r.text_deltas, 'live text deltas');
      assert.equal(reasoning.length, r.reasoning_deltas, 'live reasoning deltas');
      if (r.stream) {
        assert.equal(text.join(''), r.message.content ?? '', 'the live text adds up to the stored answer');
        assert.equal(
          reasoning.join(''),
          r.message.reasoning ?? '',
          'the live reasoning adds up to the stored reasoning, apart from the answer',
        );
      }
      assert.equal(
        result.cost_usd,
        r.model === 'gpt-4o-2024-08-06' ? (r.usage!.input_tokens * 2.5 + r.usage!.output_tokens * 10) / 1e6 : null,
      );
    });
  }

  it('a recording cut off mid-stream (connection dropped) is a retryable bad_response, never a partial call', async () => {
    const file = 'openai-gpt4o-parallel-toolcalls-split-args.sse';
    const bytes = fs.readFileSync(`${recordedDir()}/${file}`);
    // Cut inside the second call's arguments: the first call is complete, the second is half there.
    const cut = bytes.indexOf('"arguments":": 2, "', bytes.indexOf('call_fBSgA47J5VeONggizTIvl7AH'));
    for (const at of [cut, bytes.indexOf('"finish_reason":"tool_calls"')]) {
      server = await startModelServer({ scenario: replaying(file, { cut_after_bytes: at }) });
      const provider = createProvider({ baseURL: server.url, model: 'm', maxRetries: 0, timeoutMs: 5000 });
      const err = await provider.complete({ messages: [{ role: 'user', content: 'go' }] }).catch((e: unknown) => e);
      assert.ok(err instanceof ProviderError, String(err));
      assert.equal(err.kind, 'bad_response', err.message);
      assert.equal(err.retryable, true);
      await server.close();
      server = undefined;
    }
  });

  it('a JSON body cut short is a retryable bad_response', async () => {
    server = await startModelServer({
      scenario: replaying('deepseek-reasoner-toolcall.json', { cut_after_bytes: 600 }),
    });
    const provider = createProvider({ baseURL: server.url, model: 'm', maxRetries: 0, timeoutMs: 5000, stream: false });
    const err = await provider.complete({ messages: [{ role: 'user', content: 'go' }] }).catch((e: unknown) => e);
    assert.ok(err instanceof ProviderError && err.retryable, String(err));
  });

  it('reasoning goes back to a server only as reasoning_content on a tool-call turn of a server that sent it so', () => {
    const calls = [{ id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{}' } }];
    const wire = wireMessages([
      { role: 'assistant', content: '', tool_calls: calls, reasoning: 'R1', reasoning_from: 'reasoning_content' },
      { role: 'assistant', content: 'answer', reasoning: 'R2', reasoning_from: 'reasoning_content' },
      { role: 'assistant', content: '391', reasoning: 'R3', reasoning_from: 'thinking_parts' },
      { role: 'assistant', content: null, tool_calls: calls, reasoning: 'R4', reasoning_from: 'reasoning' },
    ]);
    assert.deepEqual(wire, [
      { role: 'assistant', content: '', tool_calls: calls, reasoning_content: 'R1' },
      { role: 'assistant', content: 'answer' },
      { role: 'assistant', content: '391' },
      { role: 'assistant', content: null, tool_calls: calls },
    ]);
  });
});
