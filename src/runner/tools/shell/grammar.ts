// The bash grammar (tree-sitter-bash, the one VS Code's terminal auto-approve and Codex use), as
// WebAssembly so it loads the same in the desktop extension host (Electron), in code-server's Node
// and in plain Node tests. Loading is asynchronous (the WASM runtime compiles once); parsing is
// synchronous, so the approval policy stays a pure synchronous function once the grammar is in.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Language, Parser, type Node } from '@vscode/tree-sitter-wasm';
import { errorMessage } from '../../../common/errors';

export type ShellNode = Node;

const RUNTIME_WASM = 'tree-sitter.wasm';
const BASH_WASM = 'tree-sitter-bash.wasm';

/**
 * Where a WASM file is: beside the bundle (dist/, where the build copies it, and what the VSIX
 * ships), or, running from source, in the package that provides it.
 */
function wasmPath(name: string): Promise<string> {
  const beside = path.join(__dirname, name);
  return fs.access(beside).then(
    () => beside,
    () => require.resolve(`@vscode/tree-sitter-wasm/wasm/${name}`),
  );
}

let parser: Parser | null = null;
let failure: string | null = null;
let loading: Promise<void> | null = null;

/** Loads the grammar once. Never rejects: a failure is kept and reported by every parse. */
export function loadShellGrammar(): Promise<void> {
  loading ??= (async () => {
    try {
      const runtime = await wasmPath(RUNTIME_WASM);
      await Parser.init({ locateFile: () => runtime });
      const language = await Language.load(await fs.readFile(await wasmPath(BASH_WASM)));
      const p = new Parser();
      p.setLanguage(language);
      parser = p;
    } catch (err) {
      failure = errorMessage(err);
    }
  })();
  return loading;
}

/** Why no command line can be read right now (still loading, or the load failed); null once loaded. */
export function grammarUnavailable(): string | null {
  if (parser) return null;
  return failure ? `the shell grammar could not be loaded (${failure})` : 'the shell grammar is still loading';
}

/**
 * Parses `text` as bash and hands the syntax tree to `read`; the tree is freed afterwards (it lives
 * in WASM memory), so `read` must not keep nodes. Null when the grammar is not available.
 */
export function withBashTree<T>(text: string, read: (root: ShellNode) => T): T | null {
  if (!parser) return null;
  const tree = parser.parse(text);
  if (!tree) return null;
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}
