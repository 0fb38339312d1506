// The pieces under both engines' agreement: gitignore lines as git and ripgrep read them, the
// user's glob, and VS Code's exclude settings.
import assert from 'node:assert/strict';
import { IgnoreRules, globRegExp } from '../../../../src/runner/tools/files/gitignore';
import { enabledExcludes, toIgnoreGlobs } from '../../../../src/runner/tools/files/excludes';

describe('runner/tools ignore rules and globs', () => {
  it('gitignore lines: anchoring, folders only, negation, last match wins, comments and escapes', () => {
    const r = IgnoreRules.parse('# comment\n*.log\n!keep.log\n/top\nbuild/\ndocs/*.md\n\\#hash\ntrail   \n**/gen/**\n');
    const m = (p: string, dir = false) => r.match(p, dir);
    assert.equal(m('a/b/x.log'), 'ignore');
    assert.equal(m('a/keep.log'), 'whitelist');
    assert.equal(m('top'), 'ignore');
    assert.equal(m('src/top'), null, 'a leading / anchors');
    assert.equal(m('src/build', true), 'ignore');
    assert.equal(m('src/build', false), null, 'a trailing / matches folders only');
    assert.equal(m('docs/a.md'), 'ignore');
    assert.equal(m('docs/x/a.md'), null, '* stops at /');
    assert.equal(m('#hash'), 'ignore');
    assert.equal(m('trail'), 'ignore', 'trailing spaces dropped');
    assert.equal(m('x/gen/y/z.ts'), 'ignore');
    assert.equal(m('# comment'), null);
    assert.equal(IgnoreRules.parse('{a,b}').match('a', false), null, 'no braces in .gitignore');
    assert.equal(
      IgnoreRules.parse('**/{a,b}', { braces: true }).match('x/b', false),
      'ignore',
      'braces in exclude globs',
    );
  });

  it('globs: *, ?, **, classes (also [!…]), braces; dots are literal and dotfiles match', () => {
    const t = (g: string, p: string) => globRegExp(g, { braces: true }).test(p);
    assert.equal(t('*.ts', 'a.ts'), true);
    assert.equal(t('*.ts', 'a.tsx'), false);
    assert.equal(t('src/*.ts', 'src/deep/a.ts'), false);
    assert.equal(t('src/**/*.ts', 'src/a.ts'), true);
    assert.equal(t('src/**/*.ts', 'src/x/y/a.ts'), true);
    assert.equal(t('*.{js,md}', 'README.md'), true);
    assert.equal(t('file[0-9].txt', 'file7.txt'), true);
    assert.equal(t('file[!0-9].txt', 'file7.txt'), false);
    assert.equal(t('file?.txt', 'fileA.txt'), true);
    assert.equal(t('a.b', 'axb'), false);
    assert.equal(t('*', '.env'), true);
  });

  it('VS Code exclude settings: switched-on entries; globs anchored at the folder; .git always', () => {
    assert.deepEqual(enabledExcludes({ '**/a': true, b: false, '**/*.js': { when: '$(basename).ts' }, ' ': true }), [
      '**/a',
    ]);
    assert.deepEqual(enabledExcludes(undefined), []);
    assert.deepEqual(toIgnoreGlobs(['**/node_modules', 'dist', './out', '/abs', '**/.git']), [
      '**/.git',
      '**/node_modules',
      '/dist',
      '/out',
      '/abs',
    ]);
  });
});
