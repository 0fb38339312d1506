// Protected files and secret-like files (issue 18, finding 4 and the secret-reads finding): writes to
// files that make something run ask even when writes run without asking; reads of files that may
// hold secrets ask even when reads do not; search_text leaves those files out. Judged on the
// resolved path (normalised, symlinks followed, case and Windows name quirks ignored).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  callPolicy,
  createCodingRegistry,
  DEFAULT_POLICY,
  fileRules,
  type ApprovalPolicy,
  type PolicyVerdict,
  type Tool,
} from '../../../src/runner/tools';
import { DEMO_MODEL_ID } from '../../fixtures/modelServer/scenario';
import { startModelServer } from '../../fixtures/modelServer/server';
import { makeRunner } from '../loop/support';
import { ENGINES, writeTree } from './files/support';
import { rmrf, tmpDir, toolCtx } from './helpers';

const AUTO: ApprovalPolicy = {
  ...DEFAULT_POLICY,
  categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' },
};
const registry = createCodingRegistry();
const tool = (name: string): Tool => registry.get(name)!;

describe('protected files and secret-like files', () => {
  let ws: string;
  beforeEach(() => {
    ws = tmpDir('aw-protected-');
    writeTree(ws, { '.git/hooks/': '', '.git/config': '[core]\n', 'src/a.ts': 'x\n', 'sub/.git/config': '' });
  });
  afterEach(() => rmrf(ws));

  const verdict = ({ verdict, reason }: PolicyVerdict) => ({ verdict, reason });
  const write = (p: string, policy = AUTO) =>
    verdict(callPolicy(policy, ws)(tool('write_file'), { path: p, content: 'x' }));
  const edit = (p: string) =>
    verdict(callPolicy(AUTO, ws)(tool('edit_file'), { path: p, old_text: 'a', new_text: 'b' }));
  const read = (p: string, policy = AUTO) => verdict(callPolicy(policy, ws)(tool('read_file'), { path: p }));

  it('writes to .git (any depth, the .git file too), .vscode and *.code-workspace ask even when writes are auto, and say why', () => {
    assert.deepEqual(write('.git/hooks/pre-commit'), {
      verdict: 'ask',
      reason:
        '".git/hooks/pre-commit" is a protected file: it can run code (git hooks, and config such as core.fsmonitor that git status runs). Writes to it always ask.',
    });
    for (const p of [
      '.git/config',
      '.git',
      'sub/.git/config',
      'vendor/lib/.git/hooks/post-checkout',
      '.vscode/tasks.json',
      '.vscode/settings.json',
      '.vscode/extensions/x.js',
      'app.code-workspace',
      'tools/dev.code-workspace',
    ]) {
      assert.equal(write(p).verdict, 'ask', p);
      assert.equal(edit(p).verdict, 'ask', `edit_file ${p}`);
    }
    assert.match(write('.vscode/tasks.json').reason, /^"\.vscode\/tasks\.json" is a protected file: it can run code/);
    assert.deepEqual(write('src/a.ts'), { verdict: 'auto', reason: 'write tools run without asking.' });
    assert.equal(write('src/git/hooks.ts').verdict, 'auto');
    assert.equal(write('docs/.gitignore').verdict, 'auto');
  });

  it("VS Code's own sensitive-file defaults ask too (package.json, lock files, .npmrc, agents' hooks …)", () => {
    for (const p of [
      'package.json',
      'web/package.json',
      'package-lock.json',
      'pnpm-lock.yaml',
      'yarn.lock',
      'Cargo.toml',
      '.npmrc',
      '.gitattributes',
      '.env',
      'App.csproj',
      'build.gradle.kts',
      '.github/hooks/pre.json',
      '.claude/settings.json',
      '.husky/pre-commit',
      '.devcontainer/devcontainer.json',
    ])
      assert.equal(write(p).verdict, 'ask', p);
    assert.equal(write('src/package.ts').verdict, 'auto');
  });

  it('the path is judged after normalisation: ./ and .., case, trailing dots, NTFS streams', () => {
    for (const p of [
      './.git/../.git/hooks/x',
      'src/../.git/config',
      '.GIT/hooks/pre-commit',
      '.Git/CONFIG',
      '.VSCode/Tasks.json',
      '.git./hooks/x',
      '.git /hooks/x',
      '.git::$INDEX_ALLOCATION/hooks/x',
      `${ws}/.git/hooks/abs`,
    ]) {
      const d = write(p);
      assert.equal(d.verdict, 'ask', p);
      assert.match(d.reason, /is a protected file/, p);
    }
    assert.match(
      write('src/../.git/config').reason,
      /^"src\/\.\.\/\.git\/config" \(→ "\.git\/config"\) is a protected/,
    );
  });

  it('symlinks are followed: a link into .git (existing or dangling) is the protected file it lands on', () => {
    fs.symlinkSync(path.join(ws, '.git/hooks'), path.join(ws, 'docs'));
    fs.symlinkSync('.git/hooks/pre-push', path.join(ws, 'notes.md')); // dangling: writing it creates the hook
    fs.symlinkSync('.vscode', path.join(ws, 'settings-dir')); // dangling folder link
    const d = write('docs/pre-commit');
    assert.equal(d.verdict, 'ask');
    assert.match(d.reason, /^"docs\/pre-commit" \(→ "\.git\/hooks\/pre-commit"\) is a protected file/);
    assert.equal(write('notes.md').verdict, 'ask');
    assert.equal(write('settings-dir/tasks.json').verdict, 'ask');
  });

  it('deny stays deny, ask stays ask (with the protected reason)', () => {
    const deny = { ...AUTO, categories: { ...AUTO.categories, write: 'deny' as const } };
    assert.equal(write('.git/config', deny).verdict, 'deny');
    assert.equal(write('.git/config', DEFAULT_POLICY).verdict, 'ask');
    assert.match(write('.git/config', DEFAULT_POLICY).reason, /protected file/);
    const restricted = { ...AUTO, restricted: true };
    assert.equal(write('.git/config', restricted).verdict, 'deny');
  });

  it('reads of secret-like files ask even when reads are auto; templates and look-alikes do not', () => {
    for (const p of [
      '.env',
      '.env.local',
      'config/.env.production',
      '.ENV',
      '.npmrc',
      '.netrc',
      '.pypirc',
      '.git-credentials',
      'deploy/id_rsa',
      'keys/id_ed25519',
      'certs/server.pem',
      'certs/server.key',
      'signing.p12',
      '.ssh/config',
      'infra/terraform.tfstate',
    ]) {
      const d = read(p);
      assert.equal(d.verdict, 'ask', p);
      assert.match(d.reason, /may hold secrets: keys, tokens or passwords in it would go to the model provider/, p);
    }
    for (const p of ['.env.example', 'config/.env.sample', 'src/env.ts', 'docs/keys.md', 'id_rsa.pub', 'README.md'])
      assert.equal(read(p).verdict, 'auto', p);
    const deny = { ...AUTO, categories: { ...AUTO.categories, read: 'deny' as const } };
    assert.equal(read('.env', deny).verdict, 'deny');
  });

  it('a setting adds patterns (never removes the defaults); a pattern that cannot be used is reported, not applied', () => {
    const { rules, problems } = fileRules({
      protect: ['scripts/deploy/**', '*.sh', '', 'x'.repeat(600)],
      secrets: ['secrets/**', '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}'],
    });
    assert.equal(problems.length, 3, problems.join('\n'));
    const p = { ...AUTO, fileRules: rules };
    assert.match(write('scripts/deploy/run.txt', p).reason, /is on your agentWaypoints\.approval\.protectedFiles list/);
    assert.equal(write('bin/x.sh', p).verdict, 'ask');
    assert.equal(write('.git/config', p).verdict, 'ask', 'defaults stay');
    assert.match(read('secrets/prod.yaml', p).reason, /is on your agentWaypoints\.approval\.privateFiles list/);
    assert.equal(read('.env', p).verdict, 'ask');
  });

  for (const engine of ENGINES) {
    it(`search_text leaves secret-like files out and says so (${engine.name})`, async () => {
      writeTree(ws, {
        '.env': 'API_KEY=sk-live-123\n',
        'config/.env.production': 'API_KEY=sk-prod-456\n',
        'certs/server.key': 'API_KEY in a key file\n',
        '.env.example': 'API_KEY=changeme\n',
        'src/config.ts': 'const API_KEY = process.env.API_KEY;\n',
      });
      const reg = createCodingRegistry({ files: engine.finder() });
      const r = await reg.execute(
        { id: 'c1', type: 'function', function: { name: 'search_text', arguments: '{"pattern":"API_KEY"}' } },
        toolCtx(ws),
      );
      assert.equal(r.is_error, false, r.output);
      const lines = r.output.split('\n');
      assert.deepEqual(lines.slice(0, 2), [
        '.env.example:1: API_KEY=changeme',
        'src/config.ts:1: const API_KEY = process.env.API_KEY;',
      ]);
      assert.ok(!r.output.includes('sk-live') && !r.output.includes('sk-prod'), r.output);
      assert.equal(
        lines[2],
        '[left out: 3 files that may hold secrets (.env, certs/server.key, config/.env.production); read_file shows one after the user approves]',
      );
    });
  }
});

describe('search_text and files with other names (hard links)', () => {
  let ws: string;
  let outside: string;
  beforeEach(() => {
    ws = tmpDir('aw-linked-search-');
    outside = tmpDir('aw-linked-outside-');
    fs.writeFileSync(path.join(outside, 'credentials'), 'API_KEY=sk-outside-789\n');
    writeTree(ws, { '.env': 'API_KEY=sk-live-123\n', 'src/config.ts': 'const API_KEY = process.env.API_KEY;\n' });
    fs.linkSync(path.join(outside, 'credentials'), path.join(ws, 'notes.txt'));
    fs.linkSync(path.join(ws, '.env'), path.join(ws, 'src/env.txt'));
  });
  afterEach(() => {
    rmrf(ws);
    rmrf(outside);
  });

  for (const engine of ENGINES) {
    it(`leaves them out, as it leaves secret-like files out, and says so (${engine.name})`, async () => {
      const reg = createCodingRegistry({ files: engine.finder() });
      for (const args of [{ pattern: 'API_KEY' }, { pattern: 'API_KEY', path: 'notes.txt' }]) {
        const r = await reg.execute(
          { id: 'c1', type: 'function', function: { name: 'search_text', arguments: JSON.stringify(args) } },
          toolCtx(ws),
        );
        assert.equal(r.is_error, false, r.output);
        assert.ok(!r.output.includes('sk-'), r.output);
        assert.match(
          r.output,
          /\[left out: \d files? with other names \(hard links\) that may belong to secret files \((notes\.txt|src\/env\.txt)/,
        );
      }
    });
  }
});

describe('protected files in a run (the real loop, writes and reads on auto)', () => {
  it('a write to .git/hooks/pre-commit and a read of .env wait for the user, with the reason on the approval; other files run', async () => {
    const call = (name: string, args: Record<string, unknown>) => ({
      reply: { content: null, tool_calls: [{ name, arguments: args }] },
    });
    const server = await startModelServer({
      scenario: {
        name: 'protected',
        description: 'offline demo model: protected files',
        model: DEMO_MODEL_ID,
        turns: [
          call('write_file', { path: 'notes.md', content: 'plain\n' }),
          call('write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch PWNED\n' }),
          call('read_file', { path: '.env' }),
          { reply: { content: 'done' } },
        ],
        subconversations: [],
      },
    });
    const workspace = tmpDir('aw-protected-run-');
    writeTree(workspace, { '.git/hooks/': '', '.env': 'API_KEY=sk-live-123\n' });
    try {
      const { runner, store } = makeRunner({ baseURL: server.url, workspace, policy: { categories: AUTO.categories } });
      const h = await runner.start({ task: 'protected' });
      assert.equal((await h.done).state, 'awaiting_approval');
      assert.equal(fs.readFileSync(path.join(workspace, 'notes.md'), 'utf8'), 'plain\n', 'an ordinary write ran');
      assert.ok(!fs.existsSync(path.join(workspace, '.git/hooks/pre-commit')), 'the hook was not written');
      const [hook] = await store.listApprovals(h.runId, { pendingOnly: true });
      assert.equal(hook?.tool_name, 'write_file');
      assert.match(hook!.reason, /^"\.git\/hooks\/pre-commit" is a protected file: it can run code/);

      const next = await runner.decideApprovals(h.runId, [
        { kind: 'approve', toolCallId: hook!.tool_call_id, inputHash: hook!.input_hash },
      ]);
      assert.equal((await next!.done).state, 'awaiting_approval');
      assert.ok(fs.existsSync(path.join(workspace, '.git/hooks/pre-commit')), 'written once approved');
      const [env] = await store.listApprovals(h.runId, { pendingOnly: true });
      assert.equal(env?.tool_name, 'read_file');
      assert.match(env!.reason, /^"\.env" may hold secrets/);
      const rejected = await runner.decideApprovals(h.runId, [
        { kind: 'reject', toolCallId: env!.tool_call_id, inputHash: env!.input_hash, reason: 'no' },
      ]);
      assert.equal((await rejected!.done).state, 'completed');
      const sent = JSON.stringify(server.requests.map((r) => r.raw_messages));
      assert.ok(!sent.includes('sk-live-123'), 'the secret never reached the model');
    } finally {
      await server.close();
      rmrf(workspace);
    }
  });
});
