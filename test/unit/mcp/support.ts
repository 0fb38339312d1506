// A real AgentRunner (test/unit/loop/support.ts makeRunner) whose registry also offers MCP servers'
// tools, with the product's own external policy.
import fs from 'node:fs';
import { type AllowRule, withExternalPolicy } from '../../../src/runner/mcp/approvals';
import type { ServerDef } from '../../../src/runner/mcp/config';
import type { IntakeLimits } from '../../../src/runner/mcp/intake';
import { McpServers } from '../../../src/runner/mcp/servers';
import { CODING_TOOLS, judge, DEFAULT_POLICY, ToolRegistry, type Tool } from '../../../src/runner/tools';
import type { CheckpointStore } from '../../../src/store/api/types';
import { makeRunner, type TestRunner } from '../loop/support';

export interface McpRunnerOptions {
  baseURL: string;
  servers: readonly ServerDef[];
  store?: CheckpointStore;
  storeDir?: string;
  workspace?: string;
  rules?: AllowRule[];
  autoReadOnly?: boolean;
  callTimeoutMs?: number;
  callTotalTimeoutMs?: number;
  limits?: IntakeLimits;
}

export interface McpTestRunner extends TestRunner {
  mcp: McpServers;
  tools: ToolRegistry;
  rules: AllowRule[];
}

export function newServers(
  defs: readonly ServerDef[],
  callTimeoutMs = 20_000,
  callTotalTimeoutMs = 60_000,
  limits?: IntakeLimits,
): McpServers {
  const mcp = new McpServers({
    launch: { input: async () => 'unused', env: process.env, readFile: (p) => fs.promises.readFile(p, 'utf8') },
    clientVersion: 'test',
    startTimeoutMs: 20_000,
    callTimeoutMs: () => callTimeoutMs,
    callTotalTimeoutMs: () => callTotalTimeoutMs,
    ...(limits ? { limits } : {}),
    log: () => undefined,
  });
  mcp.setDefinitions(defs);
  return mcp;
}

export function mcpRunner(o: McpRunnerOptions): McpTestRunner {
  const mcp = newServers(o.servers, o.callTimeoutMs, o.callTotalTimeoutMs, o.limits);
  const tools = new ToolRegistry(CODING_TOOLS, [mcp]);
  const rules = [...(o.rules ?? [])];
  const own = (tool: Tool, args: unknown) =>
    judge({ toolName: tool.name, category: tool.category, args }, DEFAULT_POLICY);
  const t = makeRunner({
    baseURL: o.baseURL,
    ...(o.store ? { store: o.store } : {}),
    ...(o.storeDir ? { storeDir: o.storeDir } : {}),
    ...(o.workspace ? { workspace: o.workspace } : {}),
    deps: {
      tools,
      policy: withExternalPolicy(own, () => ({ rules, autoReadOnly: o.autoReadOnly ?? false })),
    },
  });
  return { ...t, mcp, tools, rules };
}

export async function closeServers(...runners: (McpTestRunner | undefined)[]): Promise<void> {
  for (const r of runners) {
    if (!r) continue;
    await r.mcp.stopAll();
    r.mcp.dispose();
  }
}
