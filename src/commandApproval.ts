// How this workspace approves commands: the user's choice for this workspace (kept in the
// workspace's state, never in a file of the repository), else the user's setting — never the
// workspace's own settings.json, which the repository controls. With "auto in sandbox" it also
// holds whether the OS sandbox can run here (a cheap check at once, the real probe in the
// background), the user's allowed domains, and the header's line that says all of it.
import * as vscode from 'vscode';
import { checkSandbox, COMMAND_POLICY, type SandboxCheck, unavailable } from './runner/sandbox';
import type { CommandMode } from './runner/tools/policy';
import type { ApprovalModeLine } from './views/run/protocol';
import { SECTION } from './settings';

const STATE_KEY = 'agentWaypoints.commandApproval';
const MODES: readonly CommandMode[] = ['sandbox', 'ask', 'auto', 'deny'];
export const MODE_LABELS: Record<CommandMode, string> = {
  sandbox: 'auto in sandbox',
  ask: 'ask',
  auto: 'auto',
  deny: 'deny',
};

export class CommandApproval {
  /** Why the sandbox cannot run here (null: it can), from the last probe or the cheap check. */
  private why: string | null = unavailable();
  private probing: Promise<SandboxCheck> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly memento: vscode.Memento) {
    if (this.mode() === 'sandbox') void this.probe();
  }

  /** The mode in effect: this workspace's choice, else the user's setting. */
  mode(): CommandMode {
    return this.choice() ?? userMode();
  }

  /** The workspace's own choice, or undefined (the user's setting applies). */
  choice(): CommandMode | undefined {
    const v = this.memento.get<unknown>(STATE_KEY);
    return MODES.includes(v as CommandMode) ? (v as CommandMode) : undefined;
  }

  async choose(mode: CommandMode | undefined): Promise<void> {
    await this.memento.update(STATE_KEY, mode);
    if (this.mode() === 'sandbox') void this.probe();
    this.changed.fire();
  }

  /** The sandbox the policy runs commands in, and why it cannot now (null: it can). */
  sandbox(): { policy: typeof COMMAND_POLICY; unavailable: string | null } {
    return {
      policy: { ...COMMAND_POLICY, allowedDomains: allowedDomains(), reportDomains: true },
      unavailable: this.why,
    };
  }

  /** Runs the real probe (a command in a real sandbox) and keeps its verdict for the policy. */
  probe(): Promise<SandboxCheck> {
    this.probing ??= checkSandbox().then((c) => {
      this.probing = undefined;
      this.why = c.available ? null : (c.problems[0]?.replace(/\.$/, '') ?? 'the sandbox did not start');
      this.changed.fire();
      return c;
    });
    return this.probing;
  }

  /** The run view header's line: "commands: auto in sandbox · network: 2 domains". */
  line(): ApprovalModeLine {
    const mode = this.mode();
    const from = this.choice()
      ? 'Chosen for this workspace (Agent Waypoints: Choose command approval for this workspace…).'
      : 'From your user settings (agentWaypoints.approval.command).';
    if (mode !== 'sandbox') return { label: `commands: ${MODE_LABELS[mode]}`, detail: from };
    const domains = allowedDomains();
    const network = domains.length === 0 ? 'none' : `${domains.length} domain${domains.length > 1 ? 's' : ''}`;
    const label = this.why
      ? 'commands: auto in sandbox (unavailable: they ask)'
      : `commands: auto in sandbox · network: ${network}`;
    const detail = [
      'Any command runs without asking, inside the OS sandbox; a deny rule still wins, and what the sandbox blocks asks.',
      domains.length > 0
        ? `Allowed domains: ${domains.join(', ')}.`
        : 'No domain is allowed: commands have no network.',
      ...(this.why ? [`The sandbox is not available here: ${this.why}. Run "Agent Waypoints: Check sandbox".`] : []),
      from,
    ].join(' ');
    return { label, detail };
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The user's own setting: a workspace's settings.json cannot set it (scope `application`, read from the user's value). */
function userMode(): CommandMode {
  const v = vscode.workspace.getConfiguration(SECTION).inspect<unknown>('approval.command')?.globalValue;
  return MODES.includes(v as CommandMode) ? (v as CommandMode) : 'ask';
}

/** The domains sandboxed commands may reach (user settings only). */
export function allowedDomains(): string[] {
  const v = vscode.workspace.getConfiguration(SECTION).inspect<unknown>('sandbox.allowedDomains')?.globalValue;
  return Array.isArray(v) ? v.filter((d): d is string => typeof d === 'string' && d.trim() !== '') : [];
}

/** "Always" on a blocked command: the domains join the user's allowed domains. */
export async function allowDomainsAlways(domains: readonly string[]): Promise<void> {
  const now = allowedDomains();
  const added = domains.filter((d) => !now.includes(d));
  if (added.length === 0) return;
  await vscode.workspace
    .getConfiguration(SECTION)
    .update('sandbox.allowedDomains', [...now, ...added], vscode.ConfigurationTarget.Global);
}
