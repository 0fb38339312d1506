// Between judgement and execution (through the real runner): the policy judges a batch's calls when
// the batch is planned, and an earlier call of the batch can change what a later call's path
// resolves to. The later call then refuses instead of touching a file nobody judged. And a write
// through a hard link replaces that one name: the file's other names keep their content.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from '../loop/support';
import { writeTree } from './files/support';
import { rmrf, tmpDir } from './helpers';

const AUTO = { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' } as const;
type Call = { name: string; arguments: Record<string, unknown> };

/** One response with these calls, then "done". */
async function batchServer(calls: Call[]): Promise<ModelServer> {
  return startModelServer({
    scenario: {
      name: 'held-paths',
      description: 'offline demo model: one batch',
      model: DEMO_MODEL_ID,
      turns: [{ reply: { content: null, tool_calls: calls } }, { reply: { content: 'done' } }],
      subconversations: [],
    },
  });
}

/** The tool results the model was sent, by call order. */
function toolAnswers(server: ModelServer): string[] {
  const last = server.requests.at(-1);
  return (last?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content ?? '');
}

describe('a call is held to the path the policy judged (the real runner)', () => {
  let ws: string;
  let outside: string;
  let server: ModelServer | undefined;
  beforeEach(() => {
    ws = tmpDir('aw-held-');
    outside = tmpDir('aw-held-outside-');
    writeTree(ws, { '.git/config': '[core]\n', '.git/hooks/': '', 'src/': '' });
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET-OUTSIDE\n');
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmrf(ws);
    rmrf(outside);
  });

  it('a symlink swapped by an earlier call of the batch: the write is refused, the hook never written', async () => {
    fs.symlinkSync('src', path.join(ws, 'docs')); // judged: docs/pre-commit is src/pre-commit, an ordinary file
    server = await batchServer([
      { name: 'run_command', arguments: { command: 'ln -sfn .git/hooks docs' } },
      { name: 'write_file', arguments: { path: 'docs/pre-commit', content: '#!/bin/sh\ntouch PWNED\n' } },
    ]);
    const { runner } = makeRunner({
      baseURL: server.url,
      workspace: ws,
      policy: { categories: AUTO, commandAllow: ['ln'] },
    });
    const h = await runner.start({ task: 'swap' });
    assert.equal((await h.done).state, 'completed', 'both calls ran without asking, as judged');
    assert.equal(fs.readlinkSync(path.join(ws, 'docs')), '.git/hooks', 'the command swapped the link');
    assert.ok(!fs.existsSync(path.join(ws, '.git/hooks/pre-commit')), 'the hook was not written');
    assert.ok(!fs.existsSync(path.join(ws, 'src/pre-commit')), 'nor the file that was judged');
    const [, write] = toolAnswers(server);
    assert.match(
      write!,
      /^Path "docs\/pre-commit" now leads to "\.git\/hooks\/pre-commit", not to "src\/pre-commit" as when this call was judged/,
    );
  });

  it('a hard link made by an earlier call of the batch: the read is refused, the secret never sent', async () => {
    server = await batchServer([
      { name: 'run_command', arguments: { command: `ln ${path.join(outside, 'secret.txt')} notes.txt` } },
      { name: 'read_file', arguments: { path: 'notes.txt' } },
    ]);
    const { runner } = makeRunner({
      baseURL: server.url,
      workspace: ws,
      policy: { categories: AUTO, commandAllow: ['ln'] },
    });
    const h = await runner.start({ task: 'link' });
    assert.equal((await h.done).state, 'completed');
    assert.equal(fs.statSync(path.join(ws, 'notes.txt')).nlink, 2, 'the command made the link');
    const [, read] = toolAnswers(server);
    assert.match(read!, /^"notes\.txt" has gained other names \(hard links\) since this call was judged/);
    assert.ok(
      !JSON.stringify(server.requests.map((r) => r.raw_messages)).includes('SECRET-'),
      'the secret stayed home',
    );
  });

  it('writing through a hard link replaces that name only: the other names keep their content', async () => {
    fs.linkSync(path.join(ws, '.git/config'), path.join(ws, 'copy.txt'));
    fs.linkSync(path.join(outside, 'secret.txt'), path.join(ws, 'notes.txt'));
    server = await batchServer([
      { name: 'write_file', arguments: { path: 'copy.txt', content: 'written\n' } },
      { name: 'write_file', arguments: { path: 'notes.txt', content: 'written too\n' } },
    ]);
    const { runner } = makeRunner({ baseURL: server.url, workspace: ws, policy: { categories: AUTO } });
    const h = await runner.start({ task: 'through links' });
    assert.equal((await h.done).state, 'completed');
    assert.equal(fs.readFileSync(path.join(ws, 'copy.txt'), 'utf8'), 'written\n');
    assert.equal(fs.readFileSync(path.join(ws, '.git/config'), 'utf8'), '[core]\n', 'the protected name is unchanged');
    assert.equal(
      fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'),
      'SECRET-OUTSIDE\n',
      'so is the outside one',
    );
    assert.equal(fs.statSync(path.join(ws, '.git/config')).nlink, 1, 'the written name is a file of its own now');
  });
});
