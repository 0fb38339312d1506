// The MCP client against real servers from npm: server-everything over stdio and streamable HTTP,
// server-filesystem over stdio. Tools listed and offered as `server__tool` with their schemas,
// called through the registry like the agent's own tools, results kept exactly, errors, timeouts,
// cancellation and a server killed mid-call all end the call with the server's message.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpServers } from '../../../src/runner/mcp/servers';
import { ToolRegistry } from '../../../src/runner/tools/registry';
import { CODING_TOOLS } from '../../../src/runner/tools';
import type { ToolCall } from '../../../src/store/api/schema';
import { blobSink, toolCtx } from '../runner/helpers';
import { defs, everythingStdio, filesystemStdio, startEverythingHttp, type HttpServer } from '../../support/mcpServers';
import { tmp } from '../loop/support';

function servers(callTimeoutMs = 20_000, callTotalTimeoutMs = 60_000): McpServers {
  return new McpServers({
    launch: { input: async () => 'unused', env: process.env, readFile: (p) => fs.promises.readFile(p, 'utf8') },
    clientVersion: 'test',
    startTimeoutMs: 20_000,
    callTimeoutMs: () => callTimeoutMs,
    callTotalTimeoutMs: () => callTotalTimeoutMs,
    log: () => undefined,
  });
}

function call(name: string, args: unknown, id = 'call_1'): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

describe('MCP servers (real servers from npm)', function () {
  this.timeout(60_000);
  const open: McpServers[] = [];
  const make = (...a: Parameters<typeof servers>) => {
    const s = servers(...a);
    open.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of open.splice(0)) {
      await s.stopAll();
      s.dispose();
    }
  });

  it('lists server-everything over stdio lazily and offers its tools as server__tool with their schemas', async () => {
    const mcp = make();
    mcp.setDefinitions(defs({ everything: everythingStdio() }));
    assert.equal(mcp.status()[0]!.state.kind, 'stopped', 'nothing starts before a run needs tools');
    const registry = new ToolRegistry(CODING_TOOLS, [mcp]);
    await registry.refresh();
    const status = mcp.status()[0]!;
    assert.equal(status.state.kind, 'ready');
    assert.equal(status.tools.length, 13);
    const names = registry.definitions().map((d) => d.function.name);
    for (const n of ['everything__echo', 'everything__get-sum', 'everything__trigger-long-running-operation'])
      assert.ok(names.includes(n), `${n} offered`);
    assert.ok(names.includes('read_file'), 'the own tools stay');
    for (const n of names) assert.match(n, /^[a-zA-Z0-9_-]{1,64}$/);
    const sum = registry.definitions().find((d) => d.function.name === 'everything__get-sum')!;
    assert.deepEqual(sum.function.parameters, {
      type: 'object',
      properties: {
        a: { type: 'number', description: 'First number' },
        b: { type: 'number', description: 'Second number' },
      },
      required: ['a', 'b'],
    });
    assert.equal(registry.get('everything__echo')!.category, 'external');
    assert.equal(registry.get('everything__echo')!.sideEffecting, true);
  });

  it('calls tools and keeps the exact result: text, image, structured content', async () => {
    const mcp = make();
    mcp.setDefinitions(defs({ everything: everythingStdio() }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const sink = blobSink();
    const ctx = toolCtx(tmp('mcp'), { putBlob: sink.putBlob });

    const sum = await registry.execute(call('everything__get-sum', { a: 2, b: 40 }), ctx);
    assert.equal(sum.output, 'The sum of 2 and 40 is 42.');
    assert.equal(sum.is_error, false);
    const raw = JSON.parse(sink.blobs.get(sum.raw_blob!)!) as CallToolResult;
    assert.deepEqual(raw, { content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }] });

    const image = await registry.execute(call('everything__get-tiny-image', {}), ctx);
    const rawImage = JSON.parse(sink.blobs.get(image.raw_blob!)!) as CallToolResult;
    const img = rawImage.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
    assert.equal(img.mimeType, 'image/png');
    assert.ok(Buffer.from(img.data, 'base64').subarray(1, 4).toString() === 'PNG', 'the image bytes, exactly');
    assert.match(image.output, /\[image image\/png, [\d.]+ (B|KB): shown to the user in the tool card\]/);

    const weather = await registry.execute(call('everything__get-structured-content', { location: 'Chicago' }), ctx);
    const rawWeather = JSON.parse(sink.blobs.get(weather.raw_blob!)!) as CallToolResult;
    assert.ok(rawWeather.structuredContent && typeof rawWeather.structuredContent === 'object');
    assert.deepEqual(JSON.parse(weather.output), rawWeather.structuredContent);
  });

  it('validates arguments against the server schema before calling', async () => {
    const mcp = make();
    mcp.setDefinitions(defs({ everything: everythingStdio() }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const r = await registry.execute(call('everything__get-sum', { a: 'two' }), toolCtx(tmp('mcp')));
    assert.equal(r.is_error, true);
    assert.match(r.output, /Invalid arguments for everything__get-sum/);
    assert.match(r.output, /must have required property 'b'/);
    assert.match(r.output, /a: must be number/);
  });

  it('reports progress, fails a call that outlives its deadline, and cancels on abort', async () => {
    const mcp = make(1500);
    mcp.setDefinitions(defs({ everything: everythingStdio() }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const progress: number[] = [];
    const ok = await registry.execute(call('everything__trigger-long-running-operation', { duration: 1, steps: 4 }), {
      ...toolCtx(tmp('mcp')),
      onProgress: (p) => progress.push(p.progress),
    });
    assert.equal(ok.is_error, false, ok.output);
    // Each step's notification, in order (the last may race the response and be dropped by the SDK).
    assert.ok(progress.length >= 3, `progress seen: ${progress.join(', ')}`);
    assert.deepEqual(progress, [1, 2, 3, 4].slice(0, progress.length));

    const started = Date.now();
    const slow = await registry.execute(
      call('everything__trigger-long-running-operation', { duration: 20, steps: 1 }),
      toolCtx(tmp('mcp')),
    );
    assert.equal(slow.is_error, true);
    assert.match(slow.output, /did not answer within 2 s; the call was cancelled/);
    assert.ok(Date.now() - started < 15_000, 'the deadline ended the call, not the operation');

    const controller = new AbortController();
    const pending = registry.execute(call('everything__trigger-long-running-operation', { duration: 20, steps: 2 }), {
      ...toolCtx(tmp('mcp')),
      signal: controller.signal,
    });
    setTimeout(() => controller.abort('cancel'), 200);
    const cancelled = await pending;
    assert.equal(cancelled.is_error, true);
    assert.match(cancelled.output, /cancelled; MCP server "everything" was told to stop it/);
    assert.equal(mcp.status()[0]!.state.kind, 'ready', 'the server lives on');
  });

  it('a server killed mid-call fails the call with its message and starts again on next use', async () => {
    const mcp = make();
    mcp.setDefinitions(defs({ everything: everythingStdio() }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const conn = (mcp as unknown as { connections: Map<string, { pid: number | null }> }).connections.get(
      'everything',
    )!;
    const pid = conn.pid!;
    const pending = registry.execute(
      call('everything__trigger-long-running-operation', { duration: 20, steps: 2 }),
      toolCtx(tmp('mcp')),
    );
    setTimeout(() => process.kill(pid, 'SIGKILL'), 300);
    const r = await pending;
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /MCP server "everything" stopped during the call: the server process exited; its last output: .*The call may have done part of its work/s,
    );
    assert.equal(mcp.status()[0]!.state.kind, 'stopped');
    await registry.refresh();
    assert.equal(mcp.status()[0]!.state.kind, 'ready', 'next use starts it again');
    assert.notEqual(conn.pid, pid);
  });

  it('a server that cannot start is failed with the reason, and the others still offer their tools', async () => {
    const mcp = make();
    mcp.setDefinitions(
      defs({
        broken: { command: process.execPath, args: ['-e', 'console.error("no config file found"); process.exit(3)'] },
        missing: { command: '/nonexistent/mcp-server' },
        everything: everythingStdio(),
      }),
    );
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const byName = new Map(mcp.status().map((s) => [s.name, s.state]));
    assert.equal(byName.get('everything')!.kind, 'ready');
    const broken = byName.get('broken')!;
    assert.equal(broken.kind, 'failed');
    assert.match((broken as { reason: string }).reason, /no config file found/);
    assert.equal(byName.get('missing')!.kind, 'failed');
    assert.ok(registry.get('everything__echo'));
  });

  it('a large result: the model reads the capped text, the whole text and the exact result are in blobs', async () => {
    const dir = tmp('mcp-big');
    const big = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    fs.writeFileSync(path.join(dir, 'big.txt'), big);
    const mcp = make();
    mcp.setDefinitions(defs({ fs: filesystemStdio(dir) }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const sink = blobSink();
    const r = await registry.execute(call('fs__read_text_file', { path: path.join(dir, 'big.txt') }), {
      ...toolCtx(dir, { putBlob: sink.putBlob }),
      outputCap: 8 * 1024,
    });
    assert.equal(r.is_error, false);
    assert.ok(Buffer.byteLength(r.output) < 9 * 1024, 'capped for the model');
    assert.match(r.output, /\[output truncated: \d+ of \d+ bytes shown; full output in blob [0-9a-f]{64}\]/);
    assert.equal(sink.blobs.get(r.blob!), big);
    const raw = JSON.parse(sink.blobs.get(r.raw_blob!)!) as CallToolResult;
    assert.deepEqual(raw.content, [{ type: 'text', text: big }]);
  });

  it('a server waiting for its ${input:…} never holds the run: its tools come once it is given', async () => {
    let give: (v: string) => void = () => undefined;
    const mcp = new McpServers({
      launch: {
        input: () => new Promise<string>((r) => (give = r)),
        env: process.env,
        readFile: (p) => fs.promises.readFile(p, 'utf8'),
      },
      clientVersion: 'test',
      startTimeoutMs: 5000,
      callTimeoutMs: () => 20_000,
      callTotalTimeoutMs: () => 60_000,
      log: () => undefined,
    });
    open.push(mcp);
    mcp.setDefinitions(defs({ waiting: everythingStdio({ TOKEN: '${input:token}' }), everything: everythingStdio() }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const state = new Map(mcp.status().map((s) => [s.name, s.state.kind]));
    assert.equal(state.get('waiting'), 'starting', 'still waiting for the value');
    assert.ok(registry.get('everything__echo') && !registry.get('waiting__echo'));
    const controller = new AbortController();
    const before = Date.now();
    const cancelled = registry.refresh(controller.signal);
    controller.abort('cancel');
    await cancelled;
    assert.ok(Date.now() - before < 5000, 'cancel ends the wait before the start deadline');
    give('typed');
    for (let i = 0; i < 100 && mcp.status()[0]!.state.kind !== 'ready'; i++)
      await new Promise((r) => setTimeout(r, 100));
    await registry.refresh();
    assert.ok(registry.get('waiting__echo'), 'offered once it started');
  });

  describe('over streamable HTTP', () => {
    let http: HttpServer;
    before(async () => (http = await startEverythingHttp()));
    after(async () => http?.stop());

    it('lists and calls server-everything at its URL', async () => {
      const mcp = make();
      mcp.setDefinitions(defs({ remote: { type: 'http', url: http.url } }));
      const registry = new ToolRegistry([], [mcp]);
      await registry.refresh();
      assert.equal(mcp.status()[0]!.tools.length, 13);
      const r = await registry.execute(call('remote__echo', { message: 'over http' }), toolCtx(tmp('mcp')));
      assert.equal(r.output, 'Echo: over http');
    });
  });

  it('server-filesystem: writes and reads in its folder, refuses outside it with isError', async () => {
    const dir = tmp('mcp-fs');
    const mcp = make();
    mcp.setDefinitions(defs({ fs: filesystemStdio(dir) }));
    const registry = new ToolRegistry([], [mcp]);
    await registry.refresh();
    const ctx = toolCtx(dir);
    const w = await registry.execute(
      call('fs__write_file', { path: path.join(dir, 'a.txt'), content: 'hello\n' }),
      ctx,
    );
    assert.equal(w.is_error, false, w.output);
    assert.equal(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'hello\n');
    const r = await registry.execute(call('fs__read_text_file', { path: path.join(dir, 'a.txt') }), ctx);
    assert.equal(r.output, 'hello\n');
    const out = await registry.execute(call('fs__read_text_file', { path: '/etc/hostname' }), ctx);
    assert.equal(out.is_error, true);
    assert.match(out.output, /Access denied|outside allowed/i);
  });
});
