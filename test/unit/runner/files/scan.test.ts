// The command scan: what it sees and skips (.gitignore inside git repositories, nested and negated,
// .git/info/exclude, files.exclude, node_modules) — exactly what list_files lists on both file
// engines (VS Code's ripgrep and the Node walk) — nested repositories, and caps that say when they
// stop. Versions: bytes round-trip exactly (UTF-8 as text, everything else as base64).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../../../src/common/hash';
import { changedPaths, repoOf } from '../../../../src/runner/fileJournal/scan';
import { WorkspaceIndex } from '../../../../src/runner/fileJournal/scanIndex';
import { decodeBlob, encodeBytes, versionOf } from '../../../../src/runner/fileJournal/versions';
import { toIgnoreGlobs } from '../../../../src/runner/tools/finder/excludes';
import { workspace } from './journalSupport';
import { ENGINES } from './support';

/** What list_files's engine lists with these files.exclude globs (the scan also skips node_modules). */
async function listed(engine: (typeof ENGINES)[number], ws: string, exclude: string[]): Promise<string[]> {
  const scope = {
    root: fs.realpathSync(ws),
    rel: '.',
    excludes: toIgnoreGlobs([...exclude, '**/node_modules']),
    signal: new AbortController().signal,
  };
  return (await engine.finder().list(scope)).files.sort();
}

describe('file journal: the workspace scan', () => {
  it('honours .gitignore (nested, negated), .git/info/exclude and files.exclude; skips .git and node_modules — as both file engines list them', async () => {
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
    const exclude = ['**/*.env', 'tmp'];
    const index = new WorkspaceIndex({ root: ws });
    const scan = await index.before({ exclude });
    const expected = ['.gitignore', 'keep.log', 'lib/src.txt', 'src/.gitignore', 'src/a.ts'];
    assert.deepEqual([...scan.files.keys()].sort(), expected);
    for (const engine of ENGINES)
      assert.deepEqual(await listed(engine, ws, exclude), expected, `list_files on ${engine.name} lists the same`);
    assert.deepEqual(scan.repos, ['', 'lib']);
    assert.equal(repoOf(['', 'lib'], 'lib/src.txt'), 'lib');
    assert.equal(repoOf(['', 'lib'], 'library.txt'), '');
    assert.equal(scan.complete, true);
    fs.writeFileSync(path.join(ws, 'src/a.ts'), 'changed');
    fs.rmSync(path.join(ws, 'keep.log'));
    fs.writeFileSync(path.join(ws, 'src/new.ts'), 'new');
    fs.writeFileSync(path.join(ws, 'dist/ignored.js'), 'ignored');
    fs.writeFileSync(path.join(ws, 'node_modules/p/index.js'), 'changed');
    const after = await index.after({ exclude });
    assert.deepEqual(changedPaths(scan, after), ['keep.log', 'src/a.ts', 'src/new.ts']);
    assert.deepEqual([...after.files.keys()].sort(), (await listed(ENGINES[0]!, ws, exclude)).sort());
  });

  it('sees the files list_files sees: outside a git repository .gitignore does not count, .ignore does', async () => {
    const ws = workspace({
      '.gitignore': 'dist/\n',
      '.ignore': 'cache/\n',
      'dist/out.js': 'o',
      'cache/c.bin': 'c',
      'a.txt': 'a',
    });
    const scan = await new WorkspaceIndex({ root: ws }).before();
    assert.deepEqual([...scan.files.keys()].sort(), ['.gitignore', '.ignore', 'a.txt', 'dist/out.js']);
    for (const engine of ENGINES) assert.deepEqual(await listed(engine, ws, []), [...scan.files.keys()].sort());
    assert.deepEqual(scan.repos, []);
  });

  it('stops at its caps and says so; a cancelled scan says so too; the next scan is complete again', async () => {
    const ws = workspace(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`d${i % 3}/f${i}.txt`, 'x'])));
    const index = new WorkspaceIndex({ root: ws });
    const capped = await index.before({ maxFiles: 12 });
    assert.equal(capped.complete, false);
    assert.equal(capped.files.size, 12);
    assert.match(capped.note!, /stopped at 12 files/);
    const timed = await index.before({ maxMs: 0 });
    assert.equal(timed.complete, false);
    assert.match(timed.note!, /stopped after 0 s/);
    const cancelled = await index.before({ signal: AbortSignal.abort() });
    assert.equal(cancelled.complete, false);
    assert.equal(cancelled.note, 'the scan was cancelled');
    const full = await index.before();
    assert.equal(full.complete, true);
    assert.equal(full.files.size, 30);
    assert.equal(full.note, null);
    // A refresh reads again only the folders that changed (or changed too recently to tell): one gains
    // a file, so the refresh lists past the cap however long ago the others were made.
    fs.writeFileSync(path.join(ws, 'd2/f30.txt'), 'x');
    const again = await index.after({ maxFiles: 29 });
    assert.equal(again.complete, false, 'a refresh past the cap stops too');
    assert.match(again.note!, /stopped at 29 files/);
  });
});

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

  it('a kept version goes to the store as bytes with their hash: text as its UTF-8, binary as base64 made in slices', async () => {
    // Sizes around the base64 slice (384 KiB) and not multiples of 3: the joined slices must be one base64.
    const binary = Buffer.alloc(3 * 128 * 1024 * 2 + 5, 0xff);
    binary.write('\u0000start', 0);
    binary.write('end', binary.length - 3);
    const text = Buffer.from('é✓\r\n'.repeat(100_000));
    for (const [bytes, encoding] of [
      [binary, 'base64'],
      [text, 'utf8'],
    ] as const) {
      const put: { content: Buffer; hash?: string }[] = [];
      const v = await versionOf(bytes, async (content, hash) => {
        put.push({ content: Buffer.from(content as Uint8Array), hash });
        return hash!;
      });
      const [kept] = put;
      assert.ok(kept && put.length === 1, 'kept once');
      assert.equal(v.encoding, encoding);
      assert.equal(v.sha256, sha256(bytes), 'the version names the file bytes');
      assert.equal(kept.hash, sha256(kept.content), 'the hash given is the stored bytes');
      assert.ok(decodeBlob(kept.content.toString('utf8'), encoding).equals(bytes), 'and they round-trip');
    }
  });
});
