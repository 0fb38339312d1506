// The folder a command runs in is judged: inside .git, or in a repository other than the
// workspace's own (a bare-looking folder, a `.git` link, a nested repository), an allowed line
// asks (policy) — and run_command, let through by the policy, refuses to run there (the folder as
// it is when it runs). And should both be missed, the argv runner's git still does not take such a
// folder for a repository, nor run its programs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolCall } from '../../../src/store/api/schema';
import {
  callPolicy,
  createCodingRegistry,
  DEFAULT_POLICY,
  loadShellGrammar,
  type ApprovalPolicy,
} from '../../../src/runner/tools';
import { cwdConcern } from '../../../src/runner/tools/commandCwd';
import { fileTargets } from '../../../src/runner/tools/protectedFiles';
import { chooseLaunch, startLaunch } from '../../../src/runner/tools/shell/launch';
import { rmrf, toolCtx } from './helpers';
import { hostileWorkspace, noTrapRan, type Hostile } from './shell/hostileRepo';

const registry = createCodingRegistry();
const runCommand = registry.get('run_command')!;
const policy: ApprovalPolicy = { ...DEFAULT_POLICY, platform: 'linux', commandAllow: ['git status', 'ls'] };
const call = (args: unknown): ToolCall => ({
  id: 'call_cwd',
  type: 'function',
  function: { name: 'run_command', arguments: JSON.stringify(args) },
});

describe('runner/tools the folder a command runs in', function () {
  this.timeout(60_000);
  let h: Hostile;
  before(() => loadShellGrammar());
  beforeEach(() => {
    h = hostileWorkspace();
    fs.mkdirSync(path.join(h.ws, 'src/deep'), { recursive: true });
    fs.symlinkSync('vendor/evil', path.join(h.ws, 'alias-to-evil'));
  });
  afterEach(() => rmrf(h.ws));

  it('cwdConcern: .git and other repositories, through symlinks and `..`; the workspace and its folders are fine', () => {
    const concern = (cwd: string) => cwdConcern(fileTargets(runCommand, { command: 'ls', cwd }, h.ws).cwd);
    for (const ok of ['.', '', 'src', 'src/deep', './src/../src', 'vendor', 'missing'])
      assert.equal(concern(ok), null, ok);
    assert.match(concern('.git')!, /^"\.git" is inside a \.git folder$/);
    assert.match(concern('.git/hooks')!, /inside a \.git folder/);
    assert.match(concern('src/../.git')!, /inside a \.git folder/);
    assert.match(concern('vendor/evil')!, /^"vendor\/evil" looks like a bare git repository/);
    assert.match(concern('vendor/evil/objects')!, /^"vendor\/evil\/objects" is in "vendor\/evil", which looks like/);
    assert.match(concern('alias-to-evil')!, /^"vendor\/evil" looks like a bare git repository/, 'the real folder');
    assert.match(concern('linked')!, /^"linked" has a \.git file/);
    assert.match(concern('nested')!, /^"nested" is a git repository of its own/);
  });

  it('the policy asks for an allowed line there, with the reason; elsewhere it stays auto', () => {
    const judge = callPolicy(policy, h.ws);
    assert.equal(judge(runCommand, { command: 'git status', cwd: 'src' }).verdict, 'auto');
    const there = judge(runCommand, { command: 'git status', cwd: 'vendor/evil' });
    assert.equal(there.verdict, 'ask');
    assert.match(there.reason, /another repository's configuration than the workspace's: "vendor\/evil" looks like/);
    const auto = { ...policy, categories: { ...policy.categories, command: 'auto' as const } };
    assert.equal(
      callPolicy(auto, h.ws)(runCommand, { command: 'make', cwd: 'nested' }).verdict,
      'ask',
      'auto mode too',
    );
    const denied = { ...policy, commandDeny: ['git'] };
    assert.equal(callPolicy(denied, h.ws)(runCommand, { command: 'git status', cwd: 'nested' }).verdict, 'deny');
  });

  it('run_command let through by the policy refuses such a folder as it is when it runs; approved by the user it runs', async () => {
    const run = (cwd: string, approvedBy?: 'user' | 'policy') =>
      registry.execute(call({ command: 'ls', cwd }), toolCtx(h.ws, { approvedBy }));
    const refused = await run('vendor/evil', 'policy');
    assert.equal(refused.is_error, true);
    assert.match(refused.output, /^Not run: "vendor\/evil" looks like a bare git repository .*the user's approval\.$/);
    assert.match((await run('alias-to-evil')).output, /^Not run: "vendor\/evil" looks like/);
    assert.match((await run('vendor/evil', 'user')).output, /^exit code: 0\n--- stdout ---\nHEAD\n/);
    assert.match((await run('src', 'policy')).output, /^exit code: 0\n/);
  });

  it("the argv runner's git, started in a bare-looking folder anyway, does not take it for a repository", async () => {
    const launch = await chooseLaunch('git log -p', 'policy', 'linux');
    assert.equal(launch.kind, 'argv');
    const child = startLaunch(launch, { cwd: path.join(h.ws, 'vendor/evil'), env: process.env, workspaceRoot: h.ws });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout!.resume();
    const code = await new Promise<number | null>((res) => child.on('close', res));
    noTrapRan(h.traps, 'bare folder');
    assert.equal(code, 128);
    assert.match(err, /cannot use bare repository .*safe\.bareRepository is 'explicit'/);
  });
});
