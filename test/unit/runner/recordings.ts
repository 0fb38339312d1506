// What each recorded response of a real server (test/fixtures/providers/recorded, sources in its
// SOURCES.md) must assemble into: exact text, reasoning, tool calls, finish reason and usage. Read
// off the recordings by hand; a change in the assembly that alters any of it fails a test.
import { z } from 'zod';
import type { AssistantMessage, Usage } from '../../../src/store/api/schema';
import { defineTool, type Tool } from '../../../src/runner/tools';

export interface Recording {
  file: string;
  /** Who sent it (README's list of servers covered). */
  server: string;
  stream: boolean;
  id: string | null;
  model: string;
  finish_reason: string;
  message: AssistantMessage;
  /** The arguments of each tool call, parsed. */
  args: unknown[];
  usage: Usage | null;
  warnings: string[];
  /** Live deltas the stream delivers (empty strings are not deltas). */
  text_deltas: number;
  reasoning_deltas: number;
  /** What the tool stubs below answer (or the registry, for arguments a stub refuses), in call order. */
  tool_outputs: (string | RegExp)[];
}

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});
/** The ledger's cached and reasoning parts are expected exactly where the server reported them. */
const u = (
  input_tokens: number,
  output_tokens: number,
  total_tokens: number,
  details: { cached_tokens?: number; reasoning_tokens?: number } = {},
): Usage => ({ input_tokens, output_tokens, total_tokens, ...details });
const FLORENCE = '{"location":"Florence, Italy"}';
const ADD_SPACED = '{"a": 2, "b": 3}';

export const RECORDINGS: Recording[] = [
  {
    file: 'openai-gpt4o-parallel-toolcalls-split-args.sse',
    server: 'OpenAI (gpt-4o), streamed, two parallel calls',
    stream: true,
    id: 'chatcmpl-DuLdMEdkw5VsZSxKY3i9G934hT7LM',
    model: 'gpt-4o-2024-08-06',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [
        call('call_ehIWdjL1abZk1h8FWGLQ0Hie', 'add', ADD_SPACED),
        call('call_fBSgA47J5VeONggizTIvl7AH', 'multiply', ADD_SPACED),
      ],
    },
    args: [
      { a: 2, b: 3 },
      { a: 2, b: 3 },
    ],
    usage: u(106, 50, 156, { cached_tokens: 0, reasoning_tokens: 0 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['5', '6'],
  },
  {
    file: 'openai-gpt4o-toolcall.json',
    server: 'OpenAI (gpt-4o), not streamed',
    stream: false,
    id: 'chatcmpl-DuLdFsxvqE5UB68GmaA3Q8Q8xWTTt',
    model: 'gpt-4o-2024-08-06',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [call('call_IUonKM9GCNis5eMRHuusMqoy', 'weather', FLORENCE)],
    },
    args: [{ location: 'Florence, Italy' }],
    usage: u(61, 16, 77, { cached_tokens: 0, reasoning_tokens: 0 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['Florence, Italy: 40 C'],
  },
  {
    file: 'openai-gpt4o-text-then-toolcall-usage-last-jsonl.sse',
    server: 'OpenAI (gpt-4o), streamed: text, then a call with arguments "" then "{}"',
    stream: true,
    id: 'chatcmpl-E6yvi7cuDcHZEHTMxcLDyf3CMKIO2',
    model: 'gpt-4o-2024-08-06',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: 'PRE_TOOL',
      tool_calls: [call('call_NZa7xqfefoaMI2YYHowVXVlU', 'weather', '{}')],
    },
    args: [{}],
    usage: u(58, 12, 70, { cached_tokens: 0, reasoning_tokens: 0 }),
    warnings: [],
    text_deltas: 2,
    reasoning_deltas: 0,
    tool_outputs: [/^Invalid arguments for weather: location/],
  },
  {
    file: 'azure-gpt5mini-toolcall-prompt-filter-first-chunk.sse',
    server: 'Azure OpenAI (gpt-5-mini, /openai/v1), streamed, a prompt-filter chunk first',
    stream: true,
    id: 'chatcmpl-DuLYtUePDgoybMkZrAI7utkb2fiRp',
    model: 'gpt-5-mini-2025-08-07',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [call('call_tWA8BJziGlCyhQEXhEHn6eXK', 'weather', FLORENCE)],
    },
    args: [{ location: 'Florence, Italy' }],
    usage: u(145, 154, 299, { cached_tokens: 0, reasoning_tokens: 128 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['Florence, Italy: 40 C'],
  },
  {
    file: 'deepseek-reasoner-toolcall.json',
    server: 'DeepSeek (deepseek-reasoner), not streamed, reasoning_content beside a call',
    stream: false,
    id: '7a630f5b-b7e6-4878-82f8-d77db164d42b',
    model: 'deepseek-reasoner',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: '',
      tool_calls: [call('call_00_9V0vrf86Pc9aelHCJMZqnJBo', 'weather', '{"location": "San Francisco"}')],
      reasoning:
        'The user is asking for the weather in San Francisco. I have a weather tool available that can get weather information for a location. I should use this tool with the location parameter set to "San Francisco". Let me call the weather function.',
      reasoning_from: 'reasoning_content',
    },
    args: [{ location: 'San Francisco' }],
    usage: u(339, 92, 431, { cached_tokens: 320, reasoning_tokens: 48 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['San Francisco: 40 C'],
  },
  {
    file: 'gemini-20flash-toolcall-empty-id-no-index-finish-stop.sse',
    server: 'Google Gemini OpenAI-compatible (gemini-2.0-flash), streamed: one chunk, id "", no index, finish "stop"',
    stream: true,
    id: null,
    model: 'gemini-2.0-flash',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [call('call_noid_0', 'return_list_of_int', '{"value":[1,2,3,4,5]}')],
    },
    args: [{ value: [1, 2, 3, 4, 5] }],
    usage: u(25, 8, 33),
    warnings: ['tool call #0 had no id; assigned call_noid_0'],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['[1,2,3,4,5]'],
  },
  {
    file: 'groq-kimik2-text-then-two-toolcalls-whole.sse',
    server: 'Groq (moonshotai/kimi-k2-instruct), streamed: text, then two whole calls',
    stream: true,
    id: 'chatcmpl-a74ad02f-fb60-461d-8042-24ab0b962b51',
    model: 'moonshotai/kimi-k2-instruct-0905',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: "I'll perform both addition and multiplication on the numbers 2 and 3 for you.",
      tool_calls: [
        call('functions.add:0', 'add', '{"a":2,"b":3}'),
        call('functions.multiply:1', 'multiply', '{"a":2,"b":3}'),
      ],
    },
    args: [
      { a: 2, b: 3 },
      { a: 2, b: 3 },
    ],
    usage: u(201, 58, 259),
    warnings: [],
    text_deltas: 17,
    reasoning_deltas: 0,
    tool_outputs: ['5', '6'],
  },
  {
    file: 'llamacpp-gptoss20b-reasoning-toolcall.sse',
    server: 'llama.cpp llama-server (gpt-oss-20b), streamed: reasoning_content, then a call',
    stream: true,
    id: 'chatcmpl-lz25qRqbjeLO8nbwF4DJYJQc7KjZrG2z',
    model: 'openai/gpt-oss-20b',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [call('g2KOIWzn722hzEaZQmNVP4roUPEiYafL', 'weather', FLORENCE)],
      reasoning: 'User wants weather in Florence, Italy. We can use the weather function.',
      reasoning_from: 'reasoning_content',
    },
    args: [{ location: 'Florence, Italy' }],
    usage: u(139, 41, 180),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 15,
    tool_outputs: ['Florence, Italy: 40 C'],
  },
  {
    file: 'mistral-small-thinking-content-array.json',
    server: 'Mistral (mistral-small-latest, thinking), not streamed: content as typed parts',
    stream: false,
    id: '6f23a5ac0e2d4ca3a1ccee9c2215fb63',
    model: 'mistral-small-latest',
    finish_reason: 'stop',
    message: {
      role: 'assistant',
      content: '391',
      reasoning:
        'Okay, the user is asking for the product of 17 and 23. Let me calculate that.\n\nFirst, I recall that 17 times 20 is 340. Then, 17 times 3 is 51. Adding those together gives 340 + 51 = 391.\n\nSo, 17 multiplied by 23 equals 391.',
      reasoning_from: 'thinking_parts',
    },
    args: [],
    usage: u(28, 94, 122, { cached_tokens: 0 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: [],
  },
  {
    file: 'ollama-llama31-toolcall-no-index-finish-stop.sse',
    server: 'Ollama (llama3.1), streamed: a whole call without index, finish "stop", no usage',
    stream: true,
    id: 'chatcmpl-908',
    model: 'llama3.1',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: '',
      tool_calls: [call('call_28sm5ma0', 'return_list_of_int', '{"value":"[1, 2, 3, 4, 5]"}')],
    },
    args: [{ value: '[1, 2, 3, 4, 5]' }],
    usage: null,
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: [/^Invalid arguments for return_list_of_int: value/],
  },
  {
    file: 'openrouter-claude45haiku-bedrock-two-toolcalls-empty-arg-deltas.sse',
    server: 'OpenRouter → Amazon Bedrock (claude-4.5-haiku), streamed: comments, empty argument deltas, finish twice',
    stream: true,
    id: 'gen-1777319805-xxNVuABVmXTjx5tL2OBX',
    model: 'anthropic/claude-4.5-haiku-20251001',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: '',
      tool_calls: [
        call('toolu_bdrk_01L6Xsux1sqgXSsd2xi64poF', 'add', ADD_SPACED),
        call('toolu_bdrk_014pCKe2FHbyMZerLY1JxG4a', 'multiply', ADD_SPACED),
      ],
    },
    args: [
      { a: 2, b: 3 },
      { a: 2, b: 3 },
    ],
    usage: u(685, 120, 805, { cached_tokens: 0, reasoning_tokens: 0 }),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['5', '6'],
  },
  {
    file: 'vllm-llama31-8b-usage-every-chunk-trailing-empty-args.sse',
    server: 'vLLM-backed endpoint (llama-3.1-8b), streamed: usage on every chunk, a trailing empty argument delta',
    stream: true,
    id: 'chat-2267f7e2910a4254bac0650ba74cfc1c',
    model: 'meta/llama-3.1-8b-instruct:fp8',
    finish_reason: 'tool_calls',
    message: {
      role: 'assistant',
      content: '',
      tool_calls: [
        call('chatcmpl-tool-b3b307239370432d9910d4b79b4dbbaa', 'searchGoogle', '{"query": "latest news on ai"}'),
      ],
    },
    args: [{ query: 'latest news on ai' }],
    usage: u(226, 20, 246),
    warnings: [],
    text_deltas: 0,
    reasoning_deltas: 0,
    tool_outputs: ['results for "latest news on ai"'],
  },
];

/** The tools the recordings call, as the agent's registry would hold them (read-only, so they run without approval). */
export const RECORDED_TOOLS: readonly Tool[] = [
  defineTool({
    name: 'weather',
    category: 'read',
    sideEffecting: false,
    description: 'Get weather information for a location',
    args: z.object({ location: z.string() }),
    run: async ({ location }) => ({ output: `${location}: 40 C`, is_error: false, blob: null }),
  }),
  defineTool({
    name: 'add',
    category: 'read',
    sideEffecting: false,
    description: 'Add two numbers',
    args: z.object({ a: z.number(), b: z.number() }),
    run: async ({ a, b }) => ({ output: String(a + b), is_error: false, blob: null }),
  }),
  defineTool({
    name: 'multiply',
    category: 'read',
    sideEffecting: false,
    description: 'Multiply two numbers',
    args: z.object({ a: z.number(), b: z.number() }),
    run: async ({ a, b }) => ({ output: String(a * b), is_error: false, blob: null }),
  }),
  defineTool({
    name: 'return_list_of_int',
    category: 'read',
    sideEffecting: false,
    description: 'Return a list of integers',
    args: z.object({ value: z.array(z.number().int()) }),
    run: async ({ value }) => ({ output: JSON.stringify(value), is_error: false, blob: null }),
  }),
  defineTool({
    name: 'searchGoogle',
    category: 'read',
    sideEffecting: false,
    description: 'Search the web',
    args: z.object({ query: z.string() }),
    run: async ({ query }) => ({ output: `results for "${query}"`, is_error: false, blob: null }),
  }),
] as readonly Tool[];
