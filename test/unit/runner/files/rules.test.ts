// The pieces under both engines' agreement: gitignore lines as git and ripgrep read them, the
// user's glob, and VS Code's exclude settings.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import picomatch from 'picomatch';
import { IgnoreRules } from '../../../../src/runner/tools/finder/gitignore';
import { Glob } from '../../../../src/runner/tools/glob';
import { fileGlob } from '../../../../src/runner/tools/protectedFiles';
import { enabledExcludes, toIgnoreGlobs } from '../../../../src/runner/tools/finder/excludes';

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
    const t = (g: string, p: string) => Glob.compile(g, { braces: true }).test(p);
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

  it('globs as git reads them where picomatch did not: ** inside a name, a/** and the folder, [, POSIX classes', () => {
    const t = (g: string, p: string) => Glob.compile(g, { braces: true }).test(p);
    assert.equal(t('a**b', 'a/x/b'), false, '** that is not a whole segment is a plain *');
    assert.equal(t('a**b', 'axxb'), true);
    assert.equal(t('dist/**', 'dist'), false, 'a trailing /** matches what is inside, not the folder');
    assert.equal(t('dist/**', 'dist/a/b'), true);
    assert.equal(t('**/x', 'x'), true);
    assert.equal(t('a/**/b', 'a/b'), true);
    assert.equal(t('[ab', '[ab'), true, 'an unclosed [ is a literal');
    assert.equal(t('file[[:digit:]].txt', 'file7.txt'), true);
    assert.equal(t('\\\\*', '\\x'), true, 'an escaped backslash, then a star');
    assert.equal(t('\\*', '*'), true, 'an escaped star is a star');
    assert.equal(t('\\*', 'x'), false);
    assert.throws(() => Glob.compile('{a,b}'.repeat(9), { braces: true }), /more than 256 brace alternatives/);
  });

  it('property: on ordinary globs the matcher answers as the regex it replaced (picomatch)', () => {
    // Where git and picomatch differ (above) is left out: ** inside a segment, ./, POSIX classes.
    const regex = (g: string) =>
      picomatch.makeRe(g.replace(/(^|[^\\])\[!/g, '$1[^'), {
        dot: true,
        noextglob: true,
        nonegate: true,
        strictSlashes: true,
      });
    const globPart = fc.constantFrom(
      'a',
      'b',
      '.',
      '*',
      '?',
      '/',
      '/**/',
      '**/',
      '/**',
      '[ab]',
      '[!a]',
      '{a,b}',
      '{a,b/c}',
      '[a-c]',
      '\\*',
    );
    const pathPart = fc.constantFrom('a', 'b', 'c', '/', '*', 'ab', '.c');
    fc.assert(
      fc.property(
        fc.array(globPart, { minLength: 1, maxLength: 6 }),
        fc.array(pathPart, { minLength: 1, maxLength: 8 }),
        (gp, pp) => {
          const g = gp.join('');
          const p = pp.join('');
          fc.pre(!/^\/|\/$|\/\//.test(p) && !/[^/]\*\*|\*\*[^/]|\/\/|^\.?\//.test(g));
          assert.equal(Glob.compile(g, { braces: true }).test(p), regex(g).test(p), `${g} on ${p}`);
        },
      ),
      { numRuns: 3000 },
    );
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

describe("the file lists' globs (protected and private files), on the same matcher", () => {
  const m = (pattern: string, p: string) => fileGlob(pattern).test(p);

  it('*, ?, [sets], {alternatives}, ** over folders; a name pattern matches in any folder; a folder match covers its content', () => {
    assert.ok(m('*.pem', 'a/b/c.pem'));
    assert.ok(m('id_?sa', 'id_rsa') && m('id_?sa', 'x/id_dsa') && !m('id_?sa', 'id_ecdsa'));
    assert.ok(m('file[0-9].txt', 'file7.txt') && !m('file[!0-9].txt', 'file7.txt') && m('f[!0-9]', 'fa'));
    assert.ok(m('**/*.{lock,toml}', 'a/Cargo.toml') && m('**/*.{lock,toml}', 'yarn.lock'));
    assert.ok(m('src/**/gen', 'src/gen') && m('src/**/gen', 'src/a/b/gen/x.ts') && !m('src/**/gen', 'lib/src/gen'));
    assert.ok(m('.git', 'a/.git/hooks/x') && !m('.git', 'a/.github/x'));
    assert.ok(m('**/.vscode/*.json', '.vscode/settings.json') && !m('**/.vscode/*.json', '.vscode/a/b.js'));
    assert.ok(m('./scripts/', 'scripts/x.sh') && m('/scripts', 'scripts/x.sh') && !m('scripts/x', 'a/scripts/x'));
    assert.ok(m('*.PEM', 'Cert.pem'), 'case is ignored');
    assert.ok(m('[unclosed', '[unclosed') && m('{single}', '{single}'), 'unbalanced brackets are literal');
    assert.ok(m('.vscode\\*.json', '.vscode/tasks.json'), 'a backslash separates, as typed on Windows');
    assert.ok(m('dist/**', 'dist') && m('dist/**', 'dist/a/b'), 'a trailing /** covers the folder too');
    assert.ok(m('file[[:digit:]]', 'x/FILE7'), "the matcher's classes, case ignored");
  });

  it('a pattern too long, empty or with more than 64 alternatives is refused (each alternative is matched on every path)', () => {
    assert.throws(() => fileGlob('a'.repeat(513)), /longer than 512 characters/);
    assert.throws(() => fileGlob(' ./ '), /empty/);
    assert.throws(() => fileGlob('{a,b}'.repeat(7)), /more than 64 brace alternatives/);
    assert.ok(fileGlob('{a,b}'.repeat(6)).test('x/ababab'));
  });

  it('a pattern built to backtrack answers at once (the walk never returns further than the last star)', () => {
    const hostile = `${'*?'.repeat(11)}Z`;
    const name = 'a'.repeat(40);
    for (let i = 0; i < 40; i++) assert.equal(m(hostile, `dir${i}/${name}`), false);
    const deep = `${'**/'.repeat(30)}z`;
    assert.equal(m(deep, `${'a/'.repeat(400)}b`), false);
    assert.equal(m(`${'*a'.repeat(200)}b`, 'a'.repeat(4000)), false);
  });
});
