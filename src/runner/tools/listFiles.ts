// list_files: the files of a workspace folder through the FileFinder (ripgrep or the Node walk,
// same answers), without what .gitignore/.ignore/exclude settings hide. Folders are shown when
// they hold listed files — one level with file counts, or the whole tree. Every early stop is said:
// pages (offset), the walk limit; and what the folder holds that is not listed is named.
import { type Dirent, promises as fs } from 'node:fs';
import { z } from 'zod';
import { toIgnoreGlobs } from './finder/excludes';
import { fileLimits, type FileFinder, type FileList } from './finder/types';
import { count } from '../../common/format';
import { fitPage, plural } from './paging';
import { confinePath } from './paths';
import { defineTool, ToolFailure } from './types';

/** How many unlisted entries the note names. */
const MAX_NAMED = 20;

export function makeListFiles(finder: FileFinder) {
  return defineTool({
    name: 'list_files',
    category: 'read',
    sideEffecting: false,
    description:
      'List the files under a workspace folder, without those ignored by .gitignore, .ignore or the exclude settings. ' +
      'One level by default (sub-folders end with "/" and show how many files they hold), or the whole tree with recursive. ' +
      'Long listings come in pages: the output gives the offset for the next one, and names what the folder holds that is not listed.',
    args: z.object({
      path: z.string().default('.').describe('Folder relative to the workspace root (default: the root)'),
      recursive: z.boolean().default(false).describe('List the whole tree below the folder'),
      limit: z.number().int().min(1).max(5000).default(500).describe('Entries per page'),
      offset: z.number().int().min(0).default(0).describe('Entries to skip: the offset the previous page gave'),
    }),
    async run(args, ctx) {
      const { abs, rel } = await confinePath(ctx.workspaceRoot, args.path, ctx);
      const st = await fs.stat(abs);
      if (!st.isDirectory()) throw new ToolFailure(`"${rel}" is not a directory; use read_file to read it.`);
      const dirents = (await fs.readdir(abs, { withFileTypes: true })).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      if (dirents.length === 0) return { output: `"${rel}" is empty.`, is_error: false, blob: null };
      const root = await fs.realpath(ctx.workspaceRoot);
      // A deadline as search_text has: ripgrep reading a repository's huge ignore file must not hold the call forever.
      const scope = { root, rel, excludes: toIgnoreGlobs(finder.excludes()), signal: ctx.signal };
      const list = await finder.list(scope, { deadline: Date.now() + fileLimits.deadlineMs });
      const files = rel === '.' ? list.files : list.files.map((f) => f.slice(rel.length + 1));
      const entries = args.recursive ? treeEntries(files) : levelEntries(files, list.complete);
      const page = fitPage(entries.slice(args.offset, args.offset + args.limit), ctx.outputCap);
      const notes = pageNotes({ total: entries.length, offset: args.offset, shown: page.shown, list });
      const unlisted = list.complete ? unlistedNote(dirents, files, rel) : null;
      const head =
        page.shown > 0
          ? page.text
          : entries.length === 0
            ? `No files listed in "${rel}".`
            : `No entries after offset ${args.offset} (the listing has ${count(entries.length)}).`;
      return { output: [head, ...notes, ...(unlisted ? [unlisted] : [])].join('\n'), is_error: false, blob: null };
    },
  });
}

/** Every file, each folder just before its contents ("src/", "src/a.ts"). */
export function treeEntries(files: readonly string[]): string[] {
  const out: string[] = [];
  let prev: string[] = [];
  for (const f of files) {
    const dirs = f.split('/').slice(0, -1);
    let same = 0;
    while (same < dirs.length && same < prev.length && dirs[same] === prev[same]) same++;
    for (let i = same; i < dirs.length; i++) out.push(`${dirs.slice(0, i + 1).join('/')}/`);
    out.push(f);
    prev = dirs;
  }
  return out;
}

/** One level: files, and folders with how many listed files they hold ("src/ (12 files)"). */
export function levelEntries(files: readonly string[], complete: boolean): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < files.length) {
    const f = files[i] as string;
    const slash = f.indexOf('/');
    if (slash < 0) {
      out.push(f);
      i++;
      continue;
    }
    const prefix = f.slice(0, slash + 1);
    let n = 0;
    while (i < files.length && (files[i] as string).startsWith(prefix)) {
      n++;
      i++;
    }
    // The walk may have stopped inside the last folder: its count is a lower bound.
    const atLeast = !complete && i === files.length;
    out.push(`${prefix} (${atLeast ? `${count(n)}+ files` : plural(n, 'file')})`);
  }
  return out;
}

interface PageInput {
  total: number;
  offset: number;
  shown: number;
  list: FileList;
}

function pageNotes({ total, offset, shown, list }: PageInput): string[] {
  const notes: string[] = [];
  const last = offset + shown;
  if (last < total)
    notes.push(
      `[entries ${count(offset + 1)}–${count(last)} of ${count(total)}${list.complete ? '' : '+'} shown; next page: offset=${last}]`,
    );
  else if (offset > 0 && shown > 0)
    notes.push(
      `[entries ${count(offset + 1)}–${count(last)} of ${count(total)}${list.complete ? '' : '+'}; the end of the listing]`,
    );
  if (list.stoppedBy === 'deadline') {
    notes.push(
      `[stopped after ${Math.round(fileLimits.deadlineMs / 1000)} s with ${count(list.files.length)} files: files after that are missing; list a narrower path]`,
    );
  } else if (!list.complete) {
    notes.push(
      `[stopped after ${count(list.files.length)} files (the listing limit): files after that are missing; list a narrower path]`,
    );
  }
  return notes;
}

/** Names what the folder holds that the listing does not show: ignored or excluded entries, links, folders without listed files. */
function unlistedNote(dirents: readonly Dirent[], files: readonly string[], rel: string): string | null {
  const listed = new Set(files.map((f) => f.split('/', 1)[0] as string));
  const missing = dirents
    .filter((d) => !listed.has(d.name))
    .map((d) => (d.isDirectory() ? `${d.name}/` : d.isSymbolicLink() ? `${d.name}@` : d.name));
  if (missing.length === 0) return null;
  const named =
    missing.slice(0, MAX_NAMED).join(', ') +
    (missing.length > MAX_NAMED ? `, … (${count(missing.length - MAX_NAMED)} more)` : '');
  const where = rel === '.' ? 'the workspace root' : `"${rel}"`;
  return `[also in ${where}, not listed: ${named} — ignored (.gitignore, .ignore, exclude settings), symbolic links (not followed), or folders without listed files]`;
}
