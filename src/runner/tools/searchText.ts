// search_text: a regular expression over the workspace's files, through the FileFinder (ripgrep
// when the host has it, the pure-Node engine otherwise; the same answers either way). Ignored
// files are not searched. Every early stop is said in the output, with how to go on: pages
// (offset), the deadline, the fallback's walk limit, problems ripgrep reported.
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { toIgnoreGlobs } from './finder/excludes';
import { Glob } from './glob';
import { fileLimits, type FileFinder, type Hit, type SearchQuery, type SearchResult } from './finder/types';
import { count } from '../../common/format';
import { fitPage, plural } from './paging';
import { confinePath } from './paths';
import { DEFAULT_FILE_RULES, type FileRules, secretWhy } from './protectedFiles';
import { defineTool, ToolFailure, type ToolContext } from './types';

/** Matching lines are shown up to this many characters, as a window around the match. */
export const LINE_WIDTH = 300;

export function makeSearchText(finder: FileFinder, fileRules: () => FileRules = () => DEFAULT_FILE_RULES) {
  return defineTool({
    name: 'search_text',
    category: 'read',
    sideEffecting: false,
    description:
      "Search the workspace's text files for a regular expression (JavaScript syntax; keep to what ripgrep also reads: no \\u{…}, no [^] ). " +
      'Prints "path:line: text" per matching line, in path order; long lines are shown as 300 characters around the match. ' +
      'Skips files ignored by .gitignore, .ignore or the exclude settings, .git, and binary files. ' +
      'When more matches exist the output says so and gives the offset for the next page.',
    args: z.object({
      pattern: z.string().min(1).describe('Regular expression (no slashes), e.g. "function\\s+slugify"'),
      path: z
        .string()
        .default('.')
        .describe('Folder or file to search, relative to the workspace root (default: the root)'),
      glob: z
        .string()
        .optional()
        .describe(
          'Only files matching this glob: "*.ts" matches names in any folder, "src/**/*.js" paths from the root',
        ),
      case_sensitive: z.boolean().default(true),
      max_results: z.number().int().min(1).max(1000).default(100).describe('Matching lines per page'),
      offset: z.number().int().min(0).default(0).describe('Matching lines to skip: the offset the previous page gave'),
    }),
    async run(args, ctx) {
      try {
        new RegExp(args.pattern, args.case_sensitive ? '' : 'i');
      } catch (e) {
        throw new ToolFailure(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${(e as Error).message}`);
      }
      const { abs, rel } = await confinePath(ctx.workspaceRoot, args.path, ctx);
      const st = await fs.stat(abs);
      if (!st.isDirectory() && !st.isFile()) throw new ToolFailure(`"${rel}" is not a regular file or folder.`);
      const scope = {
        root: await fs.realpath(ctx.workspaceRoot),
        rel,
        excludes: toIgnoreGlobs(finder.excludes()),
        signal: ctx.signal,
      };
      const secrets = withoutSecrets(globQuery(args.glob), fileRules());
      const query: SearchQuery = {
        pattern: args.pattern,
        caseSensitive: args.case_sensitive,
        offset: args.offset,
        limit: args.max_results,
        ...secrets.query,
        onLinked: secrets.onLinked,
      };
      const result = await finder.search(scope, query);
      const out = render(
        result,
        { pattern: args.pattern, where: rel === '.' ? 'the workspace' : `"${rel}"`, offset: args.offset },
        ctx,
      );
      return { ...out, output: out.output + secrets.note() };
    },
  });
}

/** The longest glob accepted: real ones are a few dozen characters; matching time grows with the length. */
const MAX_GLOB_LENGTH = 1000;

function globQuery(glob: string | undefined): Pick<SearchQuery, 'filter' | 'nameGlob'> {
  if (glob === undefined || glob.trim() === '') return { filter: null, nameGlob: null };
  const g = glob.trim().replace(/^\.?\//, '');
  let matcher: Glob;
  try {
    if (g.length > MAX_GLOB_LENGTH) throw new Error(`longer than ${MAX_GLOB_LENGTH} characters`);
    matcher = Glob.compile(g, { braces: true });
  } catch (e) {
    throw new ToolFailure(`Invalid glob ${JSON.stringify(glob)}: ${(e as Error).message}`);
  }
  if (g.includes('/')) return { filter: (rel) => matcher.test(rel), nameGlob: null };
  // A name glob: ripgrep also applies it itself (a file type), so it skips other files early.
  return { filter: (rel) => matcher.test(rel.slice(rel.lastIndexOf('/') + 1)), nameGlob: g };
}

/**
 * Files that may hold secrets are left out of the search (their lines would go to the model's
 * provider without the user's say; read_file asks first), and the output says which were: by name,
 * and files with other names (hard links), which may be secret files under another name.
 */
function withoutSecrets(
  q: Pick<SearchQuery, 'filter' | 'nameGlob'>,
  rules: FileRules,
): { query: Pick<SearchQuery, 'filter' | 'nameGlob'>; onLinked: (rel: string) => void; note: () => string } {
  const skipped = new Set<string>();
  const linked = new Set<string>();
  const filter = (rel: string): boolean => {
    if (secretWhy([rel], rules) !== null) {
      skipped.add(rel);
      return false;
    }
    return q.filter === null || q.filter(rel);
  };
  const listed = (s: Set<string>): string => [...s].sort().slice(0, 5).join(', ') + (s.size > 5 ? ', …' : '');
  const note = (): string => {
    let out = '';
    if (skipped.size > 0)
      out += `\n[left out: ${plural(skipped.size, 'file')} that may hold secrets (${listed(skipped)}); read_file shows one after the user approves]`;
    if (linked.size > 0)
      out += `\n[left out: ${plural(linked.size, 'file')} with other names (hard links) that may belong to secret files (${listed(linked)}); read_file shows one after the user approves]`;
    return out;
  };
  return { query: { filter, nameGlob: q.nameGlob }, onLinked: (rel) => linked.add(rel), note };
}

/** The line as shown: whole if short, else LINE_WIDTH characters around the first match. */
export function displayLine(h: Hit): string {
  if (h.lineLength <= LINE_WIDTH) return h.text;
  const start = Math.max(0, Math.min(h.column - 100, h.lineLength - LINE_WIDTH));
  const shown = h.text.slice(start - h.textStart, start - h.textStart + LINE_WIDTH);
  return `${start > 0 ? '…' : ''}${shown}${start + LINE_WIDTH < h.lineLength ? '…' : ''}`;
}

interface RenderInput {
  pattern: string;
  where: string;
  offset: number;
}

function render(r: SearchResult, input: RenderInput, ctx: ToolContext) {
  const lines = r.hits.map((h) => `${h.rel}:${h.line}: ${displayLine(h)}`);
  const page = fitPage(lines, ctx.outputCap);
  const more = r.more || page.shown < lines.length;
  const notes: string[] = [];
  const first = input.offset + 1;
  const last = input.offset + page.shown;
  if (more)
    notes.push(
      `[matches ${count(first)}–${count(last)} shown; more follow: call search_text again with offset=${last}]`,
    );
  else if (input.offset > 0 && page.shown > 0) notes.push(`[matches ${count(first)}–${count(last)}; no more matches]`);
  if (r.stopped?.kind === 'deadline') notes.push(deadlineNote(r.stopped));
  if (r.stopped?.kind === 'walk_limit') {
    notes.push(
      `[searched only the first ${count(r.stopped.walkedFiles)} files in path order (the built-in search's limit); narrow path or glob to search the rest]`,
    );
  }
  if (r.warnings.length > 0) {
    const shown = r.warnings.slice(0, 3).map((w) => JSON.stringify(w.length > 200 ? `${w.slice(0, 200)}…` : w));
    notes.push(
      `[${plural(r.warnings.length, 'problem')} while searching, matches in those files may be missing: ${shown.join('; ')}${r.warnings.length > 3 ? '; …' : ''}]`,
    );
  }
  const head =
    page.shown > 0
      ? page.text
      : `No matches for ${JSON.stringify(input.pattern)}${input.offset > 0 ? ` after the first ${count(input.offset)}` : ''} in ${input.where}.`;
  return { output: [head, ...notes].join('\n'), is_error: r.stopped?.kind === 'deadline', blob: null };
}

function deadlineNote(s: Extract<NonNullable<SearchResult['stopped']>, { kind: 'deadline' }>): string {
  const secs = Math.round(fileLimits.deadlineMs / 1000);
  const where =
    s.currentFile !== null && s.totalFiles !== null && s.searchedFiles !== null
      ? ` while searching ${s.currentFile} (file ${count(s.searchedFiles + 1)} of ${count(s.totalFiles)})`
      : '';
  return (
    `[search_text stopped after ${secs} s${where}: matches after that point are missing. The pattern may be too slow ` +
    '(nested quantifiers like "(a+)+" backtrack exponentially) or there is too much to search: simplify the pattern or narrow path/glob]'
  );
}
