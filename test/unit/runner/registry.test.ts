// The registry: schemas described from the same zod schemas that validate; bad calls of every kind
// become clear error results; nothing throws; the toolset hash.
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { ToolCall } from '../../../src/store/api/schema';
import { inputHash, inputHashFromRaw, outputHash } from '../../../src/runner/hash';
import {
  CODING_TOOLS,
  createCodingRegistry,
  defineTool,
  toolSchemaHash,
  ToolRegistry,
  type Tool,
} from '../../../src/runner/tools';
import { rmrf, tmpDir, toolCtx } from './helpers';

const raw = (name: string, args: string, id = 'call_1'): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('runner/tools registry', () => {
  const registry = createCodingRegistry();
  let root: string;
  beforeEach(() => (root = tmpDir()));
  afterEach(() => rmrf(root));

  it('offers the seven coding tools in OpenAI tools format with JSON Schema from zod', () => {
    const defs = registry.definitions();
    assert.deepEqual(
      defs.map((d) => d.function.name),
      ['read_file', 'list_files', 'search_text', 'write_file', 'edit_file', 'run_command', 'read_output', 'delegate'],
    );
    const read = defs[0]?.function;
    assert.equal(defs[0]?.type, 'function');
    assert.deepEqual(read?.parameters?.required, ['path']);
    assert.deepEqual(Object.keys((read?.parameters?.properties ?? {}) as object), ['path', 'start_line', 'end_line']);
    assert.equal(read?.parameters?.$schema, undefined, 'no $schema noise for the model');
    for (const d of defs) assert.ok(d.function.description && d.function.description.length > 20, d.function.name);
  });

  it('categories and side effects are what the policy and the effect journal expect', () => {
    const info = Object.fromEntries(CODING_TOOLS.map((t) => [t.name, `${t.category}/${t.sideEffecting}`]));
    assert.deepEqual(info, {
      read_file: 'read/false',
      list_files: 'read/false',
      search_text: 'read/false',
      write_file: 'write/true',
      edit_file: 'write/true',
      run_command: 'command/true',
      read_output: 'read/false',
      delegate: 'subagent/true',
    });
    assert.equal(createCodingRegistry({ withDelegate: false }).get('delegate'), undefined);
  });

  it('unknown tool → error result listing the available tools', async () => {
    const r = await registry.execute(raw('frobnicate', '{}'), toolCtx(root));
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^Unknown tool "frobnicate"\. Available tools: read_file, list_files, search_text, write_file, edit_file, run_command, read_output, delegate\.$/,
    );
    assert.equal(r.output_hash, outputHash(r.output));
    assert.match((await registry.execute(raw('', '{}'), toolCtx(root))).output, /has no tool name/);
  });

  it('invalid JSON arguments → error result with the parse error, what was received and the schema', async () => {
    const r = await registry.execute(raw('read_file', '{"path": "src/a.ts"'), toolCtx(root));
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^Invalid JSON in the arguments for read_file: .+\. Received: "\{\\"path\\": \\"src\/a\.ts\\"". Expected arguments \(JSON Schema\): \{"type":"object"/,
    );
  });

  it('wrong or missing fields → error result naming each field, plus the schema', async () => {
    const r = await registry.execute(raw('read_file', '{"start_line": "two"}'), toolCtx(root));
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^Invalid arguments for read_file: path: Invalid input: expected string, received undefined; start_line: Invalid input: expected number, received string\. Expected arguments/,
    );
    assert.match(
      (await registry.execute(raw('read_file', '[1,2]'), toolCtx(root))).output,
      /\(arguments\): Invalid input: expected object, received array/,
    );
    assert.match(
      (await registry.execute(raw('read_file', ''), toolCtx(root))).output,
      /path: Invalid input: expected string/,
    );
  });

  it('prepare: input_hash is the canonical hash of the raw arguments, ready before running', () => {
    const p = registry.prepare(raw('read_file', '{ "start_line": 1, "path": "a" }'));
    assert.equal(p.ok, true);
    assert.equal(p.input_hash, inputHash('read_file', { path: 'a', start_line: 1 }));
    assert.equal(p.tool?.category, 'read');
    const bad = registry.prepare(raw('read_file', '{oops'));
    assert.equal(bad.ok, false);
    assert.equal(bad.input_hash, inputHashFromRaw('read_file', '{oops'));
  });

  it('a tool that throws unexpectedly becomes an error result, never an exception', async () => {
    const boom = defineTool({
      name: 'boom',
      category: 'read',
      sideEffecting: false,
      description: 'always fails',
      args: z.object({}),
      run: async () => {
        throw new RangeError('kaboom');
      },
    }) as Tool;
    const r = await new ToolRegistry([boom]).execute(raw('boom', '{}'), toolCtx(root));
    assert.deepEqual([r.is_error, r.output], [true, 'boom failed: kaboom']);
    assert.throws(() => new ToolRegistry([boom, boom]), /duplicate tool name boom/);
  });

  it('delegate calls ctx.delegate with the task; without it, a clear error', async () => {
    const seen: string[] = [];
    const ctx = toolCtx(root, {
      delegate: async (task) => (seen.push(task), { final_text: 'child says hi', child_run_id: 'child1' }),
    });
    const ok = await registry.execute(raw('delegate', JSON.stringify({ task: 'count files' })), ctx);
    assert.deepEqual([ok.is_error, ok.output, seen], [false, 'child says hi', ['count files']]);
    const failed = await registry.execute(
      raw('delegate', '{"task":"x"}'),
      toolCtx(root, { delegate: async () => ({ final_text: 'budget hit', child_run_id: 'c2', is_error: true }) }),
    );
    assert.deepEqual([failed.is_error, failed.output], [true, 'The subagent failed (subagent run c2): budget hit']);
    const none = await registry.execute(raw('delegate', '{"task":"x"}'), toolCtx(root));
    assert.deepEqual([none.is_error, none.output], [true, 'Delegation is not available in this run.']);
  });

  it('toolSchemaHash: stable, order-independent, changes when a schema or description changes', () => {
    const h = toolSchemaHash(CODING_TOOLS);
    assert.match(h, /^[0-9a-f]{64}$/);
    assert.equal(toolSchemaHash([...CODING_TOOLS].reverse()), h);
    assert.equal(registry.schemaHash(), h);
    const [first, ...rest] = CODING_TOOLS as Tool[];
    assert.ok(first);
    assert.notEqual(toolSchemaHash([{ ...first, description: first.description + '!' }, ...rest]), h);
    assert.notEqual(
      toolSchemaHash([{ ...first, args: z.object({ path: z.string(), extra: z.number() }) }, ...rest]),
      h,
    );
    assert.notEqual(toolSchemaHash(rest), h);
  });
});
