// read_file: a text file, or a line range of it. A range is read as a range: the file is streamed
// only as far as the range's last line, and no more than MAX_READ_BYTES of it (plus one chunk) is
// ever held, even when the file is one giant line. What is read stays bytes: it is checked as UTF-8
// without decoding it, kept whole as those bytes, and only what the model sees is decoded.
import { z } from 'zod';
import { capBytes } from './output';
import { confinePath } from './paths';
import {
  CHUNK_BYTES,
  chunks,
  closeFile,
  NotRegularFile,
  openRegular,
  ReadCancelled,
  readWhole,
  TooLarge,
} from './regularFile';
import type { OpenFile } from './regularFile';
import { notUtf8Text, utf16Bom, wholeCharacters } from './textFile';
import { defineTool, ToolFailure } from './types';

/** Reading more than this is refused (ask for a line range): a tool result is not a file transfer. */
export const MAX_READ_BYTES = 10 * 1024 * 1024;

export const readFile = defineTool({
  name: 'read_file',
  category: 'read',
  sideEffecting: false,
  description:
    'Read a UTF-8 text file in the workspace. Optionally only lines start_line..end_line (1-based, inclusive). Long output is truncated.',
  args: z.object({
    path: z.string().describe('File path relative to the workspace root'),
    start_line: z.number().int().min(1).optional().describe('First line to return (1-based)'),
    end_line: z.number().int().min(1).optional().describe('Last line to return (inclusive)'),
  }),
  reads: (args) => [args.path],
  async run(args, ctx) {
    const { abs, rel } = await confinePath(ctx.workspaceRoot, args.path, ctx);
    const ranged = args.start_line !== undefined || args.end_line !== undefined;
    const bytes = await withRegularFile(abs, rel, 'read_file', ctx.signal, async (file) => {
      if (!ranged && file.st.size > MAX_READ_BYTES) throw overLimit(rel, file.st.size);
      if (ranged) return lineRangeBytes(file, rel, args.start_line ?? 1, args.end_line, ctx.signal);
      const whole = await readWhole(file, MAX_READ_BYTES, ctx.signal);
      const notText = notUtf8Text(whole);
      if (notText) throw new ToolFailure(`"${rel}" ${notText}; not shown (read_file reads UTF-8 text only).`);
      return whole;
    });
    const capped = await capBytes(bytes, ctx);
    return { output: capped.text, is_error: false, blob: capped.blob };
  },
});

const overLimit = (rel: string, size: number): ToolFailure =>
  new ToolFailure(`"${rel}" is ${size} bytes, over the ${MAX_READ_BYTES}-byte read limit; read a line range instead.`);

/**
 * Runs `use` on the regular file at `abs`, opened without blocking (regularFile.ts), and closes it;
 * a FIFO, socket or device, a file that grew past the limit and Cancel become clear ToolFailures.
 */
export async function withRegularFile<T>(
  abs: string,
  rel: string,
  tool: string,
  signal: AbortSignal,
  use: (file: OpenFile) => Promise<T>,
): Promise<T> {
  let file: OpenFile;
  try {
    file = await openRegular(abs);
  } catch (e) {
    if (!(e instanceof NotRegularFile)) throw e;
    if (e.what === 'a directory') throw new ToolFailure(`"${rel}" is a directory; use list_files to see its contents.`);
    throw new ToolFailure(
      `"${rel}" is ${e.what}, not a regular file; ${tool} works on regular files only (reading it could wait forever or never end).`,
    );
  }
  try {
    return await use(file);
  } catch (e) {
    if (e instanceof TooLarge)
      throw new ToolFailure(`"${rel}" grew past ${e.limit} bytes while it was read, over the limit of ${tool}.`);
    if (e instanceof ReadCancelled) throw new ToolFailure(e.message);
    throw e;
  } finally {
    await closeFile(file, signal);
  }
}

/**
 * Lines start..end (end: the last line if absent), byte for byte as the file has them. Only the
 * bytes it returns are checked as UTF-8 text (and the file's first bytes, for a UTF-16 mark).
 */
export async function lineRange(
  file: OpenFile,
  rel: string,
  start: number,
  end: number | undefined,
  signal: AbortSignal,
  chunkBytes = CHUNK_BYTES,
): Promise<string> {
  return (await lineRangeBytes(file, rel, start, end, signal, chunkBytes)).toString('utf8');
}

/** lineRange's answer as the UTF-8 bytes of its text. */
async function lineRangeBytes(
  file: OpenFile,
  rel: string,
  start: number,
  end: number | undefined,
  signal: AbortSignal,
  chunkBytes = CHUNK_BYTES,
): Promise<Buffer> {
  if (end !== undefined && end < start) throw new ToolFailure(`end_line (${end}) is before start_line (${start}).`);
  const r = { line: 1, kept: [] as Buffer[], bytes: 0, cut: false, done: false, endsWithNewline: false };
  let first = true;
  for await (const chunk of chunks(file, signal, chunkBytes, true)) {
    const bom = first ? utf16Bom(chunk) : null;
    if (bom) throw new ToolFailure(`"${rel}" ${bom}; not shown (read_file reads UTF-8 text only).`);
    first = false;
    take(r, chunk, start, end);
    r.endsWithNewline = chunk[chunk.length - 1] === 0x0a;
    if (r.done) break;
  }
  if (!r.done) {
    const lines = r.line - (r.endsWithNewline ? 1 : 0); // a final newline does not start another line
    if (start > lines) throw new ToolFailure(`"${rel}" has ${lines} lines; start_line ${start} is past the end.`);
  }
  const all = Buffer.concat(r.kept, r.bytes);
  const bytes = r.cut ? wholeCharacters(all) : all;
  const notText = notUtf8Text(bytes, start);
  if (notText) throw new ToolFailure(`"${rel}" ${notText}; not shown (read_file reads UTF-8 text only).`);
  if (!r.cut) return bytes;
  const note = `\n[read_file stopped after ${MAX_READ_BYTES} bytes of the range, in line ${r.line}: read fewer lines at a time]`;
  return Buffer.concat([bytes, Buffer.from(note, 'utf8')]);
}

interface RangeState {
  /** The line the next byte belongs to. */
  line: number;
  kept: Buffer[];
  bytes: number;
  /** Stopped at MAX_READ_BYTES within the range. */
  cut: boolean;
  /** Nothing more to read. */
  done: boolean;
}

/** Walks one chunk: skips the lines before `start`, keeps (copies of) the bytes of the range. */
function take(r: RangeState, chunk: Buffer, start: number, end: number | undefined): void {
  for (let pos = 0; pos < chunk.length && !r.done;) {
    const nl = chunk.indexOf(0x0a, pos);
    const lineEnd = nl < 0 ? chunk.length : nl + 1;
    if (r.line >= start) {
      const room = MAX_READ_BYTES - r.bytes;
      const piece = chunk.subarray(pos, Math.min(lineEnd, pos + room));
      r.kept.push(Buffer.from(piece));
      r.bytes += piece.length;
      if (piece.length < lineEnd - pos) r.cut = r.done = true;
    }
    if (nl >= 0) r.line++;
    if (end !== undefined && r.line > end) r.done = true;
    pos = lineEnd;
  }
}
