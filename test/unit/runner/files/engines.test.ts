// One suite, both engines: list_files and search_text give the same answers with VS Code's ripgrep
// and with the pure-Node fallback — ignore files as git and ripgrep read them, exclude settings,
// order, pages and every stated stop. Each expected output is written once and checked on both.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileLimits } from '../../../../src/runner/tools';
import { rmrf, tmpDir } from '../helpers';
import { caller, ENGINES, writeTree } from './support';

const NOT_LISTED =
  '— ignored (.gitignore, .ignore, exclude settings), symbolic links (not followed), or folders without listed files]';

for (const engine of ENGINES) {
  describe(`runner/tools list_files and search_text on the ${engine.name} engine`, () => {
    let base: string;
    let root: string;
    beforeEach(() => {
      base = tmpDir('aw-engines-');
      root = path.join(base, 'ws');
      fs.mkdirSync(root);
    });
    afterEach(() => rmrf(base));

    it(`answers with ${engine.name}`, async () => {
      writeTree(root, { 'a.txt': 'x\n' });
      const finder = engine.finder();
      assert.equal(finder.engine, engine.name);
      await caller(finder, root)('list_files', {});
      assert.equal(finder.calls[engine.name], 1);
    });

    it('.gitignore counts inside a git repository, as git reads it; not outside one', async () => {
      writeTree(root, {
        '.gitignore': 'dist/\n*.log\n!keep.log\n/top.txt\n',
        'src/a.ts': 'hit\n',
        'src/top.txt': 'hit\n',
        'top.txt': 'hit\n',
        'x.log': 'hit\n',
        'keep.log': 'hit\n',
        'dist/out.js': 'hit\n',
        'src/dist/deep.js': 'hit\n',
      });
      const call = caller(engine.finder(), root);
      const allFiles =
        '.gitignore\ndist/\ndist/out.js\nkeep.log\nsrc/\nsrc/a.ts\nsrc/dist/\nsrc/dist/deep.js\nsrc/top.txt\ntop.txt\nx.log';
      assert.equal(
        (await call('list_files', { recursive: true })).output,
        allFiles,
        'no .git: .gitignore is not read (git would not either)',
      );
      fs.mkdirSync(path.join(root, '.git'));
      assert.equal(
        (await call('list_files', { recursive: true })).output,
        `.gitignore\nkeep.log\nsrc/\nsrc/a.ts\nsrc/top.txt\n[also in the workspace root, not listed: .git/, dist/, top.txt, x.log ${NOT_LISTED}`,
      );
      assert.equal(
        (await call('search_text', { pattern: 'hit' })).output,
        'keep.log:1: hit\nsrc/a.ts:1: hit\nsrc/top.txt:1: hit',
      );
    });

    it("a nested repository: its own .gitignore counts inside it, its parent's does not", async () => {
      writeTree(root, {
        '.git/HEAD': 'ref\n',
        '.gitignore': '*.log\n',
        'a.log': 'hit\n',
        'vendor/lib/.git/HEAD': 'ref\n',
        'vendor/lib/.gitignore': 'gen/\n',
        'vendor/lib/build.log': 'hit\n',
        'vendor/lib/gen/g.ts': 'hit\n',
        'vendor/lib/src/s.ts': 'hit\n',
      });
      const call = caller(engine.finder(), root);
      assert.equal(
        (await call('search_text', { pattern: 'hit' })).output,
        'vendor/lib/build.log:1: hit\nvendor/lib/src/s.ts:1: hit',
      );
      assert.equal(
        (await call('list_files', { path: 'vendor/lib' })).output,
        `.gitignore\nbuild.log\nsrc/ (1 file)\n[also in "vendor/lib", not listed: .git/, gen/ ${NOT_LISTED}`,
      );
    });

    it('.ignore counts with or without git, also above the workspace folder; a deeper "!" re-includes', async () => {
      fs.writeFileSync(path.join(base, '.ignore'), 'secret.txt\n');
      writeTree(root, {
        '.ignore': 'tmp/\n',
        'secret.txt': 'hit\n',
        'tmp/t.txt': 'hit\n',
        'src/.ignore': '!secret.txt\n',
        'src/secret.txt': 'hit\n',
        'src/ok.txt': 'hit\n',
      });
      const call = caller(engine.finder(), root);
      assert.equal((await call('search_text', { pattern: 'hit' })).output, 'src/ok.txt:1: hit\nsrc/secret.txt:1: hit');
    });

    it('exclude settings: VS Code globs anchored at the workspace folder, braces, defaults for node_modules', async () => {
      writeTree(root, {
        'dist/a.js': 'hit\n',
        'src/dist/b.js': 'hit\n',
        'src/gen/c.ts': 'hit\n',
        'lib/gen/d.ts': 'hit\n',
        'x.snap': 'hit\n',
        'src/y.snap': 'hit\n',
        'node_modules/m/i.js': 'hit\n',
        'keep.ts': 'hit\n',
      });
      const defaults = caller(engine.finder(), root);
      assert.doesNotMatch(
        (await defaults('search_text', { pattern: 'hit' })).output,
        /node_modules/,
        "VS Code's default excludes",
      );
      const custom = caller(engine.finder(['dist', '**/gen', '**/*.{snap,tmp}']), root);
      assert.equal(
        (await custom('search_text', { pattern: 'hit' })).output,
        'keep.ts:1: hit\nnode_modules/m/i.js:1: hit\nsrc/dist/b.js:1: hit',
      );
    });

    it('a folder named as the path is walked even if ignored (as `rg --files dist`); rules inside still count', async () => {
      writeTree(root, {
        '.git/HEAD': 'ref\n',
        '.gitignore': 'dist/\n*.map\n',
        'dist/a.js': 'hit\n',
        'dist/a.js.map': 'hit\n',
        'dist/sub/b.js': 'hit\n',
      });
      const call = caller(engine.finder(), root);
      assert.equal(
        (await call('list_files', { path: 'dist', recursive: true })).output,
        `a.js\nsub/\nsub/b.js\n[also in "dist", not listed: a.js.map ${NOT_LISTED}`,
      );
      assert.equal(
        (await call('search_text', { pattern: 'hit', path: 'dist' })).output,
        'dist/a.js:1: hit\ndist/sub/b.js:1: hit',
      );
      assert.equal(
        (await call('search_text', { pattern: 'hit', path: 'dist/a.js.map' })).output,
        'dist/a.js.map:1: hit',
        'a file named as the path is searched',
      );
    });

    it('order: depth first, names sorted byte-wise; dotfiles listed; links and empty folders named as not listed', async () => {
      writeTree(root, {
        'a/x.ts': 'hit\n',
        'a-b/x.ts': 'hit\n',
        'B.ts': 'hit\n',
        '.env.example': 'hit\n',
        'empty/': '',
        'z.ts': 'hit\n',
      });
      fs.symlinkSync(path.join(root, 'z.ts'), path.join(root, 'link.ts'));
      const call = caller(engine.finder(), root);
      assert.equal(
        (await call('search_text', { pattern: 'hit' })).output,
        '.env.example:1: hit\nB.ts:1: hit\na/x.ts:1: hit\na-b/x.ts:1: hit\nz.ts:1: hit',
      );
      assert.equal(
        (await call('list_files', {})).output,
        `.env.example\nB.ts\na/ (1 file)\na-b/ (1 file)\nz.ts\n[also in the workspace root, not listed: empty/, link.ts@ ${NOT_LISTED}`,
      );
      assert.equal((await call('list_files', { path: 'empty' })).output, '"empty" is empty.');
    });

    it('search pages: offset and max_results, each page says where the next starts; the last says it is the end', async () => {
      writeTree(root, { 'a.txt': 'm1\nm2\nm3\n', 'b.txt': 'm4\nm5\n' });
      const call = caller(engine.finder(), root);
      assert.equal(
        (await call('search_text', { pattern: 'm\\d', max_results: 2 })).output,
        'a.txt:1: m1\na.txt:2: m2\n[matches 1–2 shown; more follow: call search_text again with offset=2]',
      );
      assert.equal(
        (await call('search_text', { pattern: 'm\\d', max_results: 2, offset: 2 })).output,
        'a.txt:3: m3\nb.txt:1: m4\n[matches 3–4 shown; more follow: call search_text again with offset=4]',
      );
      assert.equal(
        (await call('search_text', { pattern: 'm\\d', max_results: 2, offset: 4 })).output,
        'b.txt:2: m5\n[matches 5–5; no more matches]',
      );
      assert.equal(
        (await call('search_text', { pattern: 'm\\d', offset: 9 })).output,
        'No matches for "m\\\\d" after the first 9 in the workspace.',
      );
      assert.equal(
        (await call('search_text', { pattern: 'zzz', path: 'a.txt' })).output,
        'No matches for "zzz" in "a.txt".',
      );
    });

    it('a page never outgrows the output cap: it shrinks and the note gives the next offset', async () => {
      writeTree(root, { 'big.txt': Array.from({ length: 50 }, (_, i) => `line ${i} ${'x'.repeat(60)}`).join('\n') });
      const call = caller(engine.finder(), root);
      const r = await call('search_text', { pattern: 'line', max_results: 50 }, { outputCap: 2048 });
      assert.ok(Buffer.byteLength(r.output) <= 2048, `${Buffer.byteLength(r.output)} bytes`);
      const m = /\[matches 1–(\d+) shown; more follow: call search_text again with offset=(\d+)\]$/.exec(r.output);
      assert.ok(m && m[1] === m[2] && Number(m[1]) < 50, r.output.slice(-200));
      assert.equal(r.output.split('\n').length, Number(m[1]) + 1);
    });

    it('list pages: limit and offset; the walk limit is stated and counts become lower bounds', async () => {
      writeTree(root, { 'a/1': '', 'a/2': '', 'b/3': '', c: '' });
      const call = caller(engine.finder(), root);
      assert.equal(
        (await call('list_files', { recursive: true, limit: 3 })).output,
        'a/\na/1\na/2\n[entries 1–3 of 6 shown; next page: offset=3]',
      );
      assert.equal(
        (await call('list_files', { recursive: true, limit: 3, offset: 3 })).output,
        'b/\nb/3\nc\n[entries 4–6 of 6; the end of the listing]',
      );
      const saved = fileLimits.maxFiles;
      fileLimits.maxFiles = 3;
      try {
        assert.equal(
          (await call('list_files', {})).output,
          'a/ (2 files)\nb/ (1+ files)\n[stopped after 3 files (the listing limit): files after that are missing; list a narrower path]',
        );
      } finally {
        fileLimits.maxFiles = saved;
      }
    });

    it('glob: a name glob in any folder, a path glob from the root, classes and braces', async () => {
      writeTree(root, {
        'src/a.ts': 'hit\n',
        'src/deep/b.ts': 'hit\n',
        'src/c.tsx': 'hit\n',
        'README.md': 'hit\n',
        'x1.js': 'hit\n',
        'xa.js': 'hit\n',
      });
      const call = caller(engine.finder(), root);
      const files = async (glob: string) =>
        (await call('search_text', { pattern: 'hit', glob })).output.replace(/:1: hit/g, '');
      assert.equal(await files('*.ts'), 'src/a.ts\nsrc/deep/b.ts');
      assert.equal(await files('src/*.ts'), 'src/a.ts');
      assert.equal(await files('src/**/*.ts'), 'src/a.ts\nsrc/deep/b.ts');
      assert.equal(await files('*.{md,tsx}'), 'README.md\nsrc/c.tsx');
      assert.equal(await files('x[!a].js'), 'x1.js');
      assert.equal(await files('*.py'), 'No matches for "hit" in the workspace.');
    });

    it('regex semantics: case, anchors on CRLF lines, long lines shown as a window around the match, binary files skipped', async () => {
      const long = `${'a'.repeat(500)}NEEDLE${'b'.repeat(500)}`;
      writeTree(root, {
        'crlf.txt': 'one\r\ntwo\r\n',
        'long.txt': `${long}\n`,
        'bin.dat': 'NEEDLE\0\x01\x02',
        'Case.txt': 'Hello\n',
      });
      const call = caller(engine.finder(), root);
      assert.equal((await call('search_text', { pattern: 'two$' })).output, 'crlf.txt:2: two');
      assert.equal(
        (await call('search_text', { pattern: 'hello' })).output,
        'No matches for "hello" in the workspace.',
      );
      assert.equal(
        (await call('search_text', { pattern: 'hello', case_sensitive: false })).output,
        'Case.txt:1: Hello',
      );
      assert.equal((await call('search_text', { pattern: 'NEEDLE' })).output, `long.txt:1: …${long.slice(400, 700)}…`);
      assert.equal(
        (await call('search_text', { pattern: '(?<=a)NEEDLE(?=b)' })).output,
        `long.txt:1: …${long.slice(400, 700)}…`,
        'look-around',
      );
    });

    it('refuses a bad regex, a bad path, a path outside the workspace', async () => {
      writeTree(root, { 'a.txt': 'x\n' });
      const call = caller(engine.finder(), root);
      const bad = await call('search_text', { pattern: '(unclosed' });
      assert.equal(bad.is_error, true);
      assert.match(bad.output, /Invalid regular expression "\(unclosed"/);
      assert.match((await call('search_text', { pattern: 'x', path: '..' })).output, /outside the workspace/);
      assert.match((await call('list_files', { path: 'a.txt' })).output, /"a\.txt" is not a directory/);
      assert.match((await call('list_files', { path: 'nope' })).output, /no such file or directory/);
    });
  });
}
