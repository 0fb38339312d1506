// search_text: a regex over the workspace's text files in pure Node (no ripgrep to ship or find).
// The matching runs in a worker thread with a deadline: a model-written pattern that backtracks
// catastrophically (e.g. "(a+)+$") would otherwise freeze the extension host; here it ends as a
// clear tool error and the worker is terminated.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
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

/** How long one search may take. Mutable for tests only. */
export const searchLimits = { deadlineMs: 20_000 };

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
    const job: SearchJob = {
      pattern: args.pattern,
      flags: re.flags,
      files: files.map((f) => ({ abs: f, rel: path.relative(realRoot, f).split(path.sep).join('/') })),
      max: args.max_results,
      maxFileBytes: MAX_FILE_BYTES,
      maxLineChars: MAX_LINE_CHARS,
    };
    const { hits, limited } = await searchInWorker(job, ctx.signal);
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

interface SearchJob {
  pattern: string;
  flags: string;
  files: { abs: string; rel: string }[];
  max: number;
  maxFileBytes: number;
  maxLineChars: number;
}

/** Self-contained (the extension is one bundle): reads each file, tests each line, posts the hits. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { pattern, flags, files, max, maxFileBytes, maxLineChars } = workerData;
const re = new RegExp(pattern, flags);
const hits = [];
let limited = false;
outer: for (const f of files) {
  let buf;
  try {
    if (fs.statSync(f.abs).size > maxFileBytes) continue;
    buf = fs.readFileSync(f.abs);
  } catch {
    continue; // gone or unreadable since it was listed
  }
  if (buf.subarray(0, 8192).includes(0)) continue; // binary
  const lines = buf.toString('utf8').split('\\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\\r$/, '').slice(0, 4 * maxLineChars);
    if (!re.test(line)) continue;
    hits.push(f.rel + ':' + (i + 1) + ': ' + (line.length > maxLineChars ? line.slice(0, maxLineChars) + '\u2026' : line));
    if (hits.length >= max) { limited = true; break outer; }
  }
}
parentPort.postMessage({ hits, limited });
`;

function searchInWorker(job: SearchJob, signal: AbortSignal): Promise<{ hits: string[]; limited: boolean }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: job });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            new ToolFailure(
              `search_text stopped after ${Math.round(searchLimits.deadlineMs / 1000)} s: the pattern ${JSON.stringify(job.pattern)} is too slow ` +
                '(nested quantifiers like "(a+)+" backtrack exponentially). Use a simpler pattern or narrow path/glob.',
            ),
          ),
        ),
      searchLimits.deadlineMs,
    );
    const onAbort = () => finish(() => reject(new ToolFailure('Cancelled.')));
    signal.addEventListener('abort', onAbort);
    worker.once('message', (m: { hits: string[]; limited: boolean }) => finish(() => resolve(m)));
    worker.once('error', (err) => finish(() => reject(new ToolFailure(`search_text failed: ${err.message}`))));
    worker.once('exit', (code) => finish(() => reject(new ToolFailure(`search_text failed: the search worker exited with code ${code}`))));
  });
}
