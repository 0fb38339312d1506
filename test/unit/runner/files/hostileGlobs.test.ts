// Issue 18, finding 5: a glob from the model (search_text's `glob`) or from the repository
// (.gitignore, .ignore, exclude settings) cannot block the extension host. `*?` eleven times then
// `Z`, against 40 files with 40-character names, took minutes as a backtracking regex on the main
// thread. On both engines each call must finish well inside the test timeout (mocha's 30 s): before
// the fix these tests hang past it. Answers are checked too, so the hostile glob is really applied.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { rmrf, tmpDir } from '../helpers';
import { caller, ENGINES, writeTree } from './support';

const HOSTILE = `${'*?'.repeat(11)}Z`;
const NAMES = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, '0')}${'a'.repeat(34)}.txt`);

for (const engine of ENGINES) {
  describe(`runner/tools hostile globs on the ${engine.name} engine`, () => {
    let root: string;
    beforeEach(() => {
      root = tmpDir('aw-hostile-');
      writeTree(root, Object.fromEntries(NAMES.map((n) => [`d/${n}`, 'needle\n'])));
    });
    afterEach(() => rmrf(root));

    it("search_text with the issue's glob finishes, matching nothing", async () => {
      const r = await caller(engine.finder(), root)('search_text', { pattern: 'needle', glob: HOSTILE });
      assert.equal(r.output, 'No matches for "needle" in the workspace.');
      const deep = await caller(engine.finder(), root)('search_text', { pattern: 'needle', glob: `**/${HOSTILE}` });
      assert.equal(deep.output, 'No matches for "needle" in the workspace.');
    });

    it('a hostile .gitignore and .ignore in a repository: listing and search finish and apply them', async () => {
      fs.mkdirSync(path.join(root, '.git'));
      fs.writeFileSync(path.join(root, '.gitignore'), `${HOSTILE}\n${HOSTILE}/\n**/${HOSTILE}\n00*\n`);
      fs.writeFileSync(path.join(root, '.ignore'), `${'*?'.repeat(15)}Q\n01*\n`);
      const call = caller(engine.finder(), root);
      const listed = (await call('list_files', { path: 'd' })).output;
      assert.doesNotMatch(listed, /^0[01]a/m, 'the plain rules still apply');
      assert.match(listed, /^02a{34}\.txt$/m);
      const found = (await call('search_text', { pattern: 'needle', glob: '*.txt' })).output.split('\n');
      assert.equal(found.filter((l) => l.endsWith(':1: needle')).length, 38);
    });

    it('hostile exclude settings finish and apply', async () => {
      const call = caller(engine.finder([`**/${HOSTILE}`, `{${HOSTILE},**/03*}`]), root);
      const found = (await call('search_text', { pattern: 'needle' })).output.split('\n');
      assert.equal(found.filter((l) => l.endsWith(':1: needle')).length, 39);
    });
  });
}
