// list_files and search_text on a generated repository (test/fixtures/largeWorkspace.ts: src/ of
// TypeScript files, a git-ignored dist/, a nested repository), through the real tools, with
// VS Code's ripgrep (from code-server's install in the tools cache) and with the Node fallback,
// interleaved in one process. Medians and ratios; nothing asserted.
import fs from 'node:fs';
import path from 'node:path';
import { createCodingRegistry, createFileFinder } from '../src/runner/tools';
import { findRipgrep } from '../src/ripgrepPath';
import { generateLargeWorkspace, NEEDLE } from '../test/fixtures/largeWorkspace';
// @ts-expect-error plain ESM script without types
import * as tools from '../scripts/tools.mjs';
import { median } from './stats';

export interface ToolsBenchOptions {
  dir: string;
  srcFiles: number;
  distFiles: number;
  repeats: number;
}

export interface ToolsRow {
  label: string;
  ripgrepMs: number;
  nodeMs: number;
}

export interface ToolsBenchResult {
  files: number;
  ripgrep: string;
  rows: ToolsRow[];
}

const CASES: { label: string; tool: 'search_text' | 'list_files'; args: object }[] = [
  { label: `search_text, a name that exists once (${NEEDLE})`, tool: 'search_text', args: { pattern: NEEDLE } },
  { label: 'search_text, a common word: first page of 100', tool: 'search_text', args: { pattern: 'common word' } },
  { label: 'search_text, no match (every file searched)', tool: 'search_text', args: { pattern: 'absent_[0-9]{9}' } },
  { label: 'list_files, whole tree: first page of 500', tool: 'list_files', args: { recursive: true } },
  { label: 'list_files, the root with file counts', tool: 'list_files', args: {} },
];

export async function measureWorkspaceTools(opts: ToolsBenchOptions): Promise<ToolsBenchResult> {
  const rg = findRipgrep(tools.vscodeAppRoot as string);
  if (!rg) throw new Error(`no ripgrep under ${tools.vscodeAppRoot}: run npm run tools`);
  const root = fs.mkdtempSync(path.join(opts.dir, 'tools-'));
  try {
    const ws = generateLargeWorkspace(root, { srcFiles: opts.srcFiles, distFiles: opts.distFiles, nestedFiles: 300 });
    const engines = {
      ripgrep: createCodingRegistry({ files: createFileFinder({ ripgrepPath: rg }) }),
      node: createCodingRegistry(),
    };
    const ctx = {
      workspaceRoot: ws.root,
      signal: new AbortController().signal,
      idempotencyKey: 'bench',
      outputCap: 32 * 1024,
    };
    const samples = CASES.map(() => ({ ripgrep: [] as number[], node: [] as number[] }));
    // One warm-up round (module loading, the worker's first start, the page cache), then interleaved repeats.
    for (let r = -1; r < opts.repeats; r++) {
      for (const [i, c] of CASES.entries()) {
        for (const name of ['ripgrep', 'node'] as const) {
          const t0 = performance.now();
          const res = await engines[name].execute(
            { id: 'b', type: 'function', function: { name: c.tool, arguments: JSON.stringify(c.args) } },
            ctx,
          );
          const ms = performance.now() - t0;
          if (res.is_error) throw new Error(`${c.label} on ${name}: ${res.output}`);
          if (r >= 0) samples[i]![name].push(ms);
        }
      }
    }
    const rows = CASES.map((c, i) => ({
      label: c.label,
      ripgrepMs: median(samples[i]!.ripgrep),
      nodeMs: median(samples[i]!.node),
    }));
    return { files: opts.srcFiles + opts.distFiles + 300 + 4, ripgrep: rg, rows }; // + .gitignore, notes.tmp, out/built.js, nested .gitignore
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function toolsReport(r: ToolsBenchResult, repeats: number): string {
  const ms = (v: number): string => (v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} ms`);
  const lines = [
    `| workspace tools on a generated repository of ${r.files.toLocaleString('en-US')} files (median of ${repeats}) | ripgrep (VS Code's) | Node fallback | ripgrep / Node |`,
    '|---|---|---|---|',
  ];
  for (const row of r.rows) {
    const ratio = row.ripgrepMs / row.nodeMs;
    const words = ratio <= 1 ? `${(1 / ratio).toFixed(1)}× faster` : `${ratio.toFixed(1)}× slower`;
    lines.push(`| ${row.label} | ${ms(row.ripgrepMs)} | ${ms(row.nodeMs)} | ${ratio.toFixed(2)} (${words}) |`);
  }
  return lines.join('\n');
}
