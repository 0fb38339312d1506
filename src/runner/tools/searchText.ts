// search_text: a regex over the workspace's text files in pure Node (no ripgrep to ship or find).
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SKIPPED_DIRS } from './fsTools';
import { makeGlobMatcher } from './glob';
import { capOutput } from './output';
import { confinePath } from './paths';
import { defineTool, ToolFailure } from './types';

/** Bigger files are skipped: almost always generated or data, and slow to scan. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Lines are cut for display; very long lines also bound the regex's work per line. */
const MAX_LINE_CHARS = 300;
const MAX_FILES = 20_000;

export const searchText = defineTool({
  name: 'search_text',
  category: 'read',
  sideEffecting: false,
  description:
    'Search text files in the workspace for a JavaScript regular expression. Prints "path:line: text" per match. ' +
    'Skips .git, node_modules, binary and files over 2 MB.',
  args: z.object({
    pattern: z.string().min(1).describe('JavaScript regular expression (no slashes), e.g. "function\\s+slugify"'),
    path: z.string().default('.').describe('Directory or file to search (default: the workspace root)'),
    glob: z.string().optional().describe('Only files matching this glob, e.g. "*.ts" or "src/**/*.js"'),
    case_sensitive: z.boolean().default(true),
    max_results: z.number().int().min(1).max(1000).default(100).describe('Stop after this many matching lines'),
  }),
  async run(args, ctx) {
    let re: RegExp;
    try {
      re = new RegExp(args.pattern, args.case_sensitive ? '' : 'i');
    } catch (e) {
      throw new ToolFailure(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${(e as Error).message}`);
    }
    const { abs } = await confinePath(ctx.workspaceRoot, args.path);
    const realRoot = await fs.realpath(ctx.workspaceRoot);
    const matches = makeGlobMatcher(args.glob ?? '**');
    const files: string[] = [];
    const st = await fs.stat(abs);
    if (st.isDirectory()) await collect(abs, realRoot, matches, files, ctx.signal);
    else files.push(abs);
    const hits: string[] = [];
    let limited = false;
    for (const file of files) {
      if (ctx.signal.aborted) throw new ToolFailure('Cancelled.');
      limited = await searchFile(file, path.relative(realRoot, file).split(path.sep).join('/'), re, hits, args.max_results);
      if (limited) break;
    }
    if (hits.length === 0) return { output: `No matches for ${JSON.stringify(args.pattern)} in ${files.length} files.`, is_error: false, blob: null };
    const note = limited ? `\n[stopped at ${args.max_results} matches; narrow the search or raise max_results]` : '';
    const capped = await capOutput(hits.join('\n') + note, ctx, 'head');
    return { output: capped.text, is_error: false, blob: capped.blob };
  },
});

async function collect(dir: string, realRoot: string, matches: (rel: string) => boolean, out: string[], signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new ToolFailure('Cancelled.');
  const dirents = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of dirents) {
    if (out.length >= MAX_FILES) return;
    const full = path.join(dir, d.name);
    // Symlinks are not followed: they could lead out of the workspace or into a cycle.
    if (d.isDirectory() && !SKIPPED_DIRS.has(d.name)) await collect(full, realRoot, matches, out, signal);
    else if (d.isFile() && matches(path.relative(realRoot, full).split(path.sep).join('/'))) out.push(full);
  }
}

/** Appends "rel:line: text" hits; returns true when max was reached. */
async function searchFile(file: string, rel: string, re: RegExp, hits: string[], max: number): Promise<boolean> {
  const st = await fs.stat(file);
  if (st.size > MAX_FILE_BYTES) return false;
  const buf = await fs.readFile(file);
  if (buf.subarray(0, 8192).includes(0)) return false;
  const lines = buf.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, '').slice(0, 4 * MAX_LINE_CHARS);
    if (!re.test(line)) continue;
    hits.push(`${rel}:${i + 1}: ${line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) + '…' : line}`);
    if (hits.length >= max) return true;
  }
  return false;
}
