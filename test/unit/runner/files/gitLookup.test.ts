// The read-only git the file journal runs is the machine's, never the workspace's: a `git` the
// repository carries is not run even when PATH names the current folder, and the repository's
// config cannot make `git status` run a program (core.fsmonitor).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanContents, findGit, repoBefore } from '../../../../src/runner/fileJournal/git';
import { fileSig } from '../../../../src/runner/fileJournal/scanTree';
import { rmrf, tmpDir } from '../helpers';
import { git, workspace } from './journalSupport';

/** An executable script at `file` that leaves `marker` behind when it runs and prints a fake commit. */
function trap(file: string, marker: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\ntouch '${marker}'\necho ${'a'.repeat(40)}\n`, { mode: 0o755 });
}

describe('git is looked up outside the workspace and runs read-only', () => {
  const realGitDir = path.dirname(fs.realpathSync(findGit({ env: process.env, workspaceRoot: '/nonexistent' })!));
  let ws: string;
  let marker: string;
  beforeEach(() => {
    ws = workspace({ 'a.txt': 'a\n' }, { git: true });
    marker = path.join(tmpDir('aw-git-marker-'), 'RAN');
    for (const p of ['git', 'bin/git', 'tools/git']) trap(path.join(ws, p), marker);
  });
  afterEach(() => rmrf(ws));

  it('findGit skips empty, relative and in-workspace PATH entries', () => {
    const env = { PATH: ['', '.', 'bin', path.join(ws, 'tools'), ws, realGitDir].join(':') };
    assert.equal(findGit({ env, workspaceRoot: ws, platform: 'linux' }), path.join(realGitDir, 'git'));
    assert.equal(findGit({ env: { PATH: `.:bin:${ws}` }, workspaceRoot: ws, platform: 'linux' }), null);
  });

  it('on Windows: the PATH variable in any case, ";" between entries, quotes, never the current folder', () => {
    const elsewhere = tmpDir('aw-git-win-');
    fs.writeFileSync(path.join(elsewhere, 'git.exe'), '');
    fs.writeFileSync(path.join(ws, 'git.exe'), '');
    const env = { Path: ['.', 'bin', `"${ws}"`, `"${elsewhere}"`].join(';') };
    assert.equal(findGit({ env, workspaceRoot: ws, platform: 'win32' }), path.join(elsewhere, 'git.exe'));
    rmrf(elsewhere);
  });

  it('repoBefore does not run a git script in the workspace although PATH starts with the current folder', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const saved = process.env.PATH;
    process.env.PATH = `.:bin:${path.join(ws, 'tools')}:${saved}`;
    try {
      const before = await repoBefore(ws, '', { sigOf: () => undefined, way: 'status' });
      assert.equal(before?.kind === 'status' && before.head, head, 'the real git answered');
      assert.ok(!fs.existsSync(marker), 'the workspace’s git script never ran');
    } finally {
      process.env.PATH = saved;
    }
  });

  it("a repository's core.fsmonitor does not run on git status", async () => {
    const hook = path.join(ws, 'monitor.sh');
    trap(hook, marker);
    git(ws, 'config', 'core.fsmonitor', hook);
    const before = await repoBefore(ws, '', { sigOf: () => undefined, way: 'status' });
    assert.equal(before?.kind === 'status' && before.head, git(ws, 'rev-parse', 'HEAD').trim());
    assert.ok(!fs.existsSync(marker), 'the fsmonitor program never ran');
  });

  it("read through git's index: the content comes from the real git, with the workspace's git first on PATH and an fsmonitor set", async () => {
    const hook = path.join(ws, 'monitor.sh');
    trap(hook, marker);
    git(ws, 'config', 'core.fsmonitor', hook);
    const saved = process.env.PATH;
    process.env.PATH = `.:bin:${path.join(ws, 'tools')}:${saved}`;
    try {
      const sig = fileSig(fs.statSync(path.join(ws, 'a.txt')), Date.now());
      const before = await repoBefore(ws, '', { sigOf: (p) => (p === 'a.txt' ? sig : undefined) });
      assert.equal(before?.kind, 'index');
      const got = await cleanContents(ws, before!, ['a.txt']);
      assert.equal(String(got.get('a.txt')), 'a\n');
      assert.ok(!fs.existsSync(marker), 'neither the workspace’s git nor the fsmonitor program ran');
    } finally {
      process.env.PATH = saved;
    }
  });
});
