// What a write_file / edit_file approval would write, for "Show diff": vscode-free. The file is
// found by the same resolver the tools use (paths.ts confinePath), so an absolute path inside the
// workspace shows the file the tool writes, and a path the tool would refuse says so instead of
// showing some other file. The file is read as the tools read it (regularFile.ts): a FIFO is not
// waited on, and a file over the tools' read limit is not loaded.
import { MAX_READ_BYTES } from '../../runner/tools/fsTools';
import { confinePath, PathError, type ConfineOptions } from '../../runner/tools/paths';
import { closeFile, NotRegularFile, openRegular, readWhole } from '../../runner/tools/regularFile';
import type { Approval } from '../../store/api/schema';

export interface ProposedContent {
  /** The path as the call names it. */
  path: string;
  /** The file the tool would write (real path), or null when the tool would refuse the path. */
  abs: string | null;
  /** Its text now; null: no such file. */
  current: string | null;
  proposed: string;
}

/** The proposed text of a write/edit approval, or an explanation when it cannot be computed. */
export async function proposedContent(
  workspaceRoot: string,
  approval: Approval,
  opts: ConfineOptions = {},
): Promise<ProposedContent> {
  const args = (
    approval.decision?.kind === 'approve_edited' ? approval.decision.arguments : approval.arguments
  ) as Record<string, unknown>;
  const path = String(args.path ?? '');
  let abs: string;
  try {
    abs = (await confinePath(workspaceRoot, path, opts)).abs;
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    return {
      path,
      abs: null,
      current: null,
      proposed: `// ${approval.tool_name} would refuse this path: ${err.message}`,
    };
  }
  const current = await currentText(abs, path);
  if (approval.tool_name === 'write_file') return { path, abs, current, proposed: String(args.content ?? '') };
  const oldText = String(args.old_text ?? '');
  const newText = String(args.new_text ?? '');
  if (current === null) return { path, abs, current, proposed: `// ${path} does not exist: edit_file would fail.` };
  const at = current.indexOf(oldText);
  if (at < 0 || oldText === '')
    return {
      path,
      abs,
      current,
      proposed: `// The text to replace was not found in ${path}: edit_file would fail.\n${current}`,
    };
  return { path, abs, current, proposed: current.slice(0, at) + newText + current.slice(at + oldText.length) };
}

/** The file's text now; null: none (a new file). A file the tools would not read says why instead. */
async function currentText(abs: string, path: string): Promise<string | null> {
  let file;
  try {
    file = await openRegular(abs);
  } catch (err) {
    if (err instanceof NotRegularFile)
      return `// ${path} is ${err.what}, not a regular file: its content is not shown.`;
    return null;
  }
  try {
    if (file.st.size > MAX_READ_BYTES)
      return `// ${path} is ${file.st.size} bytes, over the ${MAX_READ_BYTES}-byte read limit: its content is not shown.`;
    return (await readWhole(file, MAX_READ_BYTES)).toString('utf8');
  } catch {
    return null;
  } finally {
    await closeFile(file);
  }
}
