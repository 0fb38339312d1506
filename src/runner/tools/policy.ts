// Approval policy: decides per tool call whether it runs now, waits for the user, or is refused.
// Pure and synchronous so the same decision can be recomputed on resume and shown in the UI.
import type { ToolCategory } from '../../store/api/schema';
import { normalizeCommand, splitShellCommand } from './shellSplit';

export type CategoryMode = 'auto' | 'ask' | 'deny';
export type Decision = 'auto' | 'ask' | 'deny';

/** Categories of the extension's own tools (external tools have their own policy: runner/mcp/policy.ts). */
export type OwnCategory = Exclude<ToolCategory, 'external'>;

export interface ApprovalPolicy {
  categories: Record<OwnCategory, CategoryMode>;
  /** Command prefixes that run without asking ("npm test", "git status"). Matched per simple command. */
  commandAllow: readonly string[];
  /** Command prefixes that are always refused. Deny wins over allow and over 'auto'. */
  commandDeny: readonly string[];
  /** Untrusted workspace (VS Code restricted mode): nothing may write or run. */
  restricted: boolean;
}

export const DEFAULT_POLICY: ApprovalPolicy = {
  categories: { read: 'auto', write: 'ask', command: 'ask', subagent: 'auto' },
  commandAllow: [],
  commandDeny: [],
  restricted: false,
};

export interface PolicyInput {
  toolName: string;
  category: ToolCategory;
  /** Validated arguments; `command` is read for run_command. */
  args: unknown;
}

export interface PolicyDecision {
  decision: Decision;
  reason: string;
}

/** `npm test` matches "npm test" and "npm test -- --grep x", not "npm testx". */
export function matchesPrefix(command: string, prefix: string): boolean {
  const p = normalizeCommand(prefix);
  return p !== '' && (command === p || command.startsWith(p + ' '));
}

export function decide(input: PolicyInput, policy: ApprovalPolicy = DEFAULT_POLICY): PolicyDecision {
  const { category, toolName } = input;
  if (category === 'external') return { decision: 'ask', reason: `${toolName} comes from outside Agent Waypoints.` };
  if (policy.restricted && (category === 'write' || category === 'command')) {
    return {
      decision: 'deny',
      reason: `${toolName} is disabled: the workspace is not trusted (restricted mode) and ${category} tools are not allowed.`,
    };
  }
  const command = commandOf(input);
  if (command !== null) return decideCommand(command, toolName, policy);
  return byCategory(category, toolName, policy.categories[category]);
}

function byCategory(category: OwnCategory, toolName: string, mode: CategoryMode): PolicyDecision {
  if (mode === 'deny') return { decision: 'deny', reason: `${category} tools are denied by policy (${toolName}).` };
  if (mode === 'auto') return { decision: 'auto', reason: `${category} tools run without asking.` };
  return { decision: 'ask', reason: `${category} tools ask for approval (${toolName}).` };
}

function commandOf(input: PolicyInput): string | null {
  if (input.category !== 'command') return null;
  const c = (input.args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : '';
}

function decideCommand(raw: string, toolName: string, policy: ApprovalPolicy): PolicyDecision {
  const split = splitShellCommand(raw);
  const everything = [normalizeCommand(raw), ...split.parts, ...split.nested].flatMap(denyForms);
  for (const part of everything) {
    const deny = policy.commandDeny.find((p) => matchesPrefix(part, p));
    if (deny !== undefined)
      return { decision: 'deny', reason: `Command "${part}" matches the deny list entry "${normalizeCommand(deny)}".` };
  }
  const mode = policy.categories.command;
  if (mode === 'deny') return byCategory('command', toolName, mode);
  if (mode === 'auto') return { decision: 'auto', reason: 'Commands run without asking (policy: auto).' };
  if (policy.commandAllow.length === 0 || split.parts.length === 0) return byCategory('command', toolName, mode);
  // Only auto-allow what we can see completely: every simple command allow-listed, nothing hidden.
  if (split.hasSubstitution)
    return {
      decision: 'ask',
      reason: 'The command contains a substitution ($(…) or backticks), so it is not auto-allowed.',
    };
  if (split.hasFileRedirect)
    return {
      decision: 'ask',
      reason: 'The command writes to a file through a redirection, so it is not auto-allowed.',
    };
  const notAllowed = split.parts.find((part) => !policy.commandAllow.some((p) => matchesPrefix(part, p)));
  if (notAllowed !== undefined) {
    const why = split.parts.length > 1 ? `part "${notAllowed}" of a chained command` : `"${notAllowed}"`;
    return { decision: 'ask', reason: `Command ${why} is not on the allow list.` };
  }
  return { decision: 'auto', reason: `Every part of the command is on the allow list (${split.parts.join(' ; ')}).` };
}

const WRAPPERS = new Set(['sudo', 'env', 'command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'xargs', 'doas']);

/**
 * The forms a deny rule is checked against: the command as written and the command it really runs
 * once wrappers (`sudo rm`), variable assignments (`X=1 rm`), a leading backslash (`\rm`) or a path
 * (`/bin/rm`) are peeled off. A prefix list is still only a guard rail, not a sandbox.
 */
export function denyForms(part: string): string[] {
  const forms = [part];
  let words = part.split(' ');
  for (let guard = 0; guard < 8 && words.length > 0; guard++) {
    const w = words[0] as string;
    if (WRAPPERS.has(w) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || (w.startsWith('-') && forms.length > 1))
      words = words.slice(1);
    else if (w.startsWith('\\') || w.includes('/'))
      words = [w.replace(/^\\/, '').replace(/^.*\//, ''), ...words.slice(1)];
    else break;
    forms.push(words.join(' '));
  }
  return forms;
}
