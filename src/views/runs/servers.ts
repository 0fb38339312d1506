// The Runs view's MCP section: each server with its state (not started, starting, ready with its
// tools, failed with the reason) and Restart; its tools with "Always allow"; and the one list of
// always-allowed tools, each revocable. Kept apart from the runs' nodes; the provider only asks it.
import * as vscode from 'vscode';
import type { ServerStatus } from '../../runner/mcp/servers';
import type { AllowRule } from '../../runner/mcp/approvals';
import type { McpOverview } from '../../editorMcp/service';
import { ContextValues } from '../../contributes';
import { escapeMarkdown as escape } from '../shared/markdown';

export interface McpSource {
  overview(): McpOverview;
}

export class McpSectionNode {
  readonly kind = 'mcp';
  constructor(readonly overview: McpOverview) {}

  toTreeItem(): vscode.TreeItem {
    const o = this.overview;
    const item = new vscode.TreeItem('MCP servers', vscode.TreeItemCollapsibleState.Collapsed);
    item.id = 'mcp';
    const failed = o.servers.filter((s) => s.state.kind === 'failed').length;
    const ready = o.servers.filter((s) => s.state.kind === 'ready').length;
    item.description = [
      `${o.servers.length} server${o.servers.length === 1 ? '' : 's'}`,
      ...(ready ? [`${ready} ready`] : []),
      ...(failed ? [`${failed} failed`] : []),
      ...(o.errors.length ? [`${o.errors.length} config error${o.errors.length > 1 ? 's' : ''}`] : []),
    ].join(' · ');
    item.iconPath = new vscode.ThemeIcon('server-environment', failed || o.errors.length ? warn : undefined);
    item.tooltip =
      'Servers from .vscode/mcp.json and the agentWaypoints.mcp.servers setting, and the tools always allowed.';
    item.contextValue = ContextValues.mcpSection;
    return item;
  }
}

export class ServerNode {
  readonly kind = 'mcpServer';
  constructor(
    readonly server: ServerStatus,
    readonly rules: readonly AllowRule[],
    readonly parent: McpSectionNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const s = this.server;
    const ready = s.state.kind === 'ready';
    const item = new vscode.TreeItem(
      s.name,
      ready && s.tools.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `mcp:server:${s.name}`;
    item.description = stateText(s);
    item.iconPath = new vscode.ThemeIcon(STATE_ICON[s.state.kind], s.state.kind === 'failed' ? err : undefined);
    const md = new vscode.MarkdownString();
    md.appendMarkdown(
      `**${s.name}** (${s.transport}, from ${s.source === 'workspace' ? '.vscode/mcp.json' : 'settings'})\n\n`,
    );
    md.appendCodeblock(s.target, 'text');
    if (s.state.kind === 'failed' || (s.state.kind === 'stopped' && s.state.reason))
      md.appendCodeblock(s.state.reason!, 'text');
    if (s.skipped.length) md.appendMarkdown(`\n\nNot offered: ${s.skipped.map(escape).join('; ')}`);
    item.tooltip = md;
    item.contextValue = ContextValues.mcpServer(s.state.kind);
    return item;
  }
}

export class ServerToolNode {
  readonly kind = 'mcpTool';
  constructor(
    readonly source: string,
    readonly tool: { name: string; remoteName: string; description: string; readOnlyHint?: boolean },
    readonly allowed: boolean,
    readonly parent: ServerNode | VsCodeToolsNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem(this.tool.remoteName, vscode.TreeItemCollapsibleState.None);
    item.id = `mcp:tool:${this.source}:${this.tool.remoteName}`;
    item.description = [this.allowed ? 'always allowed' : '', this.tool.readOnlyHint ? 'read-only hint' : '']
      .filter(Boolean)
      .join(' · ');
    item.iconPath = new vscode.ThemeIcon(this.allowed ? 'pass-filled' : 'tools');
    item.tooltip = `${this.tool.name}\n\n${this.tool.description}`;
    item.contextValue = ContextValues.mcpTool(this.allowed);
    return item;
  }
}

export class VsCodeToolsNode {
  readonly kind = 'vscodeTools';
  constructor(
    readonly overview: McpOverview,
    readonly parent: McpSectionNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const n = this.overview.vscodeTools.length;
    const item = new vscode.TreeItem("VS Code's tools", vscode.TreeItemCollapsibleState.Collapsed);
    item.id = 'mcp:vscode';
    item.description = `${n} tool${n === 1 ? '' : 's'}`;
    item.iconPath = new vscode.ThemeIcon('vscode');
    item.tooltip = 'Tools other extensions (and VS Code) offer through vscode.lm.tools';
    return item;
  }
}

export class AllowedNode {
  readonly kind = 'mcpAllowed';
  constructor(
    readonly overview: McpOverview,
    readonly parent: McpSectionNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem('Always allowed', vscode.TreeItemCollapsibleState.Collapsed);
    item.id = 'mcp:allowed';
    item.description = String(this.overview.rules.length);
    item.iconPath = new vscode.ThemeIcon('shield');
    item.tooltip =
      'Tools that run without asking (user setting agentWaypoints.mcp.alwaysAllow). Revoke one from its menu.';
    return item;
  }
}

export class AllowRuleNode {
  readonly kind = 'mcpRule';
  constructor(
    readonly rule: AllowRule,
    /** null: the rule applies; else why not. */
    readonly inactive: string | null,
    readonly parent: AllowedNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const r = this.rule;
    const item = new vscode.TreeItem(`${r.server} › ${r.tool}`, vscode.TreeItemCollapsibleState.None);
    item.id = `mcp:rule:${r.server}:${r.tool}:${r.identity}`;
    item.description = this.inactive ?? 'applies';
    item.iconPath = new vscode.ThemeIcon(this.inactive ? 'circle-slash' : 'pass-filled');
    item.tooltip = `Server identity ${r.identity.slice(0, 16)}…${this.inactive ? `\n\nNot applied: ${this.inactive}` : ''}`;
    item.contextValue = ContextValues.mcpRule;
    return item;
  }
}

export class ConfigErrorNode {
  readonly kind = 'mcpError';
  constructor(
    readonly message: string,
    readonly parent: McpSectionNode,
  ) {}

  toTreeItem(): vscode.TreeItem {
    const item = new vscode.TreeItem(this.message, vscode.TreeItemCollapsibleState.None);
    item.id = `mcp:error:${this.message}`;
    item.iconPath = new vscode.ThemeIcon('warning', warn);
    item.tooltip = this.message;
    return item;
  }
}

export type McpTreeNode =
  McpSectionNode | ServerNode | ServerToolNode | VsCodeToolsNode | AllowedNode | AllowRuleNode | ConfigErrorNode;

/** The section's root: shown once a server is configured or a tool always allowed. */
export function mcpRoots(source: McpSource | undefined): McpSectionNode[] {
  const o = source?.overview();
  // Only when the user set something up: VS Code's tools alone do not push the empty view's welcome away.
  if (!o || (!o.configured && o.rules.length === 0)) return [];
  return [new McpSectionNode(o)];
}

export function mcpChildren(node: McpTreeNode): McpTreeNode[] {
  switch (node.kind) {
    case 'mcp': {
      const o = node.overview;
      return [
        ...o.errors.map((e) => new ConfigErrorNode(e, node)),
        ...o.servers.map((s) => new ServerNode(s, o.rules, node)),
        ...(o.vscodeTools.length ? [new VsCodeToolsNode(o, node)] : []),
        ...(o.rules.length ? [new AllowedNode(o, node)] : []),
      ];
    }
    case 'mcpServer': {
      const s = node.server;
      return s.tools.map(
        (t) =>
          new ServerToolNode(
            s.name,
            t,
            node.rules.some((r) => isFor(r, s.name, t.remoteName, s.identity)),
            node,
          ),
      );
    }
    case 'vscodeTools':
      return node.overview.vscodeTools.map(
        (t) =>
          new ServerToolNode(
            'vscode',
            t,
            node.overview.rules.some((r) => r.server === 'vscode' && r.tool === t.remoteName),
            node,
          ),
      );
    case 'mcpAllowed':
      return node.overview.rules.map((r) => new AllowRuleNode(r, inactive(r, node.overview), node));
    default:
      return [];
  }
}

function isFor(r: AllowRule, server: string, tool: string, identity: string): boolean {
  return r.server === server && r.tool === tool && r.identity === identity;
}

function inactive(r: AllowRule, o: McpOverview): string | null {
  if (r.server === 'vscode') return null;
  const s = o.servers.find((x) => x.name === r.server);
  if (!s) return 'no such server configured';
  if (s.identity !== r.identity) return 'the server changed since: not applied';
  return null;
}

const STATE_ICON: Record<ServerStatus['state']['kind'], string> = {
  stopped: 'circle-outline',
  starting: 'loading~spin',
  ready: 'pass',
  failed: 'error',
};

function stateText(s: ServerStatus): string {
  switch (s.state.kind) {
    case 'ready':
      return `ready · ${s.state.tools} tool${s.state.tools === 1 ? '' : 's'}`;
    case 'starting':
      return 'starting…';
    case 'failed':
      return `failed: ${firstLine(s.state.reason)}`;
    case 'stopped':
      return s.state.reason ? `stopped: ${firstLine(s.state.reason)}` : 'not started (starts when a run needs it)';
  }
}

const firstLine = (s: string) => s.split('\n')[0]!.slice(0, 120);
const warn = new vscode.ThemeColor('notificationsWarningIcon.foreground');
const err = new vscode.ThemeColor('errorForeground');
