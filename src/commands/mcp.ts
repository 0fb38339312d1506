// MCP commands: restart a server, always allow a tool, revoke an "always allow", open mcp.json.
// From the Runs view's MCP section (the node is the argument) or the Command Palette (a picker).
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../common/errors';
import { MCP_JSON, type McpService } from '../editorMcp/service';
import type { AllowRule } from '../runner/mcp/approvals';
import type { AllowRuleNode, ServerNode, ServerToolNode } from '../views/runs/servers';
import { CommandIds } from '../contributes';
import { registerCommand } from './register';

const TEMPLATE = `{
  // MCP servers for Agent Waypoints (and VS Code's agent mode: the same file and format).
  // "type": "stdio" with "command"/"args"/"env", or "type": "http" with "url"/"headers".
  // Secrets: "\${input:id}" with an entry in "inputs"; asked once, kept in VS Code's SecretStorage.
  "servers": {},
  "inputs": []
}
`;

export function registerMcpCommands(mcp: McpService, log: vscode.LogOutputChannel): vscode.Disposable {
  const d = [
    registerCommand(CommandIds.restartMcpServer, async (node?: ServerNode) => {
      const name = node?.server.name ?? (await pickServer(mcp));
      if (!name) return;
      log.info(`MCP: restarting "${name}"`);
      await mcp.servers.restart(name).catch((err) => log.warn(`MCP: restart of "${name}": ${errorMessage(err)}`));
    }),
    registerCommand(CommandIds.alwaysAllowTool, async (node?: ServerToolNode) => {
      if (!node) return;
      const rule = mcp.ruleFor(node.source, node.tool.remoteName);
      if (!rule) return void vscode.window.showWarningMessage(`No MCP server named "${node.source}" is configured.`);
      await mcp.allowList.add(rule);
    }),
    registerCommand(CommandIds.revokeToolApproval, async (node?: AllowRuleNode | ServerToolNode) => {
      const rule = node ? ruleOfNode(mcp, node) : await pickRule(mcp.allowList.rules());
      if (rule && !(await mcp.allowList.remove(rule)))
        void vscode.window.showInformationMessage(`${rule.tool} of ${rule.server} was not always allowed.`);
    }),
    registerCommand(CommandIds.openMcpConfig, async () => {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (!folder)
        return void vscode.window.showInformationMessage(
          'Open a folder first: MCP servers are configured per workspace.',
        );
      const file = path.join(folder.uri.fsPath, MCP_JSON);
      if (!fs.existsSync(file)) {
        await fs.promises.mkdir(path.dirname(file), { recursive: true });
        await fs.promises.writeFile(file, TEMPLATE, { flag: 'wx' }).catch(() => undefined);
      }
      await vscode.window.showTextDocument(vscode.Uri.file(file));
    }),
    registerCommand(CommandIds.forgetMcpInputs, async () => {
      const n = await mcp.forgetInputs();
      log.info(`MCP: forgot ${n} input value(s); servers were stopped and ask again when they start`);
      void vscode.window.showInformationMessage(
        `Agent Waypoints forgot the MCP input values (${n}). Servers that use them ask again when they next start.`,
      );
    }),
  ];
  return vscode.Disposable.from(...d);
}

function ruleOfNode(mcp: McpService, node: AllowRuleNode | ServerToolNode): AllowRule | undefined {
  if (node.kind === 'mcpRule') return node.rule;
  return mcp.allowList.rules().find((r) => r.server === node.source && r.tool === node.tool.remoteName);
}

async function pickServer(mcp: McpService): Promise<string | undefined> {
  const servers = mcp.servers.status();
  if (servers.length === 0) {
    void vscode.window.showInformationMessage(
      `No MCP servers are configured (${MCP_JSON} or agentWaypoints.mcp.servers).`,
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    servers.map((s) => ({ label: s.name, description: s.state.kind, detail: s.target })),
    { title: 'Restart MCP server', placeHolder: 'Which server?' },
  );
  return pick?.label;
}

async function pickRule(rules: AllowRule[]): Promise<AllowRule | undefined> {
  if (rules.length === 0) {
    void vscode.window.showInformationMessage('No tool is always allowed.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    rules.map((rule) => ({ label: `${rule.server} › ${rule.tool}`, description: rule.identity.slice(0, 12), rule })),
    { title: 'Revoke "always allow"', placeHolder: 'Which tool should ask again?' },
  );
  return pick?.rule;
}
