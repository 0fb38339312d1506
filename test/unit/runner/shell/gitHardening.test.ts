// What the hardened git's settings are made of: the configuration as git lists it, each
// program-naming key the repository set given back the user's value or an off value, credential
// helpers reset to the user's list, and the environment a git gets. The behaviour through the real
// runner and git is in hardenedPrograms.int.test.ts.
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  ALWAYS,
  gitEnv,
  parseConfigList,
  programOverrides,
  type Entry,
} from '../../../../src/runner/tools/shell/gitHardening.cjs';
import { rmrf, tmpDir } from '../helpers';

const ws = tmpDir('aw-hardening-');
const home = tmpDir('aw-hardening-home-');
after(() => [ws, home].forEach(rmrf));

const user = (key: string, value: string | null): Entry => ({
  scope: 'global',
  origin: `file:${path.join(home, '.gitconfig')}`,
  key,
  value,
});
const repo = (key: string, value: string | null): Entry => ({ scope: 'local', origin: 'file:.git/config', key, value });

describe('runner/tools/shell gitHardening', () => {
  it("parses git's -z listing: scope, origin, key and value (a key without one: null)", () => {
    const out = 'global\0file:/h/.gitconfig\0alias.x\n!a\nb\0local\0file:.git/config\0filter.My.Name.required\0';
    assert.deepEqual(parseConfigList(out), [
      { scope: 'global', origin: 'file:/h/.gitconfig', key: 'alias.x', value: '!a\nb' },
      { scope: 'local', origin: 'file:.git/config', key: 'filter.My.Name.required', value: null },
    ]);
  });

  it("the repository's program keys get the user's value, else an off value; the user's own stay as they are", () => {
    const got = new Map(
      programOverrides(
        [
          user('filter.lfs.clean', 'git-lfs clean -- %f'),
          repo('filter.lfs.clean', 'evil'),
          repo('filter.x.smudge', 'evil'),
          repo('filter.x.required', 'true'),
          user('alias.co', 'checkout'),
          repo('alias.st', '!evil'),
          user('diff.external', 'difft'),
          repo('diff.d.textconv', 'evil'),
          repo('core.sshcommand', 'evil'),
          repo('submodule.a.update', 'rebase'),
          repo('submodule.b.update', '!evil'),
          repo('user.name', 'not a program'),
          { scope: 'command', origin: 'command line:', key: 'alias.ours', value: 'x' },
        ],
        ws,
      ),
    );
    assert.equal(got.get('filter.lfs.clean'), 'git-lfs clean -- %f');
    assert.equal(got.get('filter.x.smudge'), '');
    assert.equal(got.get('filter.x.required'), 'false');
    assert.match(got.get('alias.st')!, /^!echo "agent-waypoints: not run: .*alias\.st \(file:\.git\/config\)/);
    assert.match(got.get('diff.d.textconv')!, /; exit 1; :$/);
    assert.equal(got.get('core.sshcommand'), 'ssh');
    assert.equal(got.get('submodule.b.update'), 'checkout');
    for (const k of ['alias.co', 'diff.external', 'submodule.a.update', 'user.name', 'alias.ours'])
      assert.equal(got.has(k), false, k);
  });

  it('a program key the repository set before the user is the user’s: the last value counts', () => {
    assert.deepEqual(programOverrides([repo('alias.st', '!evil'), user('alias.st', 'status')], ws), []);
  });

  it("credential helpers: the repository's clear the list, and the user's come back in their order", () => {
    const got = programOverrides(
      [
        user('credential.helper', 'cache'),
        repo('credential.https://example.com.helper', '!evil'),
        user('credential.https://corp.example.helper', 'corp'),
      ],
      ws,
    );
    assert.deepEqual(got, [
      ['credential.helper', ''],
      ['credential.helper', 'cache'],
      ['credential.https://corp.example.helper', 'corp'],
    ]);
    assert.deepEqual(programOverrides([user('credential.helper', 'cache')], ws), [], 'only the user’s: untouched');
  });

  it("a global file inside the workspace, a system one's include there, an unknown scope: the repository's", () => {
    const inWs: Entry = { scope: 'global', origin: `file:${path.join(ws, '.gitconfig')}`, key: 'alias.x', value: '!x' };
    const sysInclude: Entry = { ...inWs, scope: 'system', key: 'alias.y' };
    const unknown: Entry = { scope: 'unknown', origin: 'standard input:', key: 'alias.z', value: '!z' };
    assert.deepEqual(
      programOverrides([inWs, sysInclude, unknown], ws).map(([k]) => k),
      ['alias.x', 'alias.y', 'alias.z'],
    );
  });

  it("gitEnv: the host's GIT_* dropped but who commits, prompts and optional locks off, the settings numbered", () => {
    const env = gitEnv({
      PATH: '/usr/bin',
      GIT_DIR: '/elsewhere',
      GIT_SSH_COMMAND: 'evil',
      git_exec_path: '/evil',
      GIT_CONFIG_PARAMETERS: "'core.pager'='evil'",
      GIT_AUTHOR_NAME: 'Me',
      SSH_ASKPASS: 'evil',
    });
    assert.equal(env.PATH, '/usr/bin');
    assert.equal(env.GIT_AUTHOR_NAME, 'Me');
    for (const k of ['GIT_DIR', 'GIT_SSH_COMMAND', 'git_exec_path', 'GIT_CONFIG_PARAMETERS', 'SSH_ASKPASS'])
      assert.equal(k in env, false, k);
    assert.equal(env.GIT_TERMINAL_PROMPT, '0');
    assert.equal(env.GIT_OPTIONAL_LOCKS, '0');
    assert.equal(env.GIT_PROXY_COMMAND, '');
    assert.equal(env.GIT_CONFIG_COUNT, String(ALWAYS.length));
    assert.deepEqual(
      ALWAYS.map((_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]),
      ALWAYS.map(([k, v]) => [k, v]),
    );
    assert.ok(ALWAYS.some(([k, v]) => k === 'core.fsmonitor' && v === 'false'));
    assert.ok(ALWAYS.some(([k, v]) => k === 'safe.bareRepository' && v === 'explicit'));
  });
});
