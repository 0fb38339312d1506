// Write tools: write_file and edit_file. Both replace the file atomically (temp file + rename) so
// a crash mid-write never leaves a half-written source file behind. Both refuse a file that is not
// UTF-8 text (textFile.ts): edit_file would write its bytes back mangled; write_file would replace
// content the model could not have read. edit_file works on the file's bytes (editBytes.ts): a file
// at the read limit is searched natively and never decoded to a string.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MAX_READ_BYTES, withRegularFile } from './fsTools';
import { confinePath, isInside } from './paths';
import { closeFile, NotRegularFile, openRegular, readHead, readWhole } from './regularFile';
import { notUtf8Text, wholeCharacters } from './textFile';
import { planEdit } from './editBytes';
import { defineTool, ToolFailure } from './types';

async function writeAtomic(abs: string, content: string | Buffer): Promise<void> {
  const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.waypoints-${randomBytes(4).toString('hex')}.tmp`);
  const mode = await fs.stat(abs).then(
    (s) => s.mode,
    () => undefined,
  ); // keep an existing file's permissions
  try {
    await fs.writeFile(tmp, content, { encoding: 'utf8', mode });
    await fs.rename(tmp, abs);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

export const writeFile = defineTool({
  name: 'write_file',
  category: 'write',
  sideEffecting: true,
  description: 'Create or overwrite a file in the workspace with the given content. Creates missing parent folders.',
  args: z.object({
    path: z.string().describe('File path relative to the workspace root'),
    content: z.string().describe('The complete new content of the file'),
  }),
  files: { kind: 'paths', paths: (args) => [args.path] },
  async run(args, ctx) {
    const { abs, rel } = await confinePath(ctx.workspaceRoot, args.path, ctx);
    const existed = await fs.stat(abs).then(
      (s) => {
        if (s.isDirectory()) throw new ToolFailure(`"${rel}" is a directory; cannot write a file there.`);
        return s;
      },
      () => null,
    );
    if (existed?.isFile()) {
      const notText = await existingNotText(abs, ctx.signal);
      if (notText)
        throw new ToolFailure(
          `"${rel}" ${notText}. write_file does not overwrite it: its content cannot have been read as text, and ` +
            'replacing it would convert or destroy it. If replacing it is intended, remove it first.',
        );
    }
    // The parent chain was confined above (its existing part is real and inside), so mkdir stays inside.
    const realRoot = await fs.realpath(ctx.workspaceRoot);
    if (!isInside(realRoot, path.dirname(abs)))
      throw new ToolFailure(`Refusing to create folders outside the workspace for "${rel}".`);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await writeAtomic(abs, args.content);
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return { output: `${existed ? 'Overwrote' : 'Created'} ${rel} (${bytes} bytes).`, is_error: false, blob: null };
  },
});

export const editFile = defineTool({
  name: 'edit_file',
  category: 'write',
  sideEffecting: true,
  description:
    'Replace an exact piece of text in a file. old_text must match the file exactly (including whitespace and indentation) ' +
    'and occur exactly once, unless replace_all is true. Include enough surrounding lines to make it unique.',
  args: z.object({
    path: z.string().describe('File path relative to the workspace root'),
    old_text: z.string().min(1).describe('Exact text to replace'),
    new_text: z.string().describe('Replacement text'),
    replace_all: z.boolean().default(false).describe('Replace every occurrence instead of requiring exactly one'),
  }),
  files: { kind: 'paths', paths: (args) => [args.path] },
  // What it answers (found or not, where, "already present") tells the model about the content.
  reads: (args) => [args.path],
  async run(args, ctx) {
    const { abs, rel } = await confinePath(ctx.workspaceRoot, args.path, ctx);
    const bytes = await withRegularFile(abs, rel, 'edit_file', ctx.signal, async (file) => {
      if (file.st.size > MAX_READ_BYTES)
        throw new ToolFailure(
          `"${rel}" is ${file.st.size} bytes, over the ${MAX_READ_BYTES}-byte limit of edit_file; the file was not changed. ` +
            'Change it another way (a command), or split it into smaller files.',
        );
      return readWhole(file, MAX_READ_BYTES, ctx.signal);
    });
    const notText = notUtf8Text(bytes);
    if (notText)
      throw new ToolFailure(`"${rel}" ${notText}. edit_file edits UTF-8 text only; the file was not changed.`);
    const edit = await planEdit(bytes, args);
    if (edit.kind === 'not_found') throw new ToolFailure(notFoundMessage(rel, edit));
    if (edit.kind === 'not_unique')
      throw new ToolFailure(
        `old_text is not unique in ${rel}: found ${edit.count} matches (at lines ${edit.lines.join(', ')}). ` +
          'Include more surrounding lines to pick one, or set replace_all to true.',
      );
    await writeAtomic(abs, edit.updated);
    const what = edit.count === 1 ? '1 occurrence' : `${edit.count} occurrences`;
    return {
      output: `Edited ${rel}: replaced ${what} (first at line ${edit.firstLine}).`,
      is_error: false,
      blob: null,
    };
  },
});

/**
 * Why an existing file is not UTF-8 text, or null. A file over the read limit is judged by its
 * start; one that is no regular file (any more) is not read: the rename replaces it.
 */
async function existingNotText(abs: string, signal: AbortSignal): Promise<string | null> {
  let file;
  try {
    file = await openRegular(abs);
  } catch (e) {
    if (e instanceof NotRegularFile) return null;
    throw e;
  }
  let buf: Buffer;
  try {
    const whole = file.st.size <= MAX_READ_BYTES;
    buf = whole
      ? await readWhole(file, MAX_READ_BYTES, signal)
      : wholeCharacters(await readHead(file, 64 * 1024, signal));
  } finally {
    await closeFile(file, signal);
  }
  return notUtf8Text(buf);
}

/** Says what probably went wrong, since the model cannot see the file's bytes. */
function notFoundMessage(rel: string, hints: { squashed: boolean; applied: boolean }): string {
  let msg = `old_text was not found in ${rel} (0 matches). It must match exactly, including whitespace and indentation; read the file again and copy the text.`;
  if (hints.squashed) msg += ' (It does match if whitespace is ignored: check indentation and line breaks.)';
  if (hints.applied) msg += ' (new_text is already present: the edit may have been applied already.)';
  return msg;
}
