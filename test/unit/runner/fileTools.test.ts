// read_file, write_file, edit_file on real files in a temp workspace, called through the registry
// exactly as the loop will call them (list_files and search_text: files/engines.test.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolCall } from '../../../src/store/api/schema';
import { createCodingRegistry, type ToolContext } from '../../../src/runner/tools';
import { blobSink, rmrf, tmpDir, toolCtx } from './helpers';

const registry = createCodingRegistry();
let n = 0;
const call = (name: string, args: unknown): ToolCall => ({
  id: `call_${++n}`,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

describe('runner/tools file tools', () => {
  let root: string;
  let ctx: ToolContext;
  const run = (name: string, args: unknown, c: ToolContext = ctx) => registry.execute(call(name, args), c);
  const read = (p: string) => fs.readFileSync(path.join(root, p), 'utf8');

  beforeEach(() => {
    root = tmpDir();
    ctx = toolCtx(root);
    fs.mkdirSync(path.join(root, 'src/lib'), { recursive: true });
    fs.mkdirSync(path.join(root, 'node_modules/dep'), { recursive: true });
    fs.mkdirSync(path.join(root, '.git'));
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'export function a() {\n  return 1;\n}\n');
    fs.writeFileSync(path.join(root, 'src/lib/b.js'), 'const x = 1;\nfunction helper() {}\nconst y = 2;\n');
    fs.writeFileSync(path.join(root, 'node_modules/dep/index.js'), 'function helper() {}\n');
    fs.writeFileSync(path.join(root, '.git/HEAD'), 'function helper\n');
    fs.writeFileSync(path.join(root, 'README.md'), '# readme\n');
  });
  afterEach(() => rmrf(root));

  describe('read_file', () => {
    it('reads a file, or a line range of it', async () => {
      assert.equal((await run('read_file', { path: 'src/a.ts' })).output, 'export function a() {\n  return 1;\n}\n');
      assert.equal((await run('read_file', { path: 'src/a.ts', start_line: 2, end_line: 2 })).output, '  return 1;\n');
      assert.equal((await run('read_file', { path: 'src/a.ts', start_line: 3 })).output, '}\n');
    });

    it('gives clear errors: missing file, directory, range past the end, binary', async () => {
      const missing = await run('read_file', { path: 'nope.txt' });
      assert.equal(missing.is_error, true);
      assert.match(missing.output, /read_file failed: "nope\.txt" no such file or directory \(ENOENT\)/);
      assert.match((await run('read_file', { path: 'src' })).output, /"src" is a directory; use list_files/);
      assert.match(
        (await run('read_file', { path: 'src/a.ts', start_line: 9 })).output,
        /has 3 lines; start_line 9 is past the end/,
      );
      fs.writeFileSync(path.join(root, 'bin.dat'), Buffer.from([1, 0, 2, 3]));
      assert.match((await run('read_file', { path: 'bin.dat' })).output, /looks like a binary file/);
    });

    it('caps long output with a note, and the full text goes to a blob', async () => {
      const big = 'line of text\n'.repeat(1000);
      fs.writeFileSync(path.join(root, 'big.txt'), big);
      const sink = blobSink();
      const r = await run('read_file', { path: 'big.txt' }, { ...ctx, outputCap: 100, putBlob: sink.putBlob });
      assert.equal(r.is_error, false);
      assert.ok(r.blob && sink.blobs.get(r.blob) === big, 'full output stored');
      assert.ok(r.output.startsWith(big.slice(0, 100)));
      assert.match(
        r.output,
        new RegExp(`\\[output truncated: 100 of ${big.length} bytes shown; full output in blob ${r.blob}\\]$`),
      );
      // Without a blob store the note says so by leaving the blob out.
      const noBlob = await run('read_file', { path: 'big.txt' }, { ...ctx, outputCap: 100 });
      assert.match(noBlob.output, /\[output truncated: 100 of 13000 bytes shown\]$/);
      assert.equal(noBlob.blob, null);
    });

    it('never cuts a multi-byte character in half', async () => {
      fs.writeFileSync(path.join(root, 'u.txt'), 'ééééé');
      const r = await run('read_file', { path: 'u.txt' }, { ...ctx, outputCap: 5 });
      assert.match(r.output, /^éé\n\[output truncated: 4 of 10 bytes shown\]$/);
    });

    it('names the path relative to the workspace even when the root is a symlink', async () => {
      const holder = tmpDir('aw-link-');
      try {
        fs.symlinkSync(root, path.join(holder, 'ws'));
        const r = await run('read_file', { path: 'src/missing.ts' }, toolCtx(path.join(holder, 'ws')));
        assert.equal(r.output, 'read_file failed: "src/missing.ts" no such file or directory (ENOENT).');
      } finally {
        rmrf(holder);
      }
    });

    it('refuses paths outside the workspace as an error result', async () => {
      const r = await run('read_file', { path: '../../etc/passwd' });
      assert.equal(r.is_error, true);
      assert.match(r.output, /Path "\.\.\/\.\.\/etc\/passwd" is outside the workspace/);
    });
  });

  describe('write_file', () => {
    it('creates a file and its missing folders, then overwrites it', async () => {
      const r = await run('write_file', { path: 'new/deep/f.txt', content: 'héllo' });
      assert.equal(r.output, 'Created new/deep/f.txt (6 bytes).');
      assert.equal(read('new/deep/f.txt'), 'héllo');
      assert.equal(
        (await run('write_file', { path: 'new/deep/f.txt', content: 'again' })).output,
        'Overwrote new/deep/f.txt (5 bytes).',
      );
      assert.equal(read('new/deep/f.txt'), 'again');
      assert.deepEqual(fs.readdirSync(path.join(root, 'new/deep')), ['f.txt'], 'no temp files left behind');
    });

    it('keeps an existing file mode', async () => {
      fs.chmodSync(path.join(root, 'src/a.ts'), 0o755);
      await run('write_file', { path: 'src/a.ts', content: '#!/bin/sh\n' });
      assert.equal(fs.statSync(path.join(root, 'src/a.ts')).mode & 0o777, 0o755);
    });

    it('refuses to write outside, through a symlinked dir, or onto a directory', async () => {
      const outside = tmpDir('aw-out-');
      try {
        fs.symlinkSync(outside, path.join(root, 'out'));
        const r = await run('write_file', { path: 'out/sub/evil.txt', content: 'x' });
        assert.equal(r.is_error, true);
        assert.match(r.output, /leaves the workspace through the symlink "out"/);
        assert.deepEqual(fs.readdirSync(outside), [], 'nothing created outside');
        assert.match(
          (await run('write_file', { path: '/tmp/evil.txt', content: 'x' })).output,
          /outside the workspace/,
        );
        assert.match((await run('write_file', { path: 'src', content: 'x' })).output, /"src" is a directory/);
      } finally {
        rmrf(outside);
      }
    });
  });

  describe('edit_file', () => {
    it('replaces exactly one occurrence and says where', async () => {
      const r = await run('edit_file', {
        path: 'src/lib/b.js',
        old_text: 'function helper() {}',
        new_text: 'function helper() {\n  return 42;\n}',
      });
      assert.equal(r.is_error, false);
      assert.equal(r.output, 'Edited src/lib/b.js: replaced 1 occurrence (first at line 2).');
      assert.equal(read('src/lib/b.js'), 'const x = 1;\nfunction helper() {\n  return 42;\n}\nconst y = 2;\n');
    });

    it('not found: a clear error with 0 matches and a whitespace hint', async () => {
      const r = await run('edit_file', { path: 'src/a.ts', old_text: 'return  1;', new_text: 'return 2;' });
      assert.equal(r.is_error, true);
      assert.match(r.output, /old_text was not found in src\/a\.ts \(0 matches\)/);
      assert.match(r.output, /It does match if whitespace is ignored/);
      assert.equal(read('src/a.ts'), 'export function a() {\n  return 1;\n}\n', 'file untouched');
    });

    it('not unique: says how many matches and where; replace_all replaces them all', async () => {
      const r = await run('edit_file', { path: 'src/lib/b.js', old_text: 'const', new_text: 'let' });
      assert.equal(r.is_error, true);
      assert.match(r.output, /not unique in src\/lib\/b\.js: found 2 matches \(at lines 1, 3\)/);
      const all = await run('edit_file', {
        path: 'src/lib/b.js',
        old_text: 'const',
        new_text: 'let',
        replace_all: true,
      });
      assert.equal(all.output, 'Edited src/lib/b.js: replaced 2 occurrences (first at line 1).');
      assert.equal(read('src/lib/b.js'), 'let x = 1;\nfunction helper() {}\nlet y = 2;\n');
    });

    it('says when the edit looks already applied (a replayed call)', async () => {
      const args = { path: 'src/a.ts', old_text: 'return 1;', new_text: 'return 2;' };
      await run('edit_file', args);
      assert.match(
        (await run('edit_file', args)).output,
        /new_text is already present: the edit may have been applied already/,
      );
    });

    it('matches LF text in a CRLF file and keeps CRLF', async () => {
      fs.writeFileSync(path.join(root, 'w.txt'), 'one\r\ntwo\r\nthree\r\n');
      await run('edit_file', { path: 'w.txt', old_text: 'one\ntwo', new_text: 'uno\ndos' });
      assert.equal(read('w.txt'), 'uno\r\ndos\r\nthree\r\n');
    });

    it('treats "$&" in new_text literally', async () => {
      await run('edit_file', { path: 'README.md', old_text: 'readme', new_text: 'cost: $& $1' });
      assert.equal(read('README.md'), '# cost: $& $1\n');
    });
  });
});
