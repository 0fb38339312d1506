// Issue 18, finding 7: the file tools on files that are not UTF-8 text — Latin-1, Windows-1252,
// UTF-16 with and without a byte order mark, binary, malformed UTF-8. read_file says what the file
// looks like instead of showing mangled text; edit_file and write_file refuse it and leave every
// byte as it was (before, edit_file wrote U+FFFD over each non-ASCII character). UTF-8 text, with
// or without a byte order mark, still reads and edits exactly.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ToolCall } from '../../../src/store/api/schema';
import { createCodingRegistry, type ToolContext } from '../../../src/runner/tools';
import { rmrf, tmpDir, toolCtx } from './helpers';

const registry = createCodingRegistry();
const call = (name: string, args: unknown): ToolCall => ({
  id: 'call_text',
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

const utf16le = (s: string) => Buffer.from(s, 'utf16le');
const utf16be = (s: string) => Buffer.from(s, 'utf16le').swap16();

/** File name → bytes, and what read_file must say about it. */
const NOT_TEXT: ReadonlyArray<readonly [string, Buffer, RegExp]> = [
  [
    'latin1.txt',
    Buffer.from('first line\ncaf\u00e9 au lait\n', 'latin1'),
    /is not valid UTF-8 \(byte 0xE9 on line 2 .*Latin-1/,
  ],
  ['cp1252.txt', Buffer.from([0x93, 0x71, 0x94, 0x0a]), /is not valid UTF-8 \(byte 0x93 on line 1/],
  ['utf16le-bom.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), utf16le('caf\u00e9\n')]), /is UTF-16 text \(it starts/],
  ['utf16be-bom.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be('caf\u00e9\n')]), /is UTF-16 text \(it starts/],
  ['utf16le.txt', utf16le('plain ascii text in utf-16\n'), /looks like UTF-16 text without a byte order mark/],
  [
    'image.png',
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
    /looks like a binary file/,
  ],
  ['overlong.txt', Buffer.from([0x61, 0xc0, 0x80, 0x0a]), /byte 0xC0 on line 1/],
  ['surrogate.txt', Buffer.from([0x0a, 0x0a, 0xed, 0xa0, 0x80]), /byte 0xED on line 3/],
  ['truncated.txt', Buffer.from([0x61, 0x0a, 0xe2, 0x82]), /byte 0xE2 on line 2/],
];

describe('runner/tools file tools on files that are not UTF-8 text', () => {
  let root: string;
  let ctx: ToolContext;
  const run = (name: string, args: unknown) => registry.execute(call(name, args), ctx);
  const bytes = (p: string) => fs.readFileSync(path.join(root, p));
  beforeEach(() => {
    root = tmpDir();
    ctx = toolCtx(root);
    for (const [name, content] of NOT_TEXT) fs.writeFileSync(path.join(root, name), content);
  });
  afterEach(() => rmrf(root));

  for (const [name, content, what] of NOT_TEXT) {
    it(`${name}: read_file says what it is, edit_file and write_file refuse and change no byte`, async () => {
      const read = await run('read_file', { path: name });
      assert.equal(read.is_error, true);
      assert.match(read.output, what);
      assert.match(read.output, /not shown \(read_file reads UTF-8 text only\)/);
      assert.doesNotMatch(read.output, /\ufffd/);

      const edit = await run('edit_file', { path: name, old_text: 'caf', new_text: 'CAF' });
      assert.equal(edit.is_error, true);
      assert.match(edit.output, what);
      assert.match(edit.output, /edit_file edits UTF-8 text only; the file was not changed/);

      const write = await run('write_file', { path: name, content: 'replaced\n' });
      assert.equal(write.is_error, true);
      assert.match(write.output, /write_file does not overwrite it/);
      assert.deepEqual(bytes(name), content, 'every byte as it was');
    });
  }

  it('UTF-8 with a byte order mark and multi-byte characters reads and edits exactly', async () => {
    const text = '\ufeffcaf\u00e9 \u2014 na\u00efve \ud83d\ude00\nsecond\n';
    fs.writeFileSync(path.join(root, 'utf8.txt'), text, 'utf8');
    assert.equal((await run('read_file', { path: 'utf8.txt' })).output, text);
    const edit = await run('edit_file', { path: 'utf8.txt', old_text: 'second', new_text: 'zweite \u00fc' });
    assert.equal(edit.is_error, false);
    assert.deepEqual(
      bytes('utf8.txt'),
      Buffer.from('\ufeffcaf\u00e9 \u2014 na\u00efve \ud83d\ude00\nzweite \u00fc\n', 'utf8'),
    );
    const write = await run('write_file', { path: 'utf8.txt', content: 'new\n' });
    assert.equal(write.output, 'Overwrote utf8.txt (4 bytes).');
  });

  it('write_file over a large binary file is refused from its first bytes', async () => {
    const big = Buffer.alloc(11 * 1024 * 1024, 0x41);
    big[100] = 0;
    fs.writeFileSync(path.join(root, 'big.bin'), big);
    const write = await run('write_file', { path: 'big.bin', content: 'x' });
    assert.match(write.output, /"big\.bin" looks like a binary file .*write_file does not overwrite it/);
    assert.equal(bytes('big.bin').length, big.length);
  });
});
