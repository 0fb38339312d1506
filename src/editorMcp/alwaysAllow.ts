// The "always allow" list of external tools: a user setting (`agentWaypoints.mcp.alwaysAllow`, so a
// workspace cannot grant itself anything), each entry bound to the server's identity. Listed and
// revoked in the Runs view's MCP section; the run's policy reads it at every call.
import * as vscode from 'vscode';
import { Emitter } from '../common/emitter';
import { type AllowRule, type ExternalPolicy, readRules, sameRule } from '../runner/mcp/approvals';

const SECTION = 'agentWaypoints.mcp';

export class AlwaysAllowList implements vscode.Disposable {
  readonly onDidChange = new Emitter<void>();
  private readonly listener: vscode.Disposable;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.listener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SECTION}.alwaysAllow`) || e.affectsConfiguration(`${SECTION}.autoApproveReadOnly`))
        this.onDidChange.emit();
    });
  }

  /** The rules in the user's settings (workspace values are ignored: the setting is application-scoped). */
  rules(): AllowRule[] {
    const value = vscode.workspace.getConfiguration(SECTION).inspect<unknown>('alwaysAllow')?.globalValue;
    const { rules, invalid } = readRules(value ?? []);
    if (invalid > 0)
      this.log.warn(`${SECTION}.alwaysAllow: ${invalid} entr${invalid > 1 ? 'ies are' : 'y is'} not valid and ignored`);
    return rules;
  }

  policy(): ExternalPolicy {
    const autoReadOnly =
      vscode.workspace.getConfiguration(SECTION).inspect<boolean>('autoApproveReadOnly')?.globalValue === true;
    return { rules: this.rules(), autoReadOnly };
  }

  async add(rule: AllowRule): Promise<void> {
    const rules = this.rules().filter((r) => !(r.server === rule.server && r.tool === rule.tool));
    await this.write([...rules, rule]);
    this.log.info(`always allow: ${rule.tool} of ${rule.server} (identity ${rule.identity.slice(0, 12)}…)`);
  }

  async remove(rule: AllowRule): Promise<boolean> {
    const rules = this.rules();
    const left = rules.filter((r) => !sameRule(r, rule));
    if (left.length === rules.length) return false;
    await this.write(left);
    this.log.info(`always allow revoked: ${rule.tool} of ${rule.server}`);
    return true;
  }

  private async write(rules: AllowRule[]): Promise<void> {
    await vscode.workspace.getConfiguration(SECTION).update('alwaysAllow', rules, vscode.ConfigurationTarget.Global);
  }

  dispose(): void {
    this.listener.dispose();
    this.onDidChange.dispose();
  }
}
