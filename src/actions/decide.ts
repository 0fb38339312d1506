// Deciding tool calls that wait for approval: approve, reject (with the reason the model sees),
// approve with edited arguments, approve all, and approve-and-always-allow for an external tool.
// Each is bound to the call's id and the hash of the arguments the user saw; the runner writes the
// decisions durably before anything executes and continues the run when none is left waiting.
import type { DecisionInput } from '../runner/runner';
import type { CheckpointStore } from '../store/api/types';
import { RunGuards } from './guards';

/** A call as the user saw it: its id and the hash of its arguments. */
export interface SeenCall {
  toolCallId: string;
  inputHash: string;
}

export interface DecideDeps {
  store: Pick<CheckpointStore, 'listApprovals'>;
  runner: { decideApprovals(runId: string, decisions: DecisionInput[]): Promise<unknown> };
  guards: Pick<RunGuards, 'decide'>;
  /** Adds an external tool, as its server is now, to the always-allow list; says what was allowed. Absent: not offered. */
  allowTool?(toolName: string): Promise<string>;
  /** Adds domains to the user's allowed domains for the sandbox. Absent: "Always" is not offered. */
  allowDomains?(domains: readonly string[]): Promise<void>;
}

/** The answers to a command the sandbox blocked (Deny is `reject`). */
export type RetryChoice = 'allowForRun' | 'allowAlways' | 'runOutside';

export class DecideAction {
  constructor(private readonly deps: DecideDeps) {}

  approve(runId: string, call: SeenCall): Promise<void> {
    return this.decide(runId, [{ kind: 'approve', ...seen(call) }]);
  }

  reject(runId: string, call: SeenCall, reason: string): Promise<void> {
    return this.decide(runId, [{ kind: 'reject', ...seen(call), reason }]);
  }

  approveEdited(runId: string, call: SeenCall, argumentsJson: string): Promise<void> {
    return this.decide(runId, [{ kind: 'approve_edited', ...seen(call), argumentsJson }]);
  }

  approveAll(runId: string, calls: readonly SeenCall[]): Promise<void> {
    return this.decide(
      runId,
      calls.map((c) => ({ kind: 'approve' as const, ...seen(c) })),
    );
  }

  /** Approves the call, then allows the tool: the call waits for nobody if the settings write is slow. Returns what was allowed. */
  async approveAndAllow(runId: string, call: SeenCall): Promise<string> {
    RunGuards.refuse(await this.deps.guards.decide(runId));
    if (!this.deps.allowTool) throw new Error('external tools cannot be allowed in this window');
    const approval = (await this.deps.store.listApprovals(runId, { pendingOnly: true })).find(
      (a) => a.tool_call_id === call.toolCallId,
    );
    if (!approval) throw new Error(`tool call ${call.toolCallId} of run ${runId} is not waiting for a decision`);
    if (approval.category !== 'external') throw new Error(`${approval.tool_name} is not an external tool`);
    if (approval.input_hash !== call.inputHash) throw new Error('its arguments changed since it was shown');
    const allowed = await this.deps.allowTool(approval.tool_name);
    await this.deps.runner.decideApprovals(runId, [{ kind: 'approve', ...seen(call) }]);
    return allowed;
  }

  /**
   * A command the sandbox blocked runs again, once: with the domains it was refused allowed for the
   * rest of the run (`allowAlways`: added to the user's setting first), or outside the sandbox.
   */
  async retry(runId: string, call: SeenCall, choice: RetryChoice): Promise<void> {
    RunGuards.refuse(await this.deps.guards.decide(runId));
    const approval = (await this.deps.store.listApprovals(runId, { pendingOnly: true })).find(
      (a) => a.tool_call_id === call.toolCallId,
    );
    if (!approval?.retry) throw new Error(`tool call ${call.toolCallId} of run ${runId} is not waiting to run again`);
    if (approval.input_hash !== call.inputHash) throw new Error('its arguments changed since it was shown');
    const domains = approval.retry.blocked.domains;
    if (choice !== 'runOutside' && domains.length === 0) throw new Error('the sandbox refused it no domain to allow');
    if (choice === 'allowAlways') {
      if (!this.deps.allowDomains) throw new Error('domains cannot be allowed always in this window');
      await this.deps.allowDomains(domains);
    }
    const access =
      choice === 'runOutside'
        ? { kind: 'unsandboxed' as const }
        : { kind: 'domains' as const, domains, always: choice === 'allowAlways' };
    await this.deps.runner.decideApprovals(runId, [{ kind: 'approve', ...seen(call), access }]);
  }

  /** Refused (with the guard's reason) when this window may not write the run; stale decisions are refused by the runner. */
  private async decide(runId: string, decisions: DecisionInput[]): Promise<void> {
    RunGuards.refuse(await this.deps.guards.decide(runId));
    await this.deps.runner.decideApprovals(runId, decisions);
  }
}

/** Only the id and the hash: nothing else a caller's object holds reaches the decision. */
const seen = (c: SeenCall): SeenCall => ({ toolCallId: c.toolCallId, inputHash: c.inputHash });
