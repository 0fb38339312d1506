// The pure parts of the provider: stream assembly quirks of different servers, finish reasons, prices.
import assert from 'node:assert/strict';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { StreamAssembler, assembleCompletion } from '../../../src/runner/provider/assemble';
import { costUsd, normalizeFinishReason, normalizeModel, priceFor, ProviderError } from '../../../src/runner/provider';

const chunk = (delta: object, finish: string | null = null, extra: object = {}): ChatCompletionChunk =>
  ({
    id: 'r1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  }) as ChatCompletionChunk;

describe('runner/provider assembly and pricing', () => {
  it('joins argument fragments by index, even when two calls interleave', () => {
    const a = new StreamAssembler();
    a.push(
      chunk({
        tool_calls: [{ index: 0, id: 'c0', type: 'function', function: { name: 'read_file', arguments: '{"pa' } }],
      }),
    );
    a.push(
      chunk({
        tool_calls: [{ index: 1, id: 'c1', type: 'function', function: { name: 'list_files', arguments: '' } }],
      }),
    );
    a.push(
      chunk({
        tool_calls: [
          { index: 0, function: { arguments: 'th":"a"}' } },
          { index: 1, function: { arguments: '{}' } },
        ],
      }),
    );
    a.push(chunk({}, 'tool_calls'));
    const r = a.result();
    assert.deepEqual(r.message.tool_calls, [
      { id: 'c0', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } },
      { id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{}' } },
    ]);
    assert.equal(r.message.content, null);
  });

  it('accepts whole calls without index (Ollama style) and "stop" with tool calls', () => {
    const a = new StreamAssembler();
    a.push(
      chunk({
        tool_calls: [
          { id: 'x', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'y', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      }),
    );
    a.push(chunk({}, 'stop'));
    const r = a.result();
    assert.deepEqual(
      r.message.tool_calls?.map((c) => c.id),
      ['x', 'y'],
    );
    assert.equal(r.finish_reason, 'tool_calls');
  });

  it('repairs a call without id (deterministic) and keeps a missing name as "", with warnings', () => {
    const r = assembleCompletion({
      id: 'resp9',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ type: 'function', function: { arguments: '{}' } } as never],
          },
        },
      ],
    });
    assert.deepEqual(r.message.tool_calls, [
      { id: 'call_resp9_0', type: 'function', function: { name: '', arguments: '{}' } },
    ]);
    assert.equal(r.warnings.length, 2);
  });

  it('a usage-only chunk (empty choices) is not an empty response; no choice at all is', () => {
    const a = new StreamAssembler();
    a.push(chunk({ content: 'hi' }, 'stop'));
    a.push({
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    } as ChatCompletionChunk);
    assert.deepEqual(a.result().usage, { input_tokens: 3, output_tokens: 2, total_tokens: 5 });
    const empty = new StreamAssembler();
    empty.push({ ...chunk({}), choices: [] } as ChatCompletionChunk);
    assert.throws(
      () => empty.result(),
      (e: unknown) => e instanceof ProviderError && e.kind === 'empty_response',
    );
  });

  it('normalises finish reasons across servers', () => {
    assert.equal(normalizeFinishReason('eos', false), 'stop');
    assert.equal(normalizeFinishReason('max_tokens', false), 'length');
    assert.equal(normalizeFinishReason('function_call', false), 'tool_calls');
    assert.equal(normalizeFinishReason(null, true), 'tool_calls');
    assert.equal(normalizeFinishReason('length', true), 'length', 'a cut-off call stays visible as length');
    assert.equal(normalizeFinishReason('content_filter', false), 'content_filter');
  });

  it('prices: exact, case-insensitive, dated snapshots; unknown → null; no usage → null', () => {
    const table = { 'GPT-4o': { input_per_mtok: 2.5, output_per_mtok: 10 } };
    const usage = { input_tokens: 2_000_000, output_tokens: 100_000, total_tokens: 2_100_000 };
    assert.equal(costUsd('gpt-4o', usage, table), 6);
    assert.equal(costUsd('openai/gpt-4o-2024-08-06', usage, table), 6);
    assert.equal(priceFor('gpt-4o-mini', table), null, 'a different model is not a dated snapshot');
    assert.equal(costUsd('llama3.1:8b', usage, table), null);
    assert.equal(costUsd('gpt-4o', null, table), null);
    assert.equal(normalizeModel('  OpenAI/GPT-4o '), 'gpt-4o');
  });
});
