// A stdio MCP server from npm (server-filesystem) started through the sandbox hook of the MCP
// client: it runs and answers, but its writes — into the workspace (read-only for servers by
// default) or outside it — are refused and the server says so in its result; the same server
// unsandboxed writes both, so the refusals are the sandbox's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpConnection } from '../../../src/runner/mcp/connection';
import { MCP_SERVER_POLICY, type SandboxProfile } from '../../../src/runner/sandbox';
import { defs, filesystemStdio } from '../../support/mcpServers';
import { rmrf } from '../runner/helpers';

describe('a stdio MCP server in the sandbox (real bubblewrap, server-filesystem from npm)', function () {
  this.timeout(60_000);
  let ws: string;
  let outside: string;
  const open: McpConnection[] = [];

  beforeEach(() => {
    // Outside /tmp: the sandbox's /tmp is its own, and a folder there would not even be seen.
    ws = fs.realpathSync(fs.mkdtempSync('/var/tmp/aw-sbx-mcp-ws-'));
    outside = fs.realpathSync(fs.mkdtempSync('/var/tmp/aw-sbx-mcp-out-'));
    fs.writeFileSync(path.join(ws, 'README.md'), 'hello from the workspace\n');
  });
  afterEach(async () => {
    for (const c of open.splice(0)) {
      await c.stop();
      c.dispose();
    }
    rmrf(ws);
    rmrf(outside);
  });

  function connect(sandbox: SandboxProfile | undefined): McpConnection {
    const [def] = defs({ fs: { ...filesystemStdio(ws), args: [...(filesystemStdio(ws).args as string[]), outside] } });
    const c = new McpConnection(def!, {
      launch: { input: async () => 'unused', env: process.env, readFile: (p) => fs.promises.readFile(p, 'utf8') },
      clientVersion: 'test',
      startTimeoutMs: 20_000,
      log: () => undefined,
      sandbox: () => sandbox,
    });
    open.push(c);
    return c;
  }

  async function callText(c: McpConnection, name: string, args: Record<string, unknown>) {
    const r = await c.callTool(name, args, {
      signal: new AbortController().signal,
      timeoutMs: 20_000,
      totalTimeoutMs: 30_000,
    });
    const result = r.result as CallToolResult;
    return {
      isError: result.isError === true,
      text: result.content.map((p) => ('text' in p ? p.text : '')).join('\n'),
    };
  }

  it('runs and reads the workspace, but cannot write it or outside it, and says so', async () => {
    const c = connect({ ...MCP_SERVER_POLICY, workspaceRoot: ws });
    await c.ensureStarted();
    assert.equal(c.state.kind, 'ready', JSON.stringify(c.state));
    const read = await callText(c, 'read_text_file', { path: path.join(ws, 'README.md') });
    assert.match(read.text, /hello from the workspace/);
    const inside = await callText(c, 'write_file', { path: path.join(ws, 'planted.js'), content: 'x' });
    assert.equal(inside.isError, true);
    assert.match(inside.text, /EROFS|read-only/i);
    const out = await callText(c, 'write_file', { path: path.join(outside, 'planted.txt'), content: 'x' });
    assert.equal(out.isError, true);
    assert.match(out.text, /EROFS|read-only/i);
    assert.deepEqual(fs.readdirSync(ws), ['README.md']);
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('the same server unsandboxed writes both (what the sandbox takes away)', async () => {
    const c = connect(undefined);
    assert.equal((await callText(c, 'write_file', { path: path.join(ws, 'a.txt'), content: 'x' })).isError, false);
    assert.equal((await callText(c, 'write_file', { path: path.join(outside, 'b.txt'), content: 'x' })).isError, false);
    assert.ok(fs.existsSync(path.join(ws, 'a.txt')) && fs.existsSync(path.join(outside, 'b.txt')));
  });

  it('a server whose sandbox cannot start fails with the reason, and nothing runs', async () => {
    const c = connect({ ...MCP_SERVER_POLICY, workspaceRoot: ws, allowedDomains: ['registry.npmjs.org'] });
    await c.ensureStarted();
    assert.equal(c.state.kind, 'failed');
    assert.match((c.state as { reason: string }).reason, /no network yet/);
  });
});
