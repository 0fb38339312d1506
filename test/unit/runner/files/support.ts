// Shared by the file-engine tests: both engines, temp workspaces written from a map, and a tool
// caller over a registry built on one engine.
import fs from 'node:fs';
import path from 'node:path';
import {
  createCodingRegistry,
  createFileFinder,
  type FileFinder,
  type ToolContext,
  type ToolResult,
} from '../../../../src/runner/tools';
import { ripgrepForTests } from '../../../support/ripgrep';
import { toolCtx } from '../helpers';

export interface Engine {
  name: 'ripgrep' | 'node';
  finder(excludes?: readonly string[]): FileFinder;
}

/** Both engines; the ripgrep one uses VS Code's binary from the code-server install (never skipped). */
export const ENGINES: readonly Engine[] = [
  {
    name: 'ripgrep',
    finder: (excludes) =>
      createFileFinder({ ripgrepPath: ripgrepForTests(), ...(excludes ? { excludes: () => excludes } : {}) }),
  },
  { name: 'node', finder: (excludes) => createFileFinder(excludes ? { excludes: () => excludes } : {}) },
];

/** Writes `files` (path → content) under root; a path ending in "/" makes an empty folder. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [p, content] of Object.entries(files)) {
    const abs = path.join(root, p);
    if (p.endsWith('/')) {
      fs.mkdirSync(abs, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

export type Call = (
  name: 'list_files' | 'search_text',
  args: object,
  over?: Partial<ToolContext>,
) => Promise<ToolResult>;

/** Calls tools through a registry on `finder`, as the loop does. */
export function caller(finder: FileFinder, root: string): Call {
  const registry = createCodingRegistry({ files: finder });
  let n = 0;
  return (name, args, over = {}) =>
    registry.execute(
      { id: `call_${++n}`, type: 'function', function: { name, arguments: JSON.stringify(args) } },
      toolCtx(root, over),
    );
}
