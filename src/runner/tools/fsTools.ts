// read_file: a text file, or a line range of it.
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { capOutput } from './output';
import { confinePath } from './paths';
import { readUtf8 } from './textFile';
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
    const st = await fs.stat(abs);
    if (st.isDirectory()) throw new ToolFailure(`"${rel}" is a directory; use list_files to see its contents.`);
    if (st.size > MAX_READ_BYTES && args.start_line === undefined) {
      throw new ToolFailure(
        `"${rel}" is ${st.size} bytes, over the ${MAX_READ_BYTES}-byte read limit; read a line range instead.`,
      );
    }
    const reading = readUtf8(await fs.readFile(abs));
    if ('notText' in reading)
      throw new ToolFailure(`"${rel}" ${reading.notText}; not shown (read_file reads UTF-8 text only).`);
    let text = reading.text;
    if (args.start_line !== undefined || args.end_line !== undefined)
      text = lineRange(text, rel, args.start_line ?? 1, args.end_line);
    const capped = await capOutput(text, ctx, 'head');
    return { output: capped.text, is_error: false, blob: capped.blob };
  },
});

function lineRange(text: string, rel: string, start: number, end: number | undefined): string {
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop(); // a final newline does not start another line
  if (end !== undefined && end < start) throw new ToolFailure(`end_line (${end}) is before start_line (${start}).`);
  if (start > lines.length)
    throw new ToolFailure(`"${rel}" has ${lines.length} lines; start_line ${start} is past the end.`);
  const last = Math.min(end ?? lines.length, lines.length);
  return lines.slice(start - 1, last).join('\n') + (last < lines.length || text.endsWith('\n') ? '\n' : '');
}
