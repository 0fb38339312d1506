// The workspace's map for the sandbox, read from real folders: what stays read-only, what keeps it
// from being renamed away, what is held empty because it does not exist yet, what is hidden.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fixedRootPaths, SandboxLayoutError, workspaceLayout } from '../../../src/runner/sandbox/layout';
import { rmrf, tmpDir } from '../runner/helpers';

describe('sandbox workspace layout (layout.ts)', () => {
  let ws: string;
  beforeEach(() => (ws = tmpDir('aw-sbx-layout-')));
  afterEach(() => rmrf(ws));

  const mk = (rel: string, content?: string): void => {
    const p = path.join(ws, rel);
    fs.mkdirSync(content === undefined ? p : path.dirname(p), { recursive: true });
    if (content !== undefined) fs.writeFileSync(p, content);
  };
  const rels = (es: Array<{ rel: string }>): string[] => es.map((e) => e.rel).sort();

  it('binds protected paths read-only at any depth and pins every folder above them', async () => {
    mk('.git/hooks');
    mk('packages/a/.git/hooks');
    mk('packages/a/.vscode');
    mk('ci/.github/workflows');
    mk('app.code-workspace', '{}');
    const l = await workspaceLayout(ws, { writable: true });
    assert.deepEqual(rels(l.readOnly), [
      '.git',
      'app.code-workspace',
      'ci/.github/workflows',
      'packages/a/.git',
      'packages/a/.vscode',
    ]);
    assert.deepEqual(rels(l.pinned), ['ci', 'ci/.github', 'packages', 'packages/a']);
    assert.ok(
      l.pinned.findIndex((e) => e.rel === 'packages') < l.pinned.findIndex((e) => e.rel === 'packages/a'),
      'parents first',
    );
  });

  it('holds missing root paths the host acts on with a placeholder', async () => {
    mk('.git');
    const l = await workspaceLayout(ws, { writable: true });
    assert.ok(l.placeholders.includes('.vscode'));
    assert.ok(l.placeholders.includes('.claude'));
    assert.ok(!l.placeholders.includes('.git'), 'it exists: bound read-only instead');
    assert.equal(
      l.placeholders.filter((p) => p === '.claude').length,
      1,
      'one placeholder for two missing files in it',
    );
  });

  it('read-only workspaces need neither pins nor placeholders', async () => {
    mk('sub/.git');
    const l = await workspaceLayout(ws, { writable: false });
    assert.deepEqual(l.pinned, []);
    assert.deepEqual(l.placeholders, []);
    assert.deepEqual(rels(l.readOnly), ['sub/.git']);
  });

  it('hides secret-looking files and where secret-looking links lead', async () => {
    mk('.env', 'KEY=1');
    mk('config/id_rsa', 'key');
    mk('.env.example', 'KEY=');
    const outside = tmpDir('aw-sbx-outside-');
    try {
      fs.writeFileSync(path.join(outside, 'real'), 'x');
      fs.symlinkSync(path.join(outside, 'real'), path.join(ws, '.env.local'));
      const l = await workspaceLayout(ws, { writable: true });
      assert.deepEqual(rels(l.hidden), ['.env', 'config/id_rsa']);
      assert.deepEqual(l.hiddenTargets, [{ abs: path.join(outside, 'real'), kind: 'file' }]);
    } finally {
      rmrf(outside);
    }
  });

  it('a protected entry that is a link freezes its folder (a link cannot be a mount point)', async () => {
    mk('sub/real');
    fs.symlinkSync('real', path.join(ws, 'sub/.vscode'));
    const l = await workspaceLayout(ws, { writable: true });
    assert.deepEqual(l.frozen, ['sub']);
  });

  it('refuses a workspace too large to map rather than protect half of it', async () => {
    for (let i = 0; i < 12; i++) mk(`d${i}`);
    await assert.rejects(workspaceLayout(ws, { writable: true, maxFolders: 10 }), SandboxLayoutError);
  });

  it('names the root paths the patterns fix', () => {
    assert.deepEqual(fixedRootPaths(['**/.git', '**/.github/hooks', '**/*.code-workspace']), ['.git', '.github/hooks']);
  });
});
