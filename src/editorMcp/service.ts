// The extension side of MCP: reads the servers from the workspace's `.vscode/mcp.json` (the file
// VS Code's agent mode reads; only in a trusted workspace) and from the user setting
// `agentWaypoints.mcp.servers`, keeps McpServers in step with both, and offers VS Code's own tools.
// Servers start when a run first needs tools and stop with the window.
import os from 'node:os';
import path from 'node:path';
import * as vscode from 'vscode';
import { Emitter } from '../common/emitter';
import { errorMessage } from '../common/errors';
import { DisposableBase, toDisposable } from '../common/disposable';
import { type McpInputConfig, parseMcpJson, readConfig, readConfigFile, type ServerDef } from '../runner/mcp/config';
import { McpServers, type ServerStatus } from '../runner/mcp/servers';
import type { ToolProvider } from '../runner/tools/external';
import { ruleFor as ruleOf, type AllowRule } from '../runner/mcp/approvals';
import type { ToolRegistry } from '../runner/tools/registry';
import { AlwaysAllowList } from './alwaysAllow';
import { McpInputs } from './inputs';
import { VsCodeTools, vscodeIdentity, VSCODE_SOURCE } from './vscodeTools';

const SECTION = 'agentWaypoints.mcp';
export const MCP_JSON = '.vscode/mcp.json';

/** What the Runs view's MCP section shows. */
export interface McpOverview {
  servers: ServerStatus[];
  /** Configuration problems (a file that does not parse, a server without a command …). */
  errors: readonly string[];
  vscodeTools: { name: string; remoteName: string; description: string }[];
  rules: AllowRule[];
  /** Where servers come from, for the empty state. */
  configured: boolean;
}

export class McpService extends DisposableBase {
  readonly servers: McpServers;
  readonly allowList: AlwaysAllowList;
  readonly vscodeTools: VsCodeTools;
  readonly onDidChange = new Emitter<void>();
  private readonly inputs: McpInputs;
  private declaredInputs: McpInputConfig[] = [];

  constructor(
    private readonly folder: vscode.WorkspaceFolder | undefined,
    secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
    version: string,
  ) {
    super();
    this.inputs = new McpInputs(secrets, () => this.declaredInputs);
    this.servers = new McpServers({
      launch: {
        input: (id, server) => this.inputs.value(id, server),
        env: process.env,
        readFile: readConfigFile,
      },
      clientVersion: version,
      startTimeoutMs: 30_000,
      callTimeoutMs: () => this.callTimeoutMs(),
      callTotalTimeoutMs: () => seconds('callTotalTimeoutSeconds', 600),
      log: (level, m) => (level === 'warn' ? log.warn(m) : log.info(m)),
    });
    this._register(toDisposable(() => this.servers.dispose()));
    this.allowList = this._register(new AlwaysAllowList(log));
    this.vscodeTools = new VsCodeTools(
      () => vscode.workspace.getConfiguration(SECTION).get('vscodeTools', true),
      () => this.callTimeoutMs(),
      log,
    );
    this._register(this.servers.onDidChange.on(() => this.onDidChange.emit()));
    this._register(this.allowList.onDidChange.on(() => this.onDidChange.emit()));
    this._register(toDisposable(() => this.onDidChange.dispose()));
    this.watch();
    void this.reload();
  }

  /** The registry's providers: the MCP servers, then VS Code's tools. */
  get providers(): readonly ToolProvider[] {
    return [this.servers, this.vscodeTools];
  }

  overview(): McpOverview {
    const servers = this.servers.status();
    return {
      servers,
      errors: this.servers.errors,
      vscodeTools: this.vscodeTools.info().map((t) => ({
        name: `${VSCODE_SOURCE}__${t.name}`,
        remoteName: t.name,
        description: t.description,
      })),
      rules: this.allowList.rules(),
      configured: servers.length > 0 || this.servers.errors.length > 0,
    };
  }

  /** The rule that always allows a tool as its server is now (from the Runs view or a tool card). */
  ruleFor(source: string, tool: string): AllowRule | null {
    if (source === VSCODE_SOURCE) return { server: source, tool, identity: vscodeIdentity(tool) };
    const server = this.servers.status().find((s) => s.name === source);
    return server ? { server: source, tool, identity: server.identity } : null;
  }

  /** "Always allow" from a tool card: the tool as the registry offers it now (its server's identity now). */
  async allowTool(registry: ToolRegistry, toolName: string): Promise<string> {
    if (!registry.get(toolName)) await registry.refresh();
    const tool = registry.get(toolName);
    const rule = tool ? ruleOf(tool) : null;
    if (!rule) throw new Error(`${toolName} is not offered by any MCP server or by VS Code now`);
    await this.allowList.add(rule);
    return `${rule.tool} of ${rule.server}`;
  }

  /** Forgets every `${input:…}` value kept in SecretStorage; servers using one ask again when they next start. */
  async forgetInputs(): Promise<number> {
    const ids = this.declaredInputs.map((i) => i.id);
    const n = await this.inputs.clear(ids);
    await this.servers.stopAll();
    return n;
  }

  /** Re-reads both sources; unchanged servers keep running. */
  async reload(): Promise<void> {
    const home = os.homedir();
    const user = readConfig(
      { servers: vscode.workspace.getConfiguration(SECTION).inspect<unknown>('servers')?.globalValue ?? {} },
      {
        source: 'user',
        label: `settings (${SECTION}.servers)`,
        workspaceFolder: this.folder?.uri.fsPath ?? null,
        userHome: home,
      },
    );
    const ws = await this.readWorkspaceFile(home);
    const byName = new Map<string, ServerDef>();
    for (const d of [...user.servers, ...ws.servers]) byName.set(d.name, d); // the workspace's wins a name
    this.declaredInputs = [...user.inputs, ...ws.inputs];
    this.servers.setDefinitions([...byName.values()], [...user.errors, ...ws.errors]);
    this.log.info(`MCP: ${byName.size} server(s) configured${ws.note ? ` (${ws.note})` : ''}`);
  }

  private async readWorkspaceFile(home: string): Promise<ReturnType<typeof parseMcpJson> & { note?: string }> {
    const empty = { servers: [], inputs: [], errors: [] };
    if (!this.folder) return empty;
    if (!vscode.workspace.isTrusted) return { ...empty, note: `${MCP_JSON} is not read in Restricted Mode` };
    const file = path.join(this.folder.uri.fsPath, MCP_JSON);
    let text: string;
    try {
      text = await readConfigFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
      return { ...empty, errors: [`${MCP_JSON}: ${errorMessage(err)}`] };
    }
    return parseMcpJson(text, {
      source: 'workspace',
      label: MCP_JSON,
      workspaceFolder: this.folder.uri.fsPath,
      userHome: home,
    });
  }

  private watch(): void {
    const reload = () => void this.reload().catch((err) => this.log.error(`MCP: ${errorMessage(err)}`));
    if (this.folder) {
      const watcher = this._register(
        vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(this.folder, MCP_JSON)),
      );
      this._register(watcher.onDidChange(reload));
      this._register(watcher.onDidCreate(reload));
      this._register(watcher.onDidDelete(reload));
    }
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(reload));
    // Only the server list restarts anything: "always allow" changes never touch a running server.
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SECTION}.servers`)) reload();
        if (e.affectsConfiguration(`${SECTION}.vscodeTools`)) this.onDidChange.emit();
      }),
    );
    const lm = vscode.lm as { onDidChangeTools?: vscode.Event<void> } | undefined;
    if (lm?.onDidChangeTools) this._register(lm.onDidChangeTools(() => this.onDidChange.emit()));
  }

  private callTimeoutMs(): number {
    return seconds('callTimeoutSeconds', 120);
  }

  /** Stops every server (window closing). */
  async stop(): Promise<void> {
    await this.servers.stopAll();
  }
}

/** A setting in seconds, as milliseconds (at least one second). */
function seconds(key: string, fallback: number): number {
  return Math.max(1, vscode.workspace.getConfiguration(SECTION).get(key, fallback)) * 1000;
}
