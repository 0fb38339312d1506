// The workspace identity the shared store keys runs by: the same project wherever it is checked out.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { normalizeRemote, workspaceIdentity } from '../../../src/workspaceIdentity';

describe('shared store: workspace identity', function () {
  it('the same repository over https, ssh or scp syntax is one project; credentials never survive', () => {
    for (const url of [
      'git@github.com:Acme/api.git',
      'https://github.com/Acme/api',
      'https://user:ghp_secret@GitHub.com/Acme/api.git',
      'ssh://git@github.com/Acme/api.git/',
      'ssh://git@github.com:22/Acme/api.git',
    ])
      assert.equal(normalizeRemote(url), 'github.com/Acme/api', url);
    assert.equal(normalizeRemote('https://git.example.com:8443/team/x.git'), 'git.example.com:8443/team/x');
    assert.equal(normalizeRemote('/srv/git/api.git'), '/srv/git/api');
    assert.doesNotMatch(normalizeRemote('https://user:ghp_secret@github.com/a/b'), /secret|user/);
  });

  it('two checkouts at different paths are the same project; a subfolder is a project of its own; a chosen name wins', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-ident-'));
    try {
      const g = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { stdio: 'ignore' });
      const one = path.join(tmp, 'one');
      const two = path.join(tmp, 'elsewhere', 'two');
      for (const d of [one, two]) {
        fs.mkdirSync(path.join(d, 'packages', 'server'), { recursive: true });
        g(d, 'init', '-q');
      }
      g(one, 'remote', 'add', 'origin', 'git@github.com:acme/api.git');
      g(two, 'remote', 'add', 'origin', 'https://token@github.com/acme/api');
      const a = await workspaceIdentity(one);
      const b = await workspaceIdentity(two);
      assert.deepEqual(a, { id: 'git:github.com/acme/api', label: 'github.com/acme/api', how: 'git' });
      assert.deepEqual(b, a);
      const sub = await workspaceIdentity(path.join(two, 'packages', 'server'));
      assert.equal(sub.id, 'git:github.com/acme/api#packages/server');
      assert.equal((await workspaceIdentity(one, '  team api  ')).id, 'name:team api');
      const bare = path.join(tmp, 'no-remote');
      fs.mkdirSync(bare);
      g(bare, 'init', '-q');
      assert.equal((await workspaceIdentity(bare)).how, 'none');
      assert.equal((await workspaceIdentity(tmp)).how, 'none', 'not a repository');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
