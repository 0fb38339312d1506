// The approval decision for one call: the files the tool declares it writes and reads are resolved
// against the workspace (protectedFiles.ts), then the pure policy decides. What the runner's
// `policy(tool, args)` is, in the extension (settings.ts) and in the tests alike.
import { decide, type ApprovalPolicy, type PolicyDecision } from './policy';
import { fileTargets } from './protectedFiles';
import type { Tool } from './types';

export function decideCall(tool: Tool, args: unknown, opts: { policy: ApprovalPolicy; workspaceRoot: string }) {
  const files = fileTargets(tool, args, opts.workspaceRoot);
  return decide({ toolName: tool.name, category: tool.category, args, files }, opts.policy);
}

/** A runner `policy` over a fixed policy and workspace. */
export function callPolicy(
  policy: ApprovalPolicy,
  workspaceRoot: string,
): (tool: Tool, args: unknown) => PolicyDecision {
  return (tool, args) => decideCall(tool, args, { policy, workspaceRoot });
}
