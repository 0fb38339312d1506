// Approval policy: judges each tool call — it runs now (auto), waits for the user (ask), or is
// refused (deny). The user's own decisions on calls that ask are the runner's (decideApprovals).
// Pure and synchronous so the same verdict can be recomputed on resume and shown in the UI.
// Commands are read with the bash grammar (shell/): the allow list only auto-approves a line the
// grammar shows completely as plain words, and run_command then executes exactly those words
// without a shell (shell/argvRunner.cjs). The grammar loads asynchronously (loadShellGrammar);
// until it has, a command that needs it asks. A command whose folder is in another repository than
// the workspace's (commandCwd.ts) asks, whatever the line. In the `sandbox` mode every command runs
// in the OS sandbox (runner/sandbox) and runs without asking there — unless a deny rule matches,
// which still wins, or the sandbox is unavailable here, and then it asks, saying why.
import type { SandboxPolicy, SandboxProfile } from '../sandbox';
import type { ToolCategory } from '../../store/api/schema';
import type { JudgedPaths } from './paths';
import {
  DEFAULT_FILE_RULES,
  refusedTarget,
  sensitiveFileReason,
  type FileRules,
  type FileTargets,
} from './protectedFiles';
import { findDenied } from './shell/deny';
import { grammarUnavailable } from './shell/grammar';
import { planCommands } from './shell/plan';
import { readPlan } from './shell/reading';

export type CategoryMode = 'auto' | 'ask' | 'deny';
/** Commands have one more: `sandbox`, auto in the OS sandbox. */
export type CommandMode = CategoryMode | 'sandbox';
export type Verdict = 'auto' | 'ask' | 'deny';

/** Categories of the extension's own tools (external tools have their own policy: runner/mcp/approvals.ts). */
export type OwnCategory = Exclude<ToolCategory, 'external'>;

export interface ApprovalPolicy {
  categories: Record<Exclude<OwnCategory, 'command'>, CategoryMode> & { command: CommandMode };
  /**
   * The sandbox commands run in when their mode is `sandbox`, and why it cannot run here now (null:
   * it can). Absent with that mode: unavailable.
   */
  sandbox?: { policy: SandboxPolicy; unavailable: string | null };
  /** Commands that run without asking ("npm test", "git status"): word prefixes of each command of a line. */
  commandAllow: readonly string[];
  /** Programs (or word prefixes, "git push") that are always refused. Deny wins over allow and over 'auto'. */
  commandDeny: readonly string[];
  /** Untrusted workspace (VS Code restricted mode): nothing may write or run. */
  restricted: boolean;
  /** Where commands run (default: this machine's). On Windows the allow list never auto-approves. */
  platform?: NodeJS.Platform;
  /** Files whose writes or reads always ask (protectedFiles.ts); default: DEFAULT_FILE_RULES. */
  fileRules?: FileRules;
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
  /** The files the call writes and reads, as the caller resolved them (protectedFiles.ts fileTargets). */
  files?: FileTargets;
  /** Why the folder a command runs in asks whatever the line is (commandCwd.ts), or null. */
  cwdConcern?: string | null;
}

export interface PolicyVerdict {
  verdict: Verdict;
  reason: string;
  /** The paths judged, as the resolver found them: a call that runs is held to them (paths.ts ConfineOptions.judged). */
  judged?: JudgedPaths;
  /** The command runs in this OS sandbox, whoever approves it (absent: unsandboxed, as approved). */
  sandbox?: CommandSandbox;
}

/** A sandbox for the workspace the runner works in (the runner adds the folders). */
export type CommandSandbox = Omit<SandboxProfile, 'workspaceRoot' | 'storageDir'>;

export function judge(input: PolicyInput, policy: ApprovalPolicy = DEFAULT_POLICY): PolicyVerdict {
  const { category, toolName } = input;
  if (category === 'external') return { verdict: 'ask', reason: `${toolName} comes from outside Agent Waypoints.` };
  if (policy.restricted && (category === 'write' || category === 'command')) {
    return {
      verdict: 'deny',
      reason: `${toolName} is disabled: the workspace is not trusted (restricted mode) and ${category} tools are not allowed.`,
    };
  }
  // A path the resolver refuses: the tool would refuse it too, so nobody is asked about it.
  const refused = refusedTarget(input.files);
  if (refused !== null) return { verdict: 'deny', reason: refused };
  // A protected file or a secret-like one asks even when its category runs without asking.
  const sensitive = sensitiveFileReason(input.files, policy.fileRules ?? DEFAULT_FILE_RULES);
  if (sensitive !== null && policy.categories[category] !== 'deny') return { verdict: 'ask', reason: sensitive };
  const command = commandOf(input);
  if (command !== null) {
    const verdict = sandboxed(judgeCommand(command, toolName, policy), policy);
    if (verdict.verdict !== 'auto' || !input.cwdConcern) return verdict;
    return {
      ...verdict,
      ...ask(
        `The command runs where git would use another repository's configuration than the workspace's: ${input.cwdConcern}. It asks although it would run without asking elsewhere.`,
      ),
    };
  }
  return byCategory(category, toolName, policy.categories[category as Exclude<OwnCategory, 'command'>]);
}

/** In the `sandbox` mode a command that may run runs in the sandbox, approved by the policy or by the user. */
function sandboxed(v: PolicyVerdict, policy: ApprovalPolicy): PolicyVerdict {
  const box = policy.sandbox;
  if (policy.categories.command !== 'sandbox' || v.verdict === 'deny' || !box || box.unavailable) return v;
  return { ...v, sandbox: { ...box.policy, ...(policy.fileRules ? { fileRules: policy.fileRules } : {}) } };
}

function byCategory(category: OwnCategory, toolName: string, mode: CategoryMode): PolicyVerdict {
  if (mode === 'deny') return { verdict: 'deny', reason: `${category} tools are denied by policy (${toolName}).` };
  if (mode === 'auto') return { verdict: 'auto', reason: `${category} tools run without asking.` };
  return { verdict: 'ask', reason: `${category} tools ask for approval (${toolName}).` };
}

function commandOf(input: PolicyInput): string | null {
  if (input.category !== 'command') return null;
  const c = (input.args as { command?: unknown } | null)?.command;
  return typeof c === 'string' ? c : '';
}

const ask = (reason: string): PolicyVerdict => ({ verdict: 'ask', reason });

function judgeCommand(raw: string, toolName: string, policy: ApprovalPolicy): PolicyVerdict {
  const platform = policy.platform ?? process.platform;
  const deny = findDenied(raw, policy.commandDeny, platform);
  if (deny?.kind === 'denied')
    return { verdict: 'deny', reason: `Command "${deny.command}" matches the deny list entry "${deny.entry}".` };
  const mode = policy.categories.command;
  if (mode === 'deny') return byCategory('command', toolName, mode);
  if (deny?.kind === 'unavailable') return ask(`The deny list cannot check this command: ${grammarUnavailable()}.`);
  if (deny?.kind === 'unsure') return ask(`The deny list cannot check this command: ${deny.reason}.`);
  if (mode === 'auto') return { verdict: 'auto', reason: 'Commands run without asking (policy: auto).' };
  if (mode === 'sandbox') {
    const why = policy.sandbox ? policy.sandbox.unavailable : 'no sandbox is configured';
    if (why === null)
      return { verdict: 'auto', reason: 'Commands run without asking in the sandbox (auto in sandbox).' };
    return ask(
      `Commands run without asking only in the sandbox, and the sandbox is not available here (${why}), so this one asks. Approved, it runs outside the sandbox.`,
    );
  }
  if (policy.commandAllow.length === 0) return byCategory('command', toolName, mode);
  return byAllowList(raw, policy.commandAllow, platform);
}

/** Auto only for a line the grammar shows completely, every command of it on the list. */
function byAllowList(raw: string, allow: readonly string[], platform: NodeJS.Platform): PolicyVerdict {
  if (platform === 'win32')
    return ask(
      'On Windows commands run through cmd.exe or PowerShell, whose syntax the policy does not read, so the allow list does not apply: every command asks.',
    );
  if (raw.trim() === '') return ask('The command is empty.');
  const reading = readPlan(raw);
  if (reading === null) return ask(`The command cannot be checked against the allow list: ${grammarUnavailable()}.`);
  if ('obstacle' in reading) {
    const { what, text } = reading.obstacle;
    return ask(`The command contains ${what} (${excerpt(text)}), so it is not auto-allowed.`);
  }
  const commands = planCommands(reading.plan);
  const entries = allow.map((e) => e.trim().split(/\s+/).filter(Boolean)).filter((e) => e.length > 0);
  // The longest entry that matches: it says most about what the user meant to allow.
  const entryOf = (argv: readonly string[]) =>
    entries.filter((e) => e.every((w, i) => argv[i] === w)).sort((a, b) => b.length - a.length)[0];
  const notAllowed = commands.find((c) => !entryOf(c.argv));
  if (notAllowed) {
    const shown = showArgv(notAllowed.argv);
    const why = commands.length > 1 ? `part "${shown}" of a chained command` : `"${shown}"`;
    return ask(`Command ${why} is not on the allow list.`);
  }
  for (const c of commands) {
    const option = gitGlobalOption(c.argv, (entryOf(c.argv) as string[]).length);
    if (option)
      return ask(
        `"${showArgv(c.argv)}" gives git the option ${option} before its command, which can change git's configuration or repository (and so run other programs); the allow list entry does not name it.`,
      );
  }
  const runsCode = commands.filter((c) => RUNS_REPOSITORY_CODE.has(programName(c.argv[0] ?? '')));
  const note = runsCode.length
    ? ` ${runsCode.map((c) => `"${showArgv(c.argv)}"`).join(', ')} can run code the repository controls (its scripts, tests or configuration files), which the allow list does not judge.`
    : '';
  return {
    verdict: 'auto',
    reason: `Every command is on the allow list (${commands.map((c) => showArgv(c.argv)).join(' ; ')}); it runs exactly as read, without a shell.${note}`,
  };
}

/**
 * The first of git's own options (those before its command: `-c`, `-C`, `--git-dir` …) that the
 * allow entry (its first `covered` words) did not name: with a bare `git` on the list, `git -c
 * core.pager=… log` would otherwise run any program. Options after the command are the command's.
 */
function gitGlobalOption(argv: readonly string[], covered: number): string | null {
  if (programName(argv[0] ?? '') !== 'git') return null;
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('-')) return null;
    if (i >= covered && !HARMLESS_GIT_OPTIONS.has(w)) return w.length > 40 ? `${w.slice(0, 37)}…` : w;
  }
  return null;
}

/** git's own options that choose nothing: output and pathspec flags. */
const HARMLESS_GIT_OPTIONS = new Set([
  '--no-pager',
  '-P',
  '--no-optional-locks',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
  '--no-replace-objects',
  '--version',
  '--help',
]);

/**
 * Programs that run what the repository's files say — package scripts, build files, tests, config
 * files written in code: the allow list judges their words, not that code (the README says so).
 */
const RUNS_REPOSITORY_CODE = new Set(
  (
    'npm npx pnpm pnpx yarn bun bunx deno node nodejs tsx ts-node python python3 pytest tox nox pip pip3 ' +
    'make cmake ctest ninja cargo go mvn mvnw gradle gradlew ant sbt dotnet jest vitest mocha ava karma ' +
    'playwright cypress eslint prettier stylelint webpack vite rollup ruby rake bundle rspec perl php ' +
    'composer phpunit sh bash zsh just task'
  ).split(' '),
);

/** `./node_modules/.bin/jest` is jest. */
function programName(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** The words as a person reads them: quoted where a word has spaces or shell characters. */
export function showArgv(argv: readonly string[]): string {
  return argv.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

function excerpt(text: string): string {
  const oneLine = text.replace(/\r?\n/g, '⏎');
  return `"${oneLine.length > 60 ? `${oneLine.slice(0, 57)}…` : oneLine}"`;
}
