// Reading VS Code's mcp.json format, the identity approvals bind to, names within providers' limits,
// and inputs resolved only at start time.
import assert from 'node:assert/strict';
import { parseMcpJson, readConfig, type ConfigContext, type StdioServerDef } from '../../../src/runner/mcp/config';
import { baseEnv, inputsOf, parseEnvFile, resolveLaunch } from '../../../src/runner/mcp/launch';
import { judgeExternal, readRules } from '../../../src/runner/mcp/approvals';
import {
  externalToolName,
  jsonSchemaArgs,
  modelParameters,
  toolInputHash,
  uniqueNames,
} from '../../../src/runner/tools/external';
import type { Tool } from '../../../src/runner/tools/types';

const ctx: ConfigContext = {
  source: 'workspace',
  label: '.vscode/mcp.json',
  workspaceFolder: '/ws',
  userHome: '/home/u',
};

describe('MCP configuration (VS Code mcp.json format)', () => {
  it('reads servers and inputs, with comments and trailing commas as VS Code allows', () => {
    const text = `{
      // the file VS Code's agent mode reads
      "inputs": [{ "type": "promptString", "id": "api-key", "description": "API key", "password": true }],
      "servers": {
        "everything": { "type": "stdio", "command": "npx", "args": ["-y", "server-everything", "\${workspaceFolder}/data"], "env": { "KEY": "\${input:api-key}" } },
        "remote": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:api-key}" }, },
      },
    }`;
    const c = parseMcpJson(text, ctx);
    assert.deepEqual(c.errors, []);
    assert.equal(c.inputs[0]!.id, 'api-key');
    const [local, remote] = c.servers;
    assert.equal(local!.transport, 'stdio');
    assert.deepEqual((local as StdioServerDef).args, ['-y', 'server-everything', '/ws/data']);
    assert.equal((local as StdioServerDef).cwd, '/ws');
    assert.equal(remote!.transport, 'http', 'a url without a type is http');
    assert.deepEqual(inputsOf(local!), ['api-key']);
  });

  it('a file that does not parse is an error naming the place, never "no servers"', () => {
    const c = parseMcpJson('{ "servers": { "a": { "command": "x" } ', ctx);
    assert.equal(c.servers.length, 0);
    assert.match(c.errors[0]!, /^\.vscode\/mcp\.json: \w+ at line 1, column \d+$/);
    const bad = readConfig({ servers: { a: { type: 'stdio' }, b: { type: 'http' }, c: { args: 3 } } }, ctx);
    assert.deepEqual(
      bad.errors.map((e) => e.replace(/:.*?: /, ': ')),
      [
        '.vscode/mcp.json: "type": "stdio" needs a "command"',
        '.vscode/mcp.json: "type": "http" needs a "url"',
        '.vscode/mcp.json: args: Invalid input: expected array, received number',
      ],
    );
  });

  it('the identity binds command, arguments and environment names (not values) or the URL', () => {
    const id = (server: Record<string, unknown>) => readConfig({ servers: { s: server } }, ctx).servers[0]!.identity;
    const base = { command: 'node', args: ['server.js'], env: { TOKEN: 'a' } };
    assert.equal(id(base), id({ ...base, env: { TOKEN: 'b' } }), 'a new secret is the same server');
    assert.notEqual(id(base), id({ ...base, args: ['other.js'] }));
    assert.notEqual(id(base), id({ ...base, command: 'deno' }));
    assert.notEqual(id(base), id({ ...base, env: { TOKEN: 'a', MORE: '1' } }));
    assert.equal(id({ url: 'https://a/mcp', headers: { A: '1' } }), id({ url: 'https://a/mcp', headers: { A: '2' } }));
    assert.notEqual(id({ url: 'https://a/mcp' }), id({ url: 'https://b/mcp' }));
    assert.equal(
      id({ command: 'x', env: { K: '${input:key}' } }),
      id({ command: 'x', env: { K: 'other' } }),
      'no secret in the identity',
    );
  });

  it('inputs and ${env:…} are resolved at start, through the host; unknown variables fail the server', async () => {
    const [def] = readConfig(
      { servers: { s: { command: 'run', args: ['--key=${input:k}', '${env:HOME_X}'], env: { A: '${input:k}' } } } },
      ctx,
    ).servers;
    const asked: string[] = [];
    const launch = await resolveLaunch(def!, {
      input: async (id) => (asked.push(id), 'secret'),
      env: { HOME_X: '/x' },
      readFile: async () => '',
    });
    assert.ok(launch.transport === 'stdio');
    assert.deepEqual(launch.args, ['--key=secret', '/x']);
    assert.equal(launch.env.A, 'secret');
    assert.deepEqual(asked, ['k', 'k']);
    const [bad] = readConfig({ servers: { s: { command: 'run', args: ['${config:x}'] } } }, ctx).servers;
    await assert.rejects(
      resolveLaunch(bad!, { input: async () => '', env: {}, readFile: async () => '' }),
      /cannot resolve \$\{config:x\}/,
    );
    assert.deepEqual(parseEnvFile('# c\nexport A=1\nB="two words"\nC=3 # note\n'), { A: '1', B: 'two words', C: '3' });
  });

  it("a stdio server's base environment: the names every program needs, without case on Windows", () => {
    const host = {
      PATH: '/bin',
      HOME: '/h',
      LC_ALL: 'C',
      LANG: 'en',
      TMPDIR: '/t',
      OPENAI_API_KEY: 'k',
      AW_X: 'x',
      SHELL: '() { :; }',
    };
    assert.deepEqual(baseEnv(host, 'linux'), { PATH: '/bin', HOME: '/h', LC_ALL: 'C', LANG: 'en', TMPDIR: '/t' });
    const win = { Path: 'C:\\bin', SystemRoot: 'C:\\Windows', USERPROFILE: 'C:\\u', LC_ALL: 'C', API_KEY: 'k' };
    assert.deepEqual(baseEnv(win, 'win32'), { Path: 'C:\\bin', SystemRoot: 'C:\\Windows', USERPROFILE: 'C:\\u' });
  });

  it('tool names stay within ^[a-zA-Z0-9_-]{1,64}$ and distinct', () => {
    assert.equal(externalToolName('my server', 'read.file'), 'my_server__read_file');
    const long = externalToolName('s'.repeat(40), 't'.repeat(40));
    assert.match(long, /^[a-zA-Z0-9_-]{64}$/);
    assert.notEqual(long, externalToolName('s'.repeat(40), `${'t'.repeat(39)}u`));
  });

  it('schemas with the same $id from two servers both validate; a clash of names gets a suffix', () => {
    const schema = {
      $id: 'https://example.com/args.json',
      type: 'object',
      properties: { n: { type: 'number' } },
      required: ['n'],
    };
    const a = jsonSchemaArgs(modelParameters(schema));
    const b = jsonSchemaArgs(modelParameters({ ...schema, required: [] }));
    assert.equal(a.safeParse({}).success, false);
    assert.equal(b.safeParse({}).success, true);
    const tool = (source: string, remoteName: string) =>
      ({
        name: externalToolName(source, remoteName),
        external: { kind: 'mcp', source, remoteName, identity: '', parameters: {}, readOnlyHint: false },
      }) as unknown as Tool;
    const named = uniqueNames([tool('a.b', 'x'), tool('a_b', 'x'), tool('c', 'read_file')], new Set(['c__read_file']));
    assert.deepEqual(named.map((t) => t.name).sort(), ['a_b__x', 'a_b__x_2', 'c__read_file_2']);
  });

  it('the input hash binds the server identity: the same call on another server is another call', () => {
    const tool = (identity: string) => ({
      name: 'fs__write_file',
      external: {
        kind: 'mcp' as const,
        source: 'fs',
        remoteName: 'write_file',
        identity,
        parameters: {},
        readOnlyHint: false,
      },
    });
    const args = { path: 'a', content: 'b' };
    assert.equal(
      toolInputHash(tool('1'.repeat(64)), args),
      toolInputHash(tool('1'.repeat(64)), { content: 'b', path: 'a' }),
    );
    assert.notEqual(toolInputHash(tool('1'.repeat(64)), args), toolInputHash(tool('2'.repeat(64)), args));
  });

  it('always-allow entries from the setting: invalid ones are counted, never taken as rules', () => {
    const ok = { server: 's', tool: 't', identity: 'a'.repeat(64) };
    assert.deepEqual(readRules([ok, { server: 's' }, 'x']), { rules: [ok], invalid: 2 });
    const tool = {
      name: 's__t',
      category: 'external' as const,
      sideEffecting: true,
      description: '',
      args: null as never,
      run: async () => ({ output: '', is_error: false, blob: null }),
      external: {
        kind: 'mcp' as const,
        source: 's',
        remoteName: 't',
        identity: 'a'.repeat(64),
        parameters: {},
        readOnlyHint: true,
      },
    };
    assert.equal(judgeExternal(tool, { rules: [ok], autoReadOnly: false }).verdict, 'auto');
    assert.equal(judgeExternal(tool, { rules: [], autoReadOnly: false }).verdict, 'ask');
    assert.equal(judgeExternal(tool, { rules: [], autoReadOnly: true }).verdict, 'auto');
  });
});
