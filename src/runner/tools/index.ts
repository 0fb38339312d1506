// The coding toolset and its public surface.
import { readOutput } from '../context/readOutput';
import { delegate } from './delegate';
import { editFile, writeFile } from './editTools';
import { createFileFinder } from './finder/finder';
import type { FileFinder } from './finder/types';
import { readFile } from './fsTools';
import { makeListFiles } from './listFiles';
import { ToolRegistry } from './registry';
import { runCommand } from './runCommand';
import type { FileRules } from './protectedFiles';
import { makeSearchText } from './searchText';
import type { ToolProvider } from './external';
import type { Tool } from './types';

/** The tools over a file finder, in the order the model sees them. */
export function codingTools(files: FileFinder, fileRules?: () => FileRules): readonly Tool[] {
  return [
    readFile,
    makeListFiles(files),
    makeSearchText(files, fileRules),
    writeFile,
    editFile,
    runCommand,
    readOutput,
    delegate,
  ] as readonly Tool[];
}

/** Every built-in tool (listing and search on the pure-Node engine): the toolset as the model sees it. */
export const CODING_TOOLS: readonly Tool[] = codingTools(createFileFinder());

export interface CodingRegistryOptions {
  /** false for a subagent that may not delegate again. */
  withDelegate?: boolean;
  /** How list_files and search_text reach the files (ripgrep or Node); default: the Node engine with VS Code's default excludes. */
  files?: FileFinder;
  /** Tools from outside (MCP servers, VS Code's), offered beside the own ones. */
  providers?: readonly ToolProvider[];
  /** Secret-like files search_text leaves out; default: DEFAULT_FILE_RULES. */
  fileRules?: () => FileRules;
}

/** The registry a run uses. */
export function createCodingRegistry(opts: CodingRegistryOptions = {}): ToolRegistry {
  const tools = codingTools(opts.files ?? createFileFinder(), opts.fileRules);
  return new ToolRegistry(
    opts.withDelegate === false ? tools.filter((t) => t.name !== 'delegate') : tools,
    opts.providers ?? [],
  );
}

export { delegate, editFile, readFile, runCommand, writeFile };
export { createFileFinder, type FileFinderOptions } from './finder/finder';
export { DEFAULT_EXCLUDES, enabledExcludes } from './finder/excludes';
export { fileLimits, type EngineName, type FileFinder } from './finder/types';
export {
  ToolRegistry,
  toolSchemaHash,
  toolDefinition,
  argsJsonSchema,
  errorResult,
  describeFailure,
  type PreparedCall,
} from './registry';
export {
  confinePath,
  confineStoredPath,
  PathError,
  MAX_PATH_BYTES,
  MAX_COMPONENT_BYTES,
  type ConfinedPath,
} from './paths';
export { toolInputHash, type ToolProvider } from './external';
export { capOutput, truncationNote } from './output';
export {
  judge,
  DEFAULT_POLICY,
  showArgv,
  type ApprovalPolicy,
  type CategoryMode,
  type Verdict,
  type PolicyVerdict,
  type PolicyInput,
} from './policy';
export { loadShellGrammar } from './shell/grammar';
export { callPolicy, judgeCall } from './callPolicy';
export {
  DEFAULT_FILE_RULES,
  fileRules,
  fileTargets,
  sensitiveFileReason,
  type FileRules,
  type FileTargets,
} from './protectedFiles';
export {
  ToolFailure,
  defineTool,
  type DelegateResult,
  type ExternalInfo,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolResult,
} from './types';
