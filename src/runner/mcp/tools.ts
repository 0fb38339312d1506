// An MCP server's tool as one of the registry's tools: `server__tool`, its JSON Schema passed
// through and used to validate the arguments, side-effecting (an MCP call is an effect of unknown
// kind: intent before, result after, never re-run after a crash without the user).
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { externalToolName, jsonSchemaArgs, modelParameters } from '../tools/external';
import { defineTool, type Tool } from '../tools/types';
import type { McpConnection } from './connection';
import { largeResultOutput, resultOutput } from './result';

export interface McpToolOptions {
  /** Longest wait for the server without progress. */
  callTimeoutMs(): number;
  /** Longest a call may take in all, progress or not. */
  callTotalTimeoutMs(): number;
}

/** The registry's tool for one MCP tool; throws when its input schema is not a usable JSON Schema. */
export function mcpTool(conn: McpConnection, t: McpTool, opts: McpToolOptions): Tool {
  const parameters = modelParameters(t.inputSchema as Record<string, unknown>);
  const server = conn.def.name;
  const summary = t.description?.trim() || t.title || t.name;
  return defineTool({
    name: externalToolName(server, t.name),
    category: 'external',
    sideEffecting: true,
    description: `${summary} (MCP server "${server}")`,
    args: jsonSchemaArgs(parameters),
    external: {
      kind: 'mcp',
      source: server,
      remoteName: t.name,
      identity: conn.def.identity,
      parameters,
      readOnlyHint: t.annotations?.readOnlyHint === true,
    },
    async run(args, ctx) {
      const answer = await conn.callTool(t.name, args, {
        signal: ctx.signal,
        timeoutMs: opts.callTimeoutMs(),
        totalTimeoutMs: opts.callTotalTimeoutMs(),
        ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
      });
      return answer.large ? largeResultOutput(answer.large, ctx) : resultOutput(answer.result, ctx);
    },
  }) as Tool;
}
