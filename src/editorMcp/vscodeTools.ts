// VS Code's tools (`vscode.lm.tools`: other extensions', VS Code's own MCP tools) as registry tools,
// invoked with `vscode.lm.invokeTool` here on the extension side; the runner sees a ToolProvider.
import * as vscode from 'vscode';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sha256 } from '../common/hash';
import { resultOutput } from '../runner/mcp/result';
import { externalToolName, jsonSchemaArgs, modelParameters, type ToolProvider } from '../runner/tools/external';
import { defineTool, type Tool, type ToolContext } from '../runner/tools/types';

export const VSCODE_SOURCE = 'vscode';
/** VS Code's tools have no server behind them: their identity is the tool's name in this host. */
export const vscodeIdentity = (name: string): string => sha256(`vscode-lm\n${name}`);

export class VsCodeTools implements ToolProvider {
  readonly id = 'vscode';

  constructor(
    private readonly enabled: () => boolean,
    private readonly timeoutMs: () => number,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /**
   * What `vscode.lm.tools` lists now, less VS Code's own built-in agent tools (terminal, edits,
   * confirmations: made for its chat view, and doubling ours). Hosts that say where a tool comes
   * from (`source`: an extension, an MCP server; null for the built-ins) are filtered by it.
   */
  info(): readonly vscode.LanguageModelToolInformation[] {
    if (!this.enabled()) return [];
    return (vscode.lm?.tools ?? []).filter((t) => !('source' in t) || (t as { source: unknown }).source != null);
  }

  async tools(): Promise<readonly Tool[]> {
    const out: Tool[] = [];
    for (const info of this.info()) {
      try {
        out.push(this.tool(info));
      } catch (err) {
        this.log.warn(`VS Code tool ${info.name} is not offered: ${(err as Error).message}`);
      }
    }
    return out;
  }

  private tool(info: vscode.LanguageModelToolInformation): Tool {
    const parameters = modelParameters((info.inputSchema as Record<string, unknown> | undefined) ?? {});
    return defineTool({
      name: externalToolName(VSCODE_SOURCE, info.name),
      category: 'external',
      sideEffecting: true,
      description: `${info.description} (VS Code tool)`,
      args: jsonSchemaArgs(parameters),
      external: {
        kind: 'vscode',
        source: VSCODE_SOURCE,
        remoteName: info.name,
        identity: vscodeIdentity(info.name),
        parameters,
        readOnlyHint: false,
      },
      run: (args, ctx) => this.invoke(info.name, args, ctx),
    }) as Tool;
  }

  private async invoke(name: string, input: object, ctx: ToolContext) {
    const cts = new vscode.CancellationTokenSource();
    const onAbort = () => cts.cancel();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cts.cancel();
        reject(
          new Error(
            `VS Code tool ${name} did not answer within ${Math.round(this.timeoutMs() / 1000)} s; it was cancelled.`,
          ),
        );
      }, this.timeoutMs());
    });
    try {
      const r = await Promise.race([
        vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, cts.token),
        deadline,
      ]);
      return resultOutput(toMcpShape(r), ctx);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      cts.dispose();
    }
  }
}

/** A LanguageModelToolResult in MCP's result shape, so one renderer and one record serve both. */
function toMcpShape(r: vscode.LanguageModelToolResult): CallToolResult {
  const content: CallToolResult['content'] = r.content.map((p) => {
    if (p instanceof vscode.LanguageModelTextPart) return { type: 'text', text: p.value };
    if (p instanceof vscode.LanguageModelPromptTsxPart) return { type: 'text', text: JSON.stringify(p.value) };
    const data = p as { mimeType?: unknown; data?: unknown };
    if (typeof data.mimeType === 'string' && data.data instanceof Uint8Array) {
      const base64 = Buffer.from(data.data).toString('base64');
      if (data.mimeType.startsWith('image/')) return { type: 'image', mimeType: data.mimeType, data: base64 };
      if (/^(text\/|application\/json)/.test(data.mimeType))
        return { type: 'text', text: Buffer.from(data.data).toString('utf8') };
    }
    return { type: 'text', text: `[a ${typeof p} part this version cannot show]` };
  });
  return { content };
}
