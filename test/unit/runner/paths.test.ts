// Path confinement (docs/design.md, reliability goals: path safety): every refusal names the path and says why.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { confinePath, confineStoredPath, PathError } from '../../../src/runner/tools';
import { rmrf, tmpDir } from './helpers';

async function refused(root: string, p: string, why: RegExp): Promise<void> {
  await assert.rejects(confinePath(root, p), (e: unknown) => {
    assert.ok(e instanceof PathError, String(e));
    assert.match(e.message, why);
    return true;
  });
}

/** Where the path leads: what the tools use. */
async function at(root: string, p: string): Promise<{ abs: string; rel: string }> {
  const { abs, rel } = await confinePath(root, p);
  return { abs, rel };
}

describe('runner/tools path confinement', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = tmpDir('aw-ws-');
    outside = tmpDir('aw-outside-');
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'src/a.txt'), 'a');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  });
  afterEach(() => {
    rmrf(root);
    rmrf(outside);
  });

  it('resolves relative paths inside the workspace, including ones that do not exist yet', async () => {
    assert.deepEqual(await at(root, 'src/a.txt'), { abs: path.join(root, 'src/a.txt'), rel: 'src/a.txt' });
    assert.deepEqual(await at(root, 'src/../src/./a.txt'), {
      abs: path.join(root, 'src/a.txt'),
      rel: 'src/a.txt',
    });
    assert.deepEqual(await at(root, 'new/deep/file.ts'), {
      abs: path.join(root, 'new/deep/file.ts'),
      rel: 'new/deep/file.ts',
    });
    assert.equal((await confinePath(root, '.')).rel, '.');
    assert.equal((await confinePath(root, '')).rel, '.');
  });

  it('accepts an absolute path inside the workspace', async () => {
    assert.equal((await confinePath(root, path.join(root, 'src/a.txt'))).rel, 'src/a.txt');
  });

  it('refuses .. escapes, naming the path', async () => {
    await refused(root, '../x', /Path "\.\.\/x" is outside the workspace/);
    await refused(root, 'src/../../x', /outside the workspace/);
    await refused(root, '..', /outside the workspace/);
  });

  it('refuses absolute paths outside the workspace', async () => {
    await refused(root, '/etc/passwd', /Path "\/etc\/passwd" is outside the workspace/);
    await refused(root, path.join(outside, 'secret.txt'), /outside the workspace/);
    // A sibling whose name starts with the root's name is not inside it.
    await refused(root, root + '-evil/x', /outside the workspace/);
  });

  it('refuses a symlink whose target leaves the workspace (file and directory)', async () => {
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    fs.symlinkSync(outside, path.join(root, 'out'));
    await refused(root, 'link.txt', /leaves the workspace through the symlink "link\.txt"/);
    await refused(root, 'out/secret.txt', /leaves the workspace through the symlink "out"/);
  });

  it('refuses a not-yet-existing file under a symlinked directory that points outside', async () => {
    fs.symlinkSync(outside, path.join(root, 'out'));
    await refused(
      root,
      'out/new/file.txt',
      /Path "out\/new\/file\.txt" leaves the workspace through the symlink "out"/,
    );
  });

  it('refuses a dangling symlink that would create a file outside', async () => {
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(root, 'dangling'));
    await refused(root, 'dangling', /leaves the workspace through the symlink "dangling"/);
  });

  it('follows symlinks that stay inside, returning the real path', async () => {
    fs.symlinkSync(path.join(root, 'src'), path.join(root, 'alias'));
    fs.symlinkSync('src/a.txt', path.join(root, 'rel-link'));
    fs.symlinkSync('src/later.txt', path.join(root, 'dangling-inside'));
    assert.deepEqual(await at(root, 'alias/a.txt'), { abs: path.join(root, 'src/a.txt'), rel: 'src/a.txt' });
    assert.equal((await confinePath(root, 'rel-link')).rel, 'src/a.txt');
    assert.equal((await confinePath(root, 'dangling-inside')).rel, 'src/later.txt');
  });

  it('works when the workspace root itself is reached through a symlink', async () => {
    const viaLink = path.join(outside, 'ws-link');
    fs.symlinkSync(root, viaLink);
    assert.equal((await confinePath(viaLink, 'src/a.txt')).abs, path.join(root, 'src/a.txt'));
    assert.equal((await confinePath(viaLink, path.join(viaLink, 'src/a.txt'))).rel, 'src/a.txt');
    await refused(viaLink, '../secret.txt', /outside the workspace/);
  });

  it('refuses symlink loops', async () => {
    fs.symlinkSync('loop2', path.join(root, 'loop1'));
    fs.symlinkSync('loop1', path.join(root, 'loop2'));
    await refused(root, 'loop1/x', /symlinks/);
  });

  it('refuses NUL bytes, over-long paths and over-long components', async () => {
    await refused(root, 'src/a\0.txt', /Path "src\/a\\u0000\.txt" contains a NUL byte/);
    await refused(root, 'a/'.repeat(2100), /is too long \(4200 bytes; the limit is 4096\)/);
    await refused(root, 'x'.repeat(256), /has a component of 256 bytes \(the limit is 255\)/);
    await refused(root, 'é'.repeat(128), /component of 256 bytes/); // bytes, not characters
    assert.equal((await confinePath(root, 'x'.repeat(255))).rel, 'x'.repeat(255));
  });

  it('refuses the extension’s own storage folder inside the workspace, through any spelling or symlink', async () => {
    const storageDir = path.join(root, '.vscode-data', 'agent-waypoints');
    fs.mkdirSync(storageDir, { recursive: true });
    fs.symlinkSync(storageDir, path.join(root, 'alias'));
    for (const p of [
      '.vscode-data/agent-waypoints/runs/x/owner.lock',
      path.join(storageDir, 'index.json'),
      'alias/index.json',
    ])
      await assert.rejects(confinePath(root, p, { storageDir }), /inside Agent Waypoints' own storage folder/, p);
    assert.equal((await confinePath(root, '.vscode-data/other.txt', { storageDir })).rel, '.vscode-data/other.txt');
    assert.equal((await confinePath(root, '.', { storageDir })).rel, '.', 'the folders above it stay usable');
  });

  it('a stored path must be plain and relative before it is confined (what import and restore check)', async () => {
    for (const p of [
      '/etc/passwd',
      'C:/x',
      '\\\\server\\share',
      'src/../src/a.txt',
      'src//a.txt',
      './src/a.txt',
      'a\\..\\..\\x',
      'a\0b',
      '',
    ])
      await assert.rejects(confineStoredPath(root, p), PathError, JSON.stringify(p));
    const stored = await confineStoredPath(root, 'src/a.txt');
    assert.deepEqual({ abs: stored.abs, rel: stored.rel }, { abs: path.join(root, 'src/a.txt'), rel: 'src/a.txt' });
  });

  it('shortens a huge path in the message instead of echoing all of it', async () => {
    await assert.rejects(
      confinePath(root, '../' + 'y'.repeat(5000)),
      (e: Error) => e.message.length < 400 && /…\(5003 chars\)/.test(e.message),
    );
  });
});
