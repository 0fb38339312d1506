// The coding toolset and its public surface.
import { delegate } from './delegate';
import { editFile, writeFile } from './editTools';
import { listFiles, readFile } from './fsTools';
import { ToolRegistry } from './registry';
import { runCommand } from './runCommand';
import { searchText } from './searchText';
import type { Tool } from './types';

/** Every built-in tool, in the order the model sees them. */
export const CODING_TOOLS: readonly Tool[] = [readFile, listFiles, searchText, writeFile, editFile, runCommand, delegate] as readonly Tool[];

/** The registry a run uses; `withDelegate: false` for a subagent that may not delegate again. */
export function createCodingRegistry(opts: { withDelegate?: boolean } = {}): ToolRegistry {
  return new ToolRegistry(opts.withDelegate === false ? CODING_TOOLS.filter((t) => t.name !== 'delegate') : CODING_TOOLS);
}

export { delegate, editFile, listFiles, readFile, runCommand, searchText, writeFile };
export { ToolRegistry, toolSchemaHash, toolDefinition, argsJsonSchema, errorResult, describeFailure, type PreparedCall } from './registry';
export { confinePath, PathError, MAX_PATH_BYTES, MAX_COMPONENT_BYTES, type ConfinedPath } from './paths';
export { capOutput, truncationNote } from './output';
export { decide, DEFAULT_POLICY, matchesPrefix, type ApprovalPolicy, type CategoryMode, type Decision, type PolicyDecision, type PolicyInput } from './policy';
export { splitShellCommand, normalizeCommand } from './shellSplit';
export { ToolFailure, defineTool, type DelegateResult, type Tool, type ToolContext, type ToolOutput, type ToolResult } from './types';
