// Approval policy for external tools (MCP servers', VS Code's): ask by default; "always allow" is a
// rule per server + tool bound to the server's identity, so it stops applying the moment the server
// is a different program or URL; `readOnlyHint` lowers the default to auto only when the user opts in.
import { z } from 'zod';
import type { PolicyVerdict } from '../tools/policy';
import type { Tool } from '../tools/types';

/** One "always allow" entry (the `agentWaypoints.mcp.alwaysAllow` user setting holds a list of them). */
export const AllowRule = z.object({
  /** The MCP server's name, or `vscode` for VS Code's tools. */
  server: z.string().min(1),
  /** The tool's name at the server. */
  tool: z.string().min(1),
  /** The server's identity when the rule was made (config.ts serverIdentity). */
  identity: z.string().regex(/^[0-9a-f]{64}$/),
});
export type AllowRule = z.infer<typeof AllowRule>;

/** The rules of a setting's value; entries that do not parse are reported, never taken as rules. */
export function readRules(value: unknown): { rules: AllowRule[]; invalid: number } {
  const list = Array.isArray(value) ? value : [];
  const rules: AllowRule[] = [];
  let invalid = Array.isArray(value) || value === undefined || value === null ? 0 : 1;
  for (const v of list) {
    const r = AllowRule.safeParse(v);
    if (r.success) rules.push(r.data);
    else invalid++;
  }
  return { rules, invalid };
}

export interface ExternalPolicy {
  rules: readonly AllowRule[];
  /** The user opted in to trust servers' `readOnlyHint`. */
  autoReadOnly: boolean;
}

/** The rule that would always allow this tool (as it is now). */
export function ruleFor(tool: Tool): AllowRule | null {
  const e = tool.external;
  return e ? { server: e.source, tool: e.remoteName, identity: e.identity } : null;
}

export function sameRule(a: AllowRule, b: AllowRule): boolean {
  return a.server === b.server && a.tool === b.tool && a.identity === b.identity;
}

export function judgeExternal(tool: Tool, p: ExternalPolicy): PolicyVerdict {
  const e = tool.external;
  if (!e) return { verdict: 'ask', reason: `${tool.name} is not an external tool.` };
  const where = e.kind === 'mcp' ? `MCP server "${e.source}"` : "VS Code's tools";
  const own = ruleFor(tool)!;
  if (p.rules.some((r) => sameRule(r, own)))
    return { verdict: 'auto', reason: `Always allowed: ${e.remoteName} of ${where} (your "always allow" list).` };
  const stale = p.rules.find((r) => r.server === own.server && r.tool === own.tool);
  if (p.autoReadOnly && e.readOnlyHint)
    return {
      verdict: 'auto',
      reason: `${where} marks ${e.remoteName} read-only, and read-only tools run without asking (your setting).`,
    };
  if (stale)
    return {
      verdict: 'ask',
      reason: `${e.remoteName} of ${where} was always allowed, but the server has changed since (command, arguments, environment names or URL): asking again.`,
    };
  return { verdict: 'ask', reason: `${e.remoteName} is a tool of ${where}: external tools ask before they run.` };
}

/** The run's policy: the extension's own for its tools, the external policy (read at each call) for the others. */
export function withExternalPolicy(
  own: (tool: Tool, args: unknown) => PolicyVerdict,
  external: () => ExternalPolicy,
): (tool: Tool, args: unknown) => PolicyVerdict {
  return (tool, args) => (tool.external ? judgeExternal(tool, external()) : own(tool, args));
}
