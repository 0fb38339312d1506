// Issue 14 on a generated repository of tens of thousands of files, on both engines: the unique
// match is found (not "No matches … in 20000 files"), nothing from the git-ignored build folder or
// the nested repository's ignored folder comes back, and every cap is stated with how to go on.
import assert from 'node:assert/strict';
import { fileLimits } from '../../../../src/runner/tools';
import { generateLargeWorkspace, NEEDLE, type LargeWorkspace } from '../../../fixtures/largeWorkspace';
import { rmrf, tmpDir } from '../helpers';
import { caller, ENGINES } from './support';

describe('runner/tools on a large generated workspace', function () {
  this.timeout(120_000);
  let ws: LargeWorkspace;
  before(() => {
    ws = generateLargeWorkspace(tmpDir('aw-large-'), { srcFiles: 24_000, distFiles: 2_000, nestedFiles: 300 });
  });
  after(() => rmrf(ws.root));

  for (const engine of ENGINES) {
    describe(`on the ${engine.name} engine`, () => {
      const call = () => caller(engine.finder(), ws.root);

      it('finds the one real match; the decoys in ignored folders stay hidden', async () => {
        const r = await call()('search_text', { pattern: NEEDLE });
        assert.equal(r.output, `${ws.needleFile}:5: ${ws.needleLine}`);
      });

      it('a common word: a full page from src/ only, and the note gives the next offset', async () => {
        const c = call();
        const first = await c('search_text', { pattern: 'common word' });
        const lines = first.output.split('\n');
        assert.equal(lines.length, 101);
        assert.equal(lines[100], '[matches 1–100 shown; more follow: call search_text again with offset=100]');
        assert.ok(
          lines.slice(0, 100).every((l) => /^src\/pkg\d+\/mod\d+\.ts:3: {3}return 'common word';$/.test(l)),
          lines.slice(0, 3).join('\n'),
        );
        const second = (await c('search_text', { pattern: 'common word', offset: 100, max_results: 5 })).output.split(
          '\n',
        );
        assert.equal(second[0], "src/pkg001/mod000.ts:3:   return 'common word';", 'page 2 starts where page 1 ended');
        assert.equal(second[5], '[matches 101–105 shown; more follow: call search_text again with offset=105]');
      });

      it('list_files: the whole tree counted, pages stated, ignored files absent; the nested repository has its own rules', async () => {
        const c = call();
        const r = await c('list_files', { recursive: true, limit: 5000, offset: 20_000 });
        const total = ws.visibleFiles + ws.visibleFolders;
        assert.match(
          r.output,
          new RegExp(
            `\\n\\[entries 20,001–(\\d|,)+ of ${total.toLocaleString('en-US')} shown; next page: offset=\\d+\\]\\n`,
          ),
        );
        assert.doesNotMatch(r.output, /^dist\/|\/out\//m);
        assert.match(r.output, /\[also in the workspace root, not listed: \.git\/, dist\/ /);
        const nested = await c('list_files', { path: 'vendor/nested' });
        assert.equal(
          nested.output.split('\n').slice(0, 3).join('\n'),
          `.gitignore\nlib/ (${ws.size.nestedFiles} files)\nnotes.tmp`,
        );
        assert.match(
          (await c('list_files', {})).output,
          new RegExp(
            `^\\.gitignore\\nsrc/ \\(${ws.size.srcFiles.toLocaleString('en-US')} files\\)\\nvendor/ \\(\\d+ files\\)\\n`,
          ),
        );
      });

      it('the walk limit is stated wherever it cuts', async () => {
        const saved = fileLimits.maxFiles;
        fileLimits.maxFiles = 10_000;
        try {
          const c = call();
          const list = await c('list_files', {});
          assert.match(
            list.output,
            /^\.gitignore\nsrc\/ \(9,999\+ files\)\n\[stopped after 10,000 files \(the listing limit\): files after that are missing; list a narrower path\]$/,
          );
          const none = await c('search_text', { pattern: 'not_in_any_file_zq' });
          // ripgrep streams and has no walk limit; the fallback holds the file list in memory and says where it stopped.
          const expected =
            engine.name === 'ripgrep'
              ? 'No matches for "not_in_any_file_zq" in the workspace.'
              : 'No matches for "not_in_any_file_zq" in the workspace.\n[searched only the first 10,000 files in path order (the built-in search\'s limit); narrow path or glob to search the rest]';
          assert.equal(none.output, expected);
        } finally {
          fileLimits.maxFiles = saved;
        }
      });
    });
  }
});
