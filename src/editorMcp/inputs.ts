// `${input:id}` values of MCP server definitions: asked once (a password box when the input says
// so), then kept in VS Code's SecretStorage — never in settings, checkpoints or logs.
import * as vscode from 'vscode';
import type { McpInputConfig } from '../runner/mcp/config';

const PREFIX = 'agentWaypoints.mcp.input:';

export class McpInputs {
  /** One prompt per input at a time, however many servers start at once. */
  private readonly asking = new Map<string, Promise<string>>();
  private readonly known = new Set<string>();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly declared: () => readonly McpInputConfig[],
  ) {}

  async value(id: string, server: string): Promise<string> {
    this.known.add(id);
    const stored = await this.secrets.get(PREFIX + id);
    if (stored !== undefined) return stored;
    const pending = this.asking.get(id);
    if (pending) return pending;
    const ask = this.prompt(id, server).finally(() => this.asking.delete(id));
    this.asking.set(id, ask);
    return ask;
  }

  /** Forgets the values of these inputs and of every input this window used (the next start asks again). */
  async clear(ids: readonly string[]): Promise<number> {
    const all = new Set([...ids, ...this.known]);
    for (const id of all) await this.secrets.delete(PREFIX + id);
    this.known.clear();
    return all.size;
  }

  private async prompt(id: string, server: string): Promise<string> {
    const input = this.declared().find((i) => i.id === id);
    const value = await vscode.window.showInputBox({
      title: `MCP server "${server}"`,
      prompt: input?.description ?? `Value of \${input:${id}}`,
      password: input?.password ?? false,
      value: input?.default ?? '',
      ignoreFocusOut: true,
    });
    if (value === undefined) throw new Error(`the value of \${input:${id}} was not given`);
    await this.secrets.store(PREFIX + id, value);
    return value;
  }
}
