// The command scan, on both file engines (VS Code's ripgrep and the Node walk): what it sees and
// skips (.gitignore inside git repositories, nested and negated, .git/info/exclude, files.exclude,
// node_modules), nested repositories, and caps that say when they stop. Versions: bytes round-trip
// exactly (UTF-8 as text, everything else as base64).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { changedPaths, repoOf, scanWorkspace } from '../../../../src/runner/files/scan';
import { decodeBlob, encodeBytes } from '../../../../src/runner/files/versions';
import { cleanContentsAtHead, repoBefore } from '../../../../src/runner/files/git';
import { git, workspace } from './journalSupport';
import { ENGINES } from './support';

for (const engine of ENGINES) {
  describe(`file journal: the workspace scan on the ${engine.name} engine`, () => {
    it('honours .gitignore (nested, negated), .git/info/exclude and files.exclude; skips .git and node_modules', async () => {
      const ws = workspace({
        '.git/HEAD': 'ref: refs/heads/main\n',
        '.gitignore': 'dist/\n*.log\n!keep.log\n',
        'src/a.ts': 'a',
        'src/.gitignore': 'gen/\n',
        'src/gen/x.ts': 'x',
        'dist/bundle.js': 'b',
        'debug.log': 'l',
        'keep.log': 'k',
        'node_modules/p/index.js': 'n',
        'secret.env': 's',
        'tmp/t.txt': 't',
        'lib/.git/info/exclude': 'local.txt\n',
        'lib/.git/HEAD': 'ref: refs/heads/main\n',
        'lib/local.txt': 'l',
        'lib/src.txt': 's',
      });
      const finder = engine.finder();
      const opts = { finder, exclude: ['**/*.env', 'tmp'] };
      const scan = await scanWorkspace(ws, opts);
      assert.deepEqual([...scan.files.keys()].sort(), [
        '.gitignore',
        'keep.log',
        'lib/src.txt',
        'src/.gitignore',
        'src/a.ts',
      ]);
      assert.deepEqual(scan.repos, ['', 'lib']);
      assert.equal(finder.calls[engine.name], 1, `listed by ${engine.name}`);
      assert.equal(repoOf(['', 'lib'], 'lib/src.txt'), 'lib');
      assert.equal(repoOf(['', 'lib'], 'library.txt'), '');
      assert.equal(scan.complete, true);
      fs.writeFileSync(path.join(ws, 'src/a.ts'), 'changed');
      fs.rmSync(path.join(ws, 'keep.log'));
      fs.writeFileSync(path.join(ws, 'src/new.ts'), 'new');
      fs.writeFileSync(path.join(ws, 'dist/ignored.js'), 'ignored');
      fs.writeFileSync(path.join(ws, 'node_modules/p/index.js'), 'changed');
      assert.deepEqual(changedPaths(scan, await scanWorkspace(ws, opts)), ['keep.log', 'src/a.ts', 'src/new.ts']);
    });

    it('sees the files list_files sees: outside a git repository .gitignore does not count, .ignore does', async () => {
      const ws = workspace({
        '.gitignore': 'dist/\n',
        '.ignore': 'cache/\n',
        'dist/out.js': 'o',
        'cache/c.bin': 'c',
        'a.txt': 'a',
      });
      const scan = await scanWorkspace(ws, { finder: engine.finder() });
      assert.deepEqual([...scan.files.keys()].sort(), ['.gitignore', '.ignore', 'a.txt', 'dist/out.js']);
      assert.deepEqual(scan.repos, []);
    });

    it('stops at its caps and says so; a cancelled scan says so too', async () => {
      const ws = workspace(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i % 3}/f${i}.txt`, 'x'])));
      const capped = await scanWorkspace(ws, { finder: engine.finder(), maxFiles: 12 });
      assert.equal(capped.complete, false);
      assert.equal(capped.files.size, 12);
      assert.match(capped.note!, /stopped at 12 files/);
      const timed = await scanWorkspace(ws, { finder: engine.finder(), maxMs: 0 });
      assert.equal(timed.complete, false);
      assert.match(timed.note!, /stopped after 0 s/);
      const cancelled = await scanWorkspace(ws, { finder: engine.finder(), signal: AbortSignal.abort() });
      assert.equal(cancelled.complete, false);
      assert.equal(cancelled.note, 'the scan was cancelled');
      const full = await scanWorkspace(ws, { finder: engine.finder() });
      assert.equal(full.complete, true);
      assert.equal(full.files.size, 30);
    });
  });
}

describe('file journal: versions', () => {
  it('keeps bytes exactly: UTF-8 (CRLF, BOM) as text, binary and invalid UTF-8 as base64', () => {
    for (const [bytes, encoding] of [
      [Buffer.from('a\r\nb\n'), 'utf8'],
      [Buffer.from('\uFEFFbom é ✓'), 'utf8'],
      [Buffer.from([0, 255, 10, 13]), 'base64'],
      [Buffer.from([0xc3, 0x28]), 'base64'],
      [Buffer.alloc(0), 'utf8'],
    ] as const) {
      const e = encodeBytes(bytes);
      assert.equal(e.encoding, encoding);
      assert.ok(decodeBlob(e.text, e.encoding).equals(bytes));
    }
  });
});

describe('file journal: read-only git', () => {
  it('reads clean files from HEAD in one batch (spaces, subfolders), and says why not for dirty, filtered and untracked ones', async () => {
    const ws = workspace(
      {
        'a b/c d.txt': 'spaced\n',
        'top.txt': 'top\n',
        'dirty.txt': 'd\n',
        'pic.lfs': 'pointer\n',
        '.gitattributes': '*.lfs filter=lfs\n',
      },
      { git: true },
    );
    fs.writeFileSync(path.join(ws, 'dirty.txt'), 'changed\n');
    const repo = (await repoBefore(ws, ''))!;
    assert.deepEqual([...repo.dirty], ['dirty.txt']);
    const got = await cleanContentsAtHead(ws, repo, ['a b/c d.txt', 'top.txt', 'dirty.txt', 'pic.lfs', 'new.txt']);
    assert.equal(String(got.get('a b/c d.txt')), 'spaced\n');
    assert.equal(String(got.get('top.txt')), 'top\n');
    assert.equal(got.get('dirty.txt'), 'it had changes not committed to git');
    assert.equal(got.get('pic.lfs'), 'git reads it through the "lfs" filter');
    assert.equal(got.get('new.txt'), 'it was not tracked by git');
    assert.match(git(ws, 'status', '--porcelain'), /^ M dirty\.txt$/m, 'nothing in the repository changed');
  });
});
