// The policy's verdict on one call (auto, ask, deny): the files the tool declares it writes and
// reads (and a command's cwd) are resolved by the tools' own resolver (protectedFiles.ts
// fileTargets → paths.ts), then the pure policy judges; the verdict carries what was resolved, and
// the call, when it runs, is held to it. What the runner's `policy(tool, args)` is, in the
// extension (settings.ts) and in the tests alike.
import { cwdConcern } from './commandCwd';
import { judge, type ApprovalPolicy, type PolicyVerdict } from './policy';
import { fileTargets, judgedPaths } from './protectedFiles';
import type { Tool } from './types';

export function judgeCall(
  tool: Tool,
  args: unknown,
  opts: { policy: ApprovalPolicy; workspaceRoot: string },
): PolicyVerdict {
  const files = fileTargets(tool, args, opts.workspaceRoot);
  const cwd = tool.category === 'command' ? cwdConcern(files.cwd) : null;
  return {
    ...judge({ toolName: tool.name, category: tool.category, args, files, cwdConcern: cwd }, opts.policy),
    judged: judgedPaths(files),
  };
}
/** A runner `policy` over a fixed policy and workspace. */
export function callPolicy(
  policy: ApprovalPolicy,
  workspaceRoot: string,
): (tool: Tool, args: unknown) => PolicyVerdict {
  return (tool, args) => judgeCall(tool, args, { policy, workspaceRoot });
}
