// The registry turns a model's tool call into a result, whatever the model sent: unknown tools,
// broken JSON and wrong arguments become clear error results (with the expected schema) that the
// model can correct; a failing tool becomes an error result. Only the store failing throws at the loop.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { SeenTool, ToolCall } from '../../store/api/schema';
import { StoreWriteError } from '../../store/api/errors';
import { errorMessage } from '../../common/errors';
import { argumentsProblem } from '../../common/jsonBounds';
import { canonicalJson, inputHashFromRaw, outputHash, sha256 } from '../hash';
import { seenTool, toolInputHash, uniqueNames, type ToolProvider } from './external';
import { showPath } from './paths';
import { ToolFailure, type Tool, type ToolContext, type ToolOutput, type ToolResult } from './types';

/** A tool call checked and ready to run (or already answered with an error). */
export type PreparedCall =
  | { ok: true; tool_call_id: string; tool: Tool; args: unknown; input_hash: string }
  | { ok: false; tool_call_id: string; tool: Tool | null; input_hash: string; error: ToolResult };

/** The JSON Schema of a tool's arguments, generated from the same zod schema that validates them. */
export function argsJsonSchema(tool: Tool): Record<string, unknown> {
  if (tool.external) return tool.external.parameters;
  const { $schema: _drop, ...schema } = z.toJSONSchema(tool.args, { io: 'input' }) as Record<string, unknown>;
  return schema;
}

export function toolDefinition(tool: Tool): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: argsJsonSchema(tool) },
  };
}

/** Hash of the toolset as the model sees it (plus categories): a changed toolset is detectable on resume. */
export function toolSchemaHash(tools: readonly Tool[]): string {
  const defs = [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((t) => ({ ...toolDefinition(t).function, category: t.category, side_effecting: t.sideEffecting }));
  return sha256(canonicalJson(defs));
}

export function errorResult(message: string): ToolResult {
  return { output: message, is_error: true, blob: null, output_hash: outputHash(message) };
}

/**
 * The tools a run can call: the extension's own, plus what the providers (MCP servers, VS Code's
 * tools) offered at the last refresh().
 */
export class ToolRegistry {
  private readonly byName = new Map<string, Tool>();
  private external = new Map<string, Tool>();

  constructor(
    tools: readonly Tool[],
    private readonly providers: readonly ToolProvider[] = [],
    private readonly onProviderError: (provider: string, message: string) => void = () => undefined,
  ) {
    for (const t of tools) {
      if (this.byName.has(t.name)) throw new Error(`ToolRegistry: duplicate tool name ${t.name}`);
      this.byName.set(t.name, t);
    }
  }

  get hasProviders(): boolean {
    return this.providers.length > 0;
  }

  /** Asks every provider for its tools now (servers start lazily here); a failing provider offers none. */
  async refresh(signal?: AbortSignal): Promise<void> {
    if (this.providers.length === 0) return;
    const lists = await Promise.all(
      this.providers.map((p) =>
        p.tools(signal).catch((err: unknown) => {
          this.onProviderError(p.id, errorMessage(err));
          return [] as readonly Tool[];
        }),
      ),
    );
    const named = uniqueNames(lists.flat(), new Set(this.byName.keys()));
    this.external = new Map(named.map((t) => [t.name, t]));
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name) ?? this.external.get(name);
  }

  /** One of the extension's own tools (not a provider's). */
  isOwn(name: string): boolean {
    return this.byName.has(name);
  }

  /** The extension's own tools only. */
  own(): readonly Tool[] {
    return [...this.byName.values()];
  }

  list(): readonly Tool[] {
    return [...this.byName.values(), ...this.external.values()];
  }

  /** OpenAI `tools` for the request. */
  definitions(): ChatCompletionFunctionTool[] {
    return this.list().map(toolDefinition);
  }

  /** The external tools as the model is offered them now, for the response's record (LlmResponse.tools_seen). */
  seen(): SeenTool[] {
    return [...this.external.values()].map(seenTool).filter((s): s is SeenTool => s !== null);
  }

  /**
   * Hash of the extension's own toolset: a change asks before a run resumes. External tools come
   * and go with their servers; a call to one that changed is caught per call (external.ts toolDrift).
   */
  schemaHash(): string {
    return toolSchemaHash(this.own());
  }

  /** Looks the tool up and validates the arguments; input_hash is over the raw arguments (hash.ts). */
  prepare(call: ToolCall): PreparedCall {
    const name = call.function.name;
    const raw = call.function.arguments;
    const base = { tool_call_id: call.id, input_hash: inputHashFromRaw(name, raw) };
    const tool = this.get(name) ?? null;
    if (!tool) return { ...base, ok: false, tool: null, error: errorResult(this.unknownToolMessage(name)) };
    // Too long or too deep to parse, validate, hash or show: refused before any of those.
    const problem = argumentsProblem(raw);
    if (problem) return { ...base, ok: false, tool, error: errorResult(`Arguments for ${name} refused: ${problem}`) };
    let parsed: unknown;
    try {
      parsed = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch (e) {
      const msg = `Invalid JSON in the arguments for ${name}: ${(e as Error).message}. Received: ${clip(raw)}. ${expected(tool)}`;
      return { ...base, ok: false, tool, error: errorResult(msg) };
    }
    const prepared = this.prepareArgs(tool, call.id, parsed, base.input_hash);
    return prepared.ok && tool.external ? { ...prepared, input_hash: toolInputHash(tool, prepared.args) } : prepared;
  }

  /** Validates already-parsed arguments (e.g. a user's edited arguments on approval). */
  prepareArgs(tool: Tool, toolCallId: string, args: unknown, inputHash: string): PreparedCall {
    const r = tool.args.safeParse(args);
    if (!r.success) {
      const issues = r.error.issues
        .map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`)
        .join('; ');
      const msg = `Invalid arguments for ${tool.name}: ${issues}. ${expected(tool)}`;
      return { ok: false, tool_call_id: toolCallId, tool, input_hash: inputHash, error: errorResult(msg) };
    }
    return { ok: true, tool_call_id: toolCallId, tool, args: r.data, input_hash: inputHash };
  }

  /** The hash a validated call is known by (external tools bind their source's identity). */
  inputHash(tool: Tool, args: unknown): string {
    return toolInputHash(tool, args);
  }

  /** Runs a prepared call. Every tool failure is an is_error result for the model; only a storage failure throws. */
  async run(prepared: PreparedCall, ctx: ToolContext): Promise<ToolResult> {
    if (!prepared.ok) return prepared.error;
    let out: ToolOutput;
    try {
      out = await prepared.tool.run(prepared.args, ctx);
    } catch (e) {
      // The store failing is not the tool failing: the loop pauses the run instead of telling the model.
      if (e instanceof StoreWriteError) throw e;
      return errorResult(describeFailure(prepared.tool.name, e, ctx.workspaceRoot));
    }
    return { ...out, output_hash: outputHash(out.output) };
  }

  /** prepare + run. */
  async execute(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    return this.run(this.prepare(call), ctx);
  }

  private unknownToolMessage(name: string): string {
    const available = this.list()
      .map((t) => t.name)
      .join(', ');
    return name === ''
      ? `The tool call has no tool name. Available tools: ${available}.`
      : `Unknown tool ${JSON.stringify(name)}. Available tools: ${available}.`;
  }
}

const clip = (s: string): string => JSON.stringify(s.length > 300 ? s.slice(0, 300) + '…' : s);
const expected = (tool: Tool): string => `Expected arguments (JSON Schema): ${JSON.stringify(argsJsonSchema(tool))}`;

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
};

/** A clear one-line message; file-system errors name the path relative to the workspace. */
export function describeFailure(toolName: string, e: unknown, workspaceRoot: string): string {
  if (e instanceof ToolFailure) return e.message;
  const err = e as NodeJS.ErrnoException;
  if (err && typeof err.code === 'string' && ERRNO_TEXT[err.code]) {
    const where = typeof err.path === 'string' ? ` ${showPath(relativeTo(workspaceRoot, err.path))}` : '';
    return `${toolName} failed:${where} ${ERRNO_TEXT[err.code]} (${err.code}).`;
  }
  return `${toolName} failed: ${err instanceof Error ? err.message : String(e)}`;
}

/** Tools hand fs real paths: strip the root as configured or as resolved (it may be a symlink). */
function relativeTo(root: string, p: string): string {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // root gone: show what we have
  }
  const base = [root, real].find((r) => p === r || p.startsWith(r + path.sep));
  return base === undefined ? p : p.slice(base.length + 1) || '.';
}
