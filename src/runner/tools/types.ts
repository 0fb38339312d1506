// What a tool is, what it gets, what it returns. vscode-free: tools touch the workspace through
// Node's fs and child_process only, always via paths.ts.
import type { z } from 'zod';
import type { ToolCategory } from '../../store/api/schema';
import type { SandboxProfile } from '../sandbox/profile';
import type { SandboxReport } from '../sandbox/report';

export interface DelegateResult {
  /** The child run's final answer. */
  final_text: string;
  child_run_id?: string;
  /** The child failed or was stopped: the model sees the text as an error. */
  is_error?: boolean;
}

/** What the policy judged a path to be (paths.ts): where it led (and whether that file had other names), or why it was refused. */
export type Judged = { rel: string; linked: boolean } | { refused: string };
/** By the path as the tool's arguments give it. */
export type JudgedPaths = ReadonlyMap<string, Judged>;

export interface ToolContext {
  /** Absolute path of the workspace folder; every path a tool touches is confined to it. */
  workspaceRoot: string;
  /** The extension's own storage folder: refused like a path outside the workspace (paths.ts). */
  storageDir?: string;
  /** Cancels the tool (kills a running command's process group). */
  signal: AbortSignal;
  /** `${run_id}/${step}/${tool_call_id}` (hash.ts idempotencyKey). */
  idempotencyKey: string;
  /** Max bytes of output the model sees; the rest goes to a blob. */
  outputCap: number;
  /** Stores a full output; returns its content hash (the store's blob id). */
  putBlob?: (content: string) => Promise<string>;
  /**
   * The same for text held as UTF-8 bytes (a large MCP result) whose sha256 the caller took off the
   * main thread over exactly these bytes: neither decoded nor hashed again on the way.
   */
  putBlobBytes?: (content: Uint8Array, sha256: string) => Promise<string>;
  /** A command's process started (its pid is recorded with the effect intent; see leftovers.ts). */
  onSpawn?: (pid: number) => void;
  /** The run's own history: an earlier tool call's whole output (read_output, context/readOutput.ts). */
  history?: { toolOutput(toolCallId: string): Promise<string | undefined> | string | undefined };
  /** Progress the tool reports while it runs (an MCP server's notifications), shown in its card. */
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /**
   * Who let this call run: the policy (auto) or the user (an approval). run_command runs a line the
   * user approved through the shell as shown, and one the policy approved from the words it judged.
   * Absent: as 'policy'.
   */
  approvedBy?: 'policy' | 'user';
  /**
   * The call's paths as the policy resolved them when the batch was planned: the tool refuses a path
   * that now resolves to another file (paths.ts confinePath). Absent: not held (a tool run directly).
   */
  judged?: JudgedPaths;
  /**
   * Run commands in this OS sandbox (runner/sandbox), applied to `workspaceRoot` above. Absent:
   * unsandboxed, as approved. Where the sandbox cannot start, the command does not run: nothing
   * falls back to running without it.
   */
  sandbox?: SandboxProfile;
  /** Runs a subagent on `task`; supplied by the loop. */
  delegate?: (task: string, signal: AbortSignal) => Promise<DelegateResult>;
}

/** What a tool's run() returns; the registry adds the hash. */
export interface ToolOutput {
  output: string;
  is_error: boolean;
  /** Blob holding the full output when `output` was truncated. */
  blob: string | null;
  /** Blob holding an external tool's exact result as JSON (EffectResult.raw_blob). */
  raw_blob?: string | null;
  /** A sandboxed command: what the sandbox refused it (writes, domains, sockets, processes). */
  sandbox?: SandboxReport;
}

/** What the registry returns for every call: success, tool failure, bad arguments, unknown tool. */
export interface ToolResult extends ToolOutput {
  /** sha256 of `output` (hash.ts outputHash). */
  output_hash: string;
}

/**
 * How a side-effecting tool changes workspace files, for the file journal (runner/fileJournal): it names
 * the files from its arguments (their pre-images are kept before it runs), or anything may change
 * (a command: the workspace is scanned before and after).
 */
export type FileEffect<A = unknown> = { kind: 'paths'; paths(args: A): string[] } | { kind: 'scan' };

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  category: ToolCategory;
  /** Changes something outside the conversation: needs an effect intent before it runs. */
  sideEffecting: boolean;
  description: string;
  /** Validates the model's arguments AND is described to the model (z.toJSONSchema). */
  args: S;
  /** Absent: the tool changes no workspace files. */
  files?: FileEffect<z.output<S>>;
  /** Set on tools from outside (MCP servers, VS Code's): where it comes from, its JSON Schema. */
  external?: ExternalInfo;
  /** Files whose content the tool gives the model (secret-like ones ask first: protectedFiles.ts). */
  reads?: (args: z.output<S>) => string[];
  /** The folder a command runs in: resolved and judged with the call's files, and held to that when it runs. */
  cwd?: (args: z.output<S>) => string;
  run(args: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Expected failures (bad path, text not found …): the message goes to the model as an error result. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
}

/** Helper that keeps each tool's args type inferred from its schema. */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}

/** A tool from outside the extension (external.ts): an MCP server's, or one VS Code offers (`vscode.lm.tools`). */
export interface ExternalInfo {
  kind: 'mcp' | 'vscode';
  /** The MCP server's name, or `vscode`. */
  source: string;
  /** The tool's name at its source (the model sees `source__tool`). */
  remoteName: string;
  /** sha256 of what makes the source itself (config/launch.ts serverIdentity; `vscode-lm` for VS Code's). */
  identity: string;
  /** The JSON Schema of the arguments, passed to the model unchanged (less `$schema`). */
  parameters: Record<string, unknown>;
  /** The source says the tool only reads (MCP `readOnlyHint`); a hint, trusted only when the user opts in. */
  readOnlyHint: boolean;
}
