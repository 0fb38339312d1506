// Hostile path spellings through the real runner (real loop, openai client over HTTP to the scripted
// model server, real files), with writes and reads on auto: every spelling that reaches a protected
// or secret file — by another system's reading (a backslash, case, trailing dots, `:stream`), by
// `..`, by a symlink, by a hard link — asks or is refused. Nothing protected is written, nothing
// secret reaches the model, no command runs in a folder other than the one judged.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from '../loop/support';
import { writeTree } from './files/support';
import { rmrf, tmpDir } from './helpers';

interface Case {
  tool: 'write_file' | 'edit_file' | 'read_file' | 'run_command';
  args: Record<string, unknown>;
  /** ask: the run waits for the user; refused: the call is answered with this error, nothing runs. */
  expect: 'ask' | RegExp;
  /** Links the case needs: name → target (symlink), or { hard: target } (a hard link). */
  links?: Record<string, string | { hard: string }>;
}

const BACKSLASH = /contains a backslash.*on Windows it separates folders/;
const write = (p: string): Case['args'] => ({ path: p, content: 'PWNED\n' });
const edit = (p: string, old = '[core]'): Case['args'] => ({ path: p, old_text: old, new_text: 'PWNED' });

const CASES: Case[] = [
  { tool: 'write_file', args: write('.git/x\\../../config'), expect: BACKSLASH },
  { tool: 'write_file', args: write('.git/x\\../hooks/pre-commit'), expect: BACKSLASH },
  { tool: 'write_file', args: write('.vscode\\tasks.json'), expect: BACKSLASH },
  { tool: 'write_file', args: write('.devcontainer\\devcontainer.json'), expect: BACKSLASH },
  { tool: 'write_file', args: write('.GIT/config'), expect: 'ask' },
  { tool: 'write_file', args: write('.git./config'), expect: 'ask' },
  { tool: 'write_file', args: write('.vscode /tasks.json'), expect: 'ask' },
  { tool: 'write_file', args: write('.vscode/mcp.json::$DATA'), expect: 'ask' },
  { tool: 'write_file', args: write('a/../.git/hooks/pre-commit'), expect: 'ask' },
  { tool: 'write_file', args: write('hooks/pre-commit'), expect: 'ask', links: { hooks: '.git/hooks' } },
  { tool: 'write_file', args: write('notes.md'), expect: 'ask', links: { 'notes.md': '.vscode/x.json' } },
  { tool: 'edit_file', args: edit('.git/x\\../../config'), expect: BACKSLASH },
  { tool: 'edit_file', args: edit('.GIT/config'), expect: 'ask' },
  { tool: 'edit_file', args: edit('repo/config'), expect: 'ask', links: { repo: '.git' } },
  { tool: 'edit_file', args: edit('copy.txt'), expect: 'ask', links: { 'copy.txt': { hard: '.git/config' } } },
  { tool: 'read_file', args: { path: '.aws/x\\../../credentials' }, expect: BACKSLASH },
  { tool: 'read_file', args: { path: '.aws\\credentials' }, expect: BACKSLASH },
  { tool: 'read_file', args: { path: '.AWS/credentials' }, expect: 'ask' },
  { tool: 'read_file', args: { path: '.aws/credentials.' }, expect: 'ask' },
  { tool: 'read_file', args: { path: '.aws/credentials::$DATA' }, expect: 'ask' },
  { tool: 'read_file', args: { path: 'a/../.aws/credentials' }, expect: 'ask' },
  { tool: 'read_file', args: { path: 'creds' }, expect: 'ask', links: { creds: '.aws/credentials' } },
  { tool: 'read_file', args: { path: 'plain.txt' }, expect: 'ask', links: { 'plain.txt': { hard: '.env' } } },
  { tool: 'read_file', args: { path: 'notes.txt' }, expect: 'ask', links: { 'notes.txt': { hard: 'OUTSIDE' } } },
  { tool: 'run_command', args: { command: 'touch marker', cwd: '.git/x\\../..' }, expect: BACKSLASH },
];

describe('hostile path spellings through the real runner (writes and reads on auto)', () => {
  let server: ModelServer;
  let outside: string;
  before(async () => {
    outside = tmpDir('aw-outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET-OUTSIDE\n');
    const turns = (c: Case) => [
      { reply: { content: null, tool_calls: [{ name: c.tool, arguments: c.args }] } },
      { reply: { content: 'done' } },
    ];
    server = await startModelServer({
      scenario: {
        name: 'hostile-paths',
        description: 'offline demo model: hostile path spellings',
        model: DEMO_MODEL_ID,
        turns: [{ reply: { content: 'no case' } }],
        subconversations: CASES.map((c, i) => ({ id: `c${i}`, user_contains: `[case ${i}]`, turns: turns(c) })),
      },
    });
  });
  after(async () => {
    await server.close();
    rmrf(outside);
  });

  CASES.forEach((c, i) => {
    const shown = `${c.tool} ${JSON.stringify(c.args.path ?? c.args.cwd)}${c.links ? ` (${JSON.stringify(c.links)})` : ''}`;
    it(`${shown} ${c.expect === 'ask' ? 'asks' : 'is refused'}`, async () => {
      const workspace = tmpDir('aw-hostile-');
      try {
        writeTree(workspace, {
          '.git/config': '[core]\n',
          '.git/hooks/': '',
          '.vscode/tasks.json': '{}\n',
          '.devcontainer/': '',
          '.env': 'API_KEY=SECRET-ENV\n',
          '.aws/credentials': 'aws_secret_access_key=SECRET-AWS\n',
          'a/f.txt': 'a\n',
        });
        for (const [name, to] of Object.entries(c.links ?? {})) {
          const at = path.join(workspace, name);
          fs.rmSync(at, { recursive: true, force: true });
          if (typeof to === 'string') fs.symlinkSync(to, at);
          else
            fs.linkSync(to.hard === 'OUTSIDE' ? path.join(outside, 'secret.txt') : path.join(workspace, to.hard), at);
        }
        const before = snapshot(workspace);
        const { runner, store } = makeRunner({
          baseURL: server.url,
          workspace,
          policy: {
            categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' },
            commandAllow: ['touch'],
          },
        });
        const h = await runner.start({ task: `[case ${i}]` });
        const outcome = await h.done;
        assert.deepEqual(snapshot(workspace), before, `${shown}: no file was written or created`);
        const sent = JSON.stringify(
          server.requests.filter((r) => r.conversation === `c${i}`).map((r) => r.raw_messages),
        );
        assert.ok(!sent.includes('SECRET-'), `${shown}: no secret reached the model`);
        if (c.expect === 'ask') {
          assert.equal(outcome.state, 'awaiting_approval', `${shown}: waits for the user`);
          const [pending] = await store.listApprovals(h.runId, { pendingOnly: true });
          assert.equal(pending?.tool_name, c.tool);
        } else {
          assert.equal(outcome.state, 'completed', `${shown}: answered, not asked`);
          const answer = toolAnswer(server, `c${i}`);
          assert.match(answer, c.expect, `${shown}: the model is told why`);
        }
      } finally {
        rmrf(workspace);
      }
    });
  });
});

/** Every entry of the workspace (symlinks not followed) with its content or link target. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      const rel = path.relative(root, abs);
      if (e.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(abs)}`;
      else if (e.isDirectory()) {
        out[`${rel}/`] = '';
        walk(abs);
      } else out[rel] = fs.readFileSync(abs, 'utf8');
    }
  };
  walk(root);
  return out;
}

/** The tool result the model was sent back in this conversation. */
function toolAnswer(server: ModelServer, conversation: string): string {
  const last = server.requests.filter((r) => r.conversation === conversation).at(-1);
  const tool = last?.messages.find((m) => m.role === 'tool');
  return tool?.content ?? '(no tool answer)';
}
