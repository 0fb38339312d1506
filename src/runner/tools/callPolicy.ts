// The policy's verdict on one call (auto, ask, deny): the files the tool declares it writes and
// reads are resolved against the workspace (protectedFiles.ts), and so is the folder a command runs
// in (commandCwd.ts), then the pure policy judges. What the runner's `policy(tool, args)` is, in the
// extension (settings.ts) and in the tests alike.
import { cwdConcern } from './commandCwd';
import { judge, type ApprovalPolicy, type PolicyVerdict } from './policy';
import { fileTargets } from './protectedFiles';
import type { Tool } from './types';

export function judgeCall(tool: Tool, args: unknown, opts: { policy: ApprovalPolicy; workspaceRoot: string }) {
  const files = fileTargets(tool, args, opts.workspaceRoot);
  const cwd = tool.category === 'command' ? cwdConcern(opts.workspaceRoot, (args as { cwd?: unknown })?.cwd) : null;
  return judge({ toolName: tool.name, category: tool.category, args, files, cwdConcern: cwd }, opts.policy);
}

/** A runner `policy` over a fixed policy and workspace. */
export function callPolicy(
  policy: ApprovalPolicy,
  workspaceRoot: string,
): (tool: Tool, args: unknown) => PolicyVerdict {
  return (tool, args) => judgeCall(tool, args, { policy, workspaceRoot });
}
