// The workspace's map for the sandbox, read from real folders: what stays read-only, what keeps it
// from being renamed away, what is held empty because it does not exist yet, what is hidden.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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

  describe('folders kept from one walk to the next', () => {
    /** A clock a minute ahead: every folder made by the test counts as settled, so it is kept. */
    const later = () => Date.now() + 60_000;
    /** Until the file system's clock has moved past `rel`'s change time: a change now gets new times. */
    const afterTick = (rel: string): void => {
      const before = fs.lstatSync(path.join(ws, rel), { bigint: true }).ctimeNs;
      const probe = path.join(ws, '..', `${path.basename(ws)}.tick`);
      try {
        for (let i = 0; i < 1_000_000; i++) {
          fs.writeFileSync(probe, String(i));
          if (fs.lstatSync(probe, { bigint: true }).ctimeNs > before) return;
        }
        assert.fail('the file system clock never moved');
      } finally {
        fs.rmSync(probe, { force: true });
      }
    };
    const walk = (now?: () => number) => workspaceLayout(ws, { writable: true, ...(now ? { now } : {}) });

    it('an unchanged workspace is not read again, and maps the same', async () => {
      mk('.git/hooks');
      mk('src/a/b/.vscode');
      mk('.env', 'KEY=1');
      const first = await walk(later);
      const second = await walk(later);
      assert.ok(first.listed >= 4, `read ${first.listed} folders the first time`);
      assert.equal(second.listed, 0);
      assert.deepEqual({ ...second, listed: 0 }, { ...first, listed: 0 });
    });

    it('a protected path created since is read-only, at any depth', async () => {
      mk('src/a/b');
      await walk(later);
      afterTick('src/a/b');
      mk('src/a/b/.git/hooks');
      mk('src/.github/workflows');
      const l = await walk(later);
      assert.deepEqual(rels(l.readOnly), ['src/.github/workflows', 'src/a/b/.git']);
      assert.deepEqual(rels(l.pinned), ['src', 'src/.github', 'src/a', 'src/a/b']);
    });

    it('a folder whose times were set back is read again (its change time cannot be)', async () => {
      mk('src/a');
      await walk(later);
      const mtime = () => fs.lstatSync(path.join(ws, 'src/a'), { bigint: true }).mtimeNs;
      const before = mtime();
      afterTick('src/a');
      mk('src/a/.vscode');
      // `touch -d` sets the time to the nanosecond, as a command in the sandbox could.
      const at = `@${before / 1_000_000_000n}.${String(before % 1_000_000_000n).padStart(9, '0')}`;
      execFileSync('touch', ['-m', '-d', at, path.join(ws, 'src/a')]);
      assert.equal(mtime(), before);
      const l = await walk(later);
      assert.deepEqual(rels(l.readOnly), ['src/a/.vscode']);
    });

    it('a folder changed within moments of being read is read again every time, never answered from before', async () => {
      const madeAt = Date.now();
      mk('src/a/b');
      const soon = () => madeAt + 500;
      const first = await walk(soon);
      const second = await walk(soon);
      assert.equal(second.listed, first.listed);
      assert.ok(second.listed >= 4);
    });

    it('where a secret-looking link leads is looked up again, though its folder is unchanged', async () => {
      const outside = tmpDir('aw-sbx-outside-');
      try {
        fs.writeFileSync(path.join(outside, 'one'), 'x');
        fs.writeFileSync(path.join(outside, 'two'), 'y');
        fs.symlinkSync('one', path.join(outside, 'current'));
        fs.symlinkSync(path.join(outside, 'current'), path.join(ws, '.env.local'));
        await walk(later);
        fs.rmSync(path.join(outside, 'current'));
        fs.symlinkSync('two', path.join(outside, 'current'));
        const l = await walk(later);
        assert.equal(l.listed, 0);
        assert.deepEqual(l.hiddenTargets, [{ abs: path.join(outside, 'two'), kind: 'file' }]);
      } finally {
        rmrf(outside);
      }
    });
  });

  it('names the root paths the patterns fix', () => {
    assert.deepEqual(fixedRootPaths(['**/.git', '**/.github/hooks', '**/*.code-workspace']), ['.git', '.github/hooks']);
  });
});
