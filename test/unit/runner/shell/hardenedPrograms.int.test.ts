// Allow-listed programs run hardened, through the real runner (real argv runner, real git, the
// scripted model over HTTP), with writes and commands on ask and git on the allow list:
//  - the repository's own git configuration (fsmonitor, hooks, pager, external diff, textconv,
//    filters, aliases, ssh, credential helper) runs none of its programs, and git says why where
//    it stops;
//  - a cwd in another repository (a shipped bare one, a `.git` link to it, a nested one, `.git`
//    itself) asks instead of running;
//  - `git` is never a program the workspace carries, whatever PATH says;
//  - the host's GIT_* variables do not redirect it; the user's own configuration still counts,
//    unless it lies in the workspace.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadShellGrammar } from '../../../../src/runner/tools';
import { rmrf, tmpDir } from '../helpers';
import { hostileWorkspace, noTrapRan, runCalls, traps, type Hostile } from './hostileRepo';

const ALLOW = ['git status', 'git diff', 'git log', 'git st', 'git commit', 'git hello'];

/** Runs `fn` with these environment variables set (undefined: removed), restoring them after. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

describe('allow-listed programs run hardened (real runner, real git)', function () {
  this.timeout(120_000);
  let h: Hostile;
  before(() => loadShellGrammar());
  beforeEach(() => {
    h = hostileWorkspace();
  });
  afterEach(() => rmrf(h.ws));

  it("the workspace's own .git/config runs none of its programs; git says where it stopped", async () => {
    const r = await runCalls(h.ws, ALLOW, [
      { command: 'git status' },
      { command: 'git diff' },
      { command: 'git log -p' },
      { command: 'git st' },
      { command: 'git commit -qam change' },
    ]);
    noTrapRan(h.traps, 'root');
    assert.equal(r.state, 'completed');
    assert.deepEqual([...r.pending.keys()], [], 'nothing asked: every line is on the allow list');
    const [status, diff, log, alias, commit] = r.outputs;
    assert.match(status!, /^exit code: 0\n[\s\S]*modified: +a\.txt/);
    assert.match(diff!, /agent-waypoints: not run: the program that diff\.external \(file:\.git\/config\) names/);
    assert.match(log!, /agent-waypoints: not run: the program that diff\.d\.textconv \(file:\.git\/config\) names/);
    assert.match(alias!, /agent-waypoints: not run: the program that alias\.st \(file:\.git\/config\) names/);
    assert.match(commit!, /^exit code: 0\n/, 'the commit was made, without its hooks');
    assert.match(fs.readFileSync(path.join(h.ws, '.git/HEAD'), 'utf8'), /main/);
  });

  it('a cwd in another repository asks, with the reason: a shipped bare one, a .git link, a nested one, .git', async () => {
    const r = await runCalls(h.ws, ALLOW, [
      { command: 'git status', cwd: 'vendor/evil' },
      { command: 'git log -p', cwd: 'vendor/evil' },
      { command: 'git st', cwd: 'vendor/evil/refs' },
      { command: 'git status', cwd: 'linked' },
      { command: 'git status', cwd: 'nested' },
      { command: 'git status', cwd: '.git' },
    ]);
    noTrapRan(h.traps, 'other repositories');
    assert.equal(r.state, 'awaiting_approval');
    assert.deepEqual([...r.pending.keys()].sort(), [0, 1, 2, 3, 4, 5]);
    const reason = (i: number) => r.pending.get(i)!.reason;
    assert.match(reason(0), /"vendor\/evil" looks like a bare git repository \(HEAD, objects\/, refs\/\)/);
    assert.match(reason(2), /"vendor\/evil\/refs" is in "vendor\/evil", which looks like a bare git repository/);
    assert.match(reason(3), /"linked" has a \.git file/);
    assert.match(reason(4), /"nested" is a git repository of its own/);
    assert.match(reason(5), /"\.git" is inside a \.git folder/);
    for (const i of r.pending.keys()) assert.match(reason(i), /another repository's configuration/);
  });

  it("git is the machine's: never one the workspace carries, though PATH names it first", async () => {
    const fake = `#!/bin/sh\n${h.traps.cmd('fake-git')}\n`;
    for (const p of ['node_modules/.bin/git', 'git', 'tools/git', 'node_modules/.bin/mytool']) {
      fs.mkdirSync(path.dirname(path.join(h.ws, p)), { recursive: true });
      fs.writeFileSync(path.join(h.ws, p), fake, { mode: 0o755 });
    }
    const PATH = ['node_modules/.bin', '.', '', path.join(h.ws, 'tools'), process.env.PATH].join(':');
    const r = await withEnv({ PATH }, () =>
      runCalls(h.ws, [...ALLOW, 'mytool'], [{ command: 'git status' }, { command: 'mytool' }]),
    );
    noTrapRan(h.traps, 'PATH');
    assert.match(r.outputs[0]!, /^exit code: 0\n--- stdout ---\nOn branch main\n/, 'the real git answered');
    assert.match(
      r.outputs[1]!,
      /^exit code: 127\n[\s\S]*mytool: not run from node_modules\/\.bin\/mytool: a command that runs without asking never takes a program by its bare name/,
    );
  });

  it("the host's GIT_* variables do not point git elsewhere or switch programs on", async () => {
    const evil = path.join(h.ws, 'vendor/evil');
    const env = {
      GIT_DIR: evil,
      GIT_WORK_TREE: path.join(h.ws, 'linked'),
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: h.traps.cmd('host-fsmonitor'),
      GIT_EXTERNAL_DIFF: h.traps.cmd('host-external-diff'),
      GIT_CONFIG_PARAMETERS: `'core.pager'='${h.traps.cmd('host-pager')}'`,
    };
    const r = await withEnv(env, () => runCalls(h.ws, ALLOW, [{ command: 'git status --short' }]));
    noTrapRan(h.traps, 'host environment');
    assert.match(r.outputs[0]!, /^exit code: 0\n--- stdout ---\n M a\.txt\n/, "the workspace's repository answered");
  });

  it("the user's own configuration still counts; a ~/.gitconfig inside the workspace does not", async () => {
    const home = tmpDir('aw-home-');
    const own = traps();
    fs.writeFileSync(path.join(home, '.gitconfig'), `[alias]\n\thello = !echo hello from the user\n\tst = status\n`);
    const mine = await withEnv({ HOME: home, XDG_CONFIG_HOME: undefined }, () =>
      runCalls(h.ws, ALLOW, [{ command: 'git hello' }, { command: 'git st --short' }]),
    );
    assert.match(mine.outputs[0]!, /^exit code: 0\n--- stdout ---\nhello from the user\n/);
    assert.match(mine.outputs[1]!, /^exit code: 0\n--- stdout ---\n M a\.txt\n/, "the user's st, not the repository's");
    fs.writeFileSync(path.join(h.ws, '.gitconfig'), `[alias]\n\thello = !${own.cmd('home-in-workspace')}\n`);
    const inWs = await withEnv({ HOME: h.ws, XDG_CONFIG_HOME: undefined }, () =>
      runCalls(h.ws, ALLOW, [{ command: 'git hello' }]),
    );
    assert.deepEqual(own.ran(), [], 'a global config file in the workspace is the repository’s');
    assert.match(inWs.outputs[0]!, /not run: the program that alias\.hello \(file:.*\.gitconfig\) names/);
    noTrapRan(h.traps, 'user configuration');
    rmrf(home);
  });

  it('a program named under a name that is not UTF-8 (which cannot be overridden as written): git does not run', async () => {
    fs.writeFileSync(path.join(h.ws, '.gitattributes'), Buffer.from('* filter=\xff\n', 'latin1'));
    const clean = `[filter "\xff"]\n\tclean = ${h.traps.cmd('latin1-clean')}\n`;
    fs.appendFileSync(path.join(h.ws, '.git/config'), Buffer.from(clean, 'latin1'));
    const r = await runCalls(h.ws, ALLOW, [{ command: 'git diff --stat' }]);
    noTrapRan(h.traps, 'name not UTF-8');
    assert.match(
      r.outputs[0]!,
      /^exit code: 126\n[\s\S]*git: not run: git's configuration names a program under a name that is not UTF-8/,
    );
  });
});
