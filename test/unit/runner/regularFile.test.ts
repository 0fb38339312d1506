// The bounded reader under the file tools, the file journal and the approval diff (regularFile.ts):
// only regular files, opened without blocking and without following a final symlink; chunks that
// stop on Cancel; whole reads with a limit. And read_file's streamed line range, which must answer
// exactly what reading the whole text and splitting it answered, wherever the chunks break.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { createCodingRegistry } from '../../../src/runner/tools';
import { lineRange, MAX_READ_BYTES } from '../../../src/runner/tools/fsTools';
import {
  chunks,
  closeFile,
  NotRegularFile,
  openRegular,
  ReadCancelled,
  readSmallRegularSync,
  readWhole,
  TooLarge,
} from '../../../src/runner/tools/regularFile';
import { proposedContent } from '../../../src/views/run/proposedContent';
import type { Approval } from '../../../src/store/api/schema';
import { blobSink, rmrf, tmpDir, toolCtx } from './helpers';

describe('bounded reads of workspace files', () => {
  let dir: string;
  beforeEach(() => {
    dir = tmpDir('aw-regular-');
  });
  afterEach(() => rmrf(dir));
  const at = (name: string) => path.join(dir, name);

  it('opens regular files only: a FIFO (without waiting for a writer), a folder, a symlink are refused by what they are', async () => {
    execFileSync('mkfifo', [at('pipe')]);
    fs.mkdirSync(at('folder'));
    fs.writeFileSync(at('file.txt'), 'x');
    fs.symlinkSync('file.txt', at('link'));
    for (const [name, what] of [
      ['pipe', 'a FIFO (named pipe)'],
      ['folder', 'a directory'],
      ['link', 'a symbolic link'],
    ]) {
      await assert.rejects(openRegular(at(name!)), (e: unknown) => e instanceof NotRegularFile && e.what === what);
    }
    assert.equal(readSmallRegularSync(at('pipe'), 1024), null, 'the synchronous form does not wait either');
    const file = await openRegular(at('file.txt'));
    assert.equal(file.st.size, 1);
    await closeFile(file);
  });

  it('a whole read has a limit, checked on the bytes read (a file that grew after fstat)', async () => {
    fs.writeFileSync(at('a'), 'x'.repeat(100));
    const file = await openRegular(at('a'));
    try {
      fs.appendFileSync(at('a'), 'y'.repeat(100)); // grows after fstat said 100
      await assert.rejects(readWhole(file, 150), TooLarge);
      assert.equal((await readWhole(file, 1000)).length, 200);
    } finally {
      await closeFile(file);
    }
    assert.equal(readSmallRegularSync(at('a'), 199), null);
    assert.equal(readSmallRegularSync(at('a'), 200)?.length, 200);
  });

  it('chunks stop on Cancel between reads', async () => {
    fs.writeFileSync(at('b'), Buffer.alloc(3 * 1024 * 1024, 0x61));
    const file = await openRegular(at('b'));
    const ctl = new AbortController();
    let seen = 0;
    await assert.rejects(
      (async () => {
        for await (const c of chunks(file, ctl.signal)) {
          seen += c.length;
          ctl.abort();
        }
      })(),
      ReadCancelled,
    );
    assert.equal(seen, 1024 * 1024, 'one chunk, then the cancel');
    await closeFile(file, ctl.signal);
  });

  it('a line range answers what the whole text split into lines answered, wherever the chunks break (property)', async () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', '\n', '\r\n', 'é', '✓', ' '), { maxLength: 40 })
      .map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(
        text,
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
        fc.integer({ min: 1, max: 9 }),
        async (content, start, end, chunk) => {
          fs.writeFileSync(at('t.txt'), content);
          const file = await openRegular(at('t.txt'));
          try {
            const got = await lineRange(file, 't.txt', start, end, new AbortController().signal, chunk).catch(
              (e: Error) => `error: ${e.message}`,
            );
            assert.equal(got, wholeTextRange(content, start, end));
          } finally {
            await closeFile(file);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a range of one giant line keeps at most the read limit, and says where it stopped', async () => {
    fs.writeFileSync(at('giant.txt'), 'x'.repeat(MAX_READ_BYTES + 2 * 1024 * 1024));
    const sink = blobSink();
    const r = await createCodingRegistry().execute(
      { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"giant.txt","start_line":1}' } },
      toolCtx(dir, { putBlob: sink.putBlob }),
    );
    assert.equal(r.is_error, false, r.output);
    const [full] = [...sink.blobs.values()];
    assert.ok(full!.startsWith('x'.repeat(1000)));
    assert.ok(
      full!.endsWith('\n[read_file stopped after 10485760 bytes of the range, in line 1: read fewer lines at a time]'),
    );
    assert.ok(full!.length < MAX_READ_BYTES + 200, `the full output kept is ${full!.length} characters`);
  });

  it("the approval's diff does not wait on a FIFO either", async () => {
    execFileSync('mkfifo', [at('pipe')]);
    const approval = { tool_name: 'write_file', arguments: { path: 'pipe', content: 'x' }, decision: null };
    const shown = await proposedContent(dir, approval as unknown as Approval);
    assert.equal(shown.current, '// pipe is a FIFO (named pipe), not a regular file: its content is not shown.');
  });
});

/** read_file's line range as it was computed before ranges were streamed: the whole text, split. */
function wholeTextRange(text: string, start: number, end: number | undefined): string {
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  if (end !== undefined && end < start) return `error: end_line (${end}) is before start_line (${start}).`;
  if (start > lines.length) return `error: "t.txt" has ${lines.length} lines; start_line ${start} is past the end.`;
  const last = Math.min(end ?? lines.length, lines.length);
  return lines.slice(start - 1, last).join('\n') + (last < lines.length || text.endsWith('\n') ? '\n' : '');
}
