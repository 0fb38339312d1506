// Deciding tool calls that wait for approval: approve, reject (with the reason the model sees),
// approve with edited arguments, approve all, and approve-and-always-allow for an external tool.
// Each is bound to the call's id and the hash of the arguments the user saw; the runner writes the
// decisions durably before anything executes and continues the run when none is left waiting.
import type { DecisionInput } from '../runner/runner';
import type { DecidedBy } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import type { DecisionBody } from '../store/pg/handoffs';
import type { WorkersPort } from './background';
import { RunGuards } from './guards';
import type { ActionLog, Notices } from './ports';

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
  /**
   * The runs the workers have: a decision on one is posted for the worker (held by it or not) to
   * record, and awaited. Absent: this window decides only the runs it can take.
   */
  workers?: {
    port(): WorkersPort | null;
    isShared(runId: string): boolean;
    /** Who decides here (recorded with each decision). */
    by: DecidedBy;
    notices: Notices;
    log: ActionLog;
  };
}

/** How long a decision posted for the workers waits for one to record it before the card lets go. */
export const SETTLE_MS = 15_000;

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
    if (await this.workersOf(runId))
      throw new Error(
        "“Always allow” changes this window's settings, which the workers do not read: approve the call instead.",
      );
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
    await this.record(runId, [{ kind: 'approve', ...seen(call), access }]);
  }

  /** Refused (with the guard's reason) when this window may not write the run; stale decisions are refused by the runner. */
  private async decide(runId: string, decisions: DecisionInput[]): Promise<void> {
    RunGuards.refuse(await this.deps.guards.decide(runId));
    await this.record(runId, decisions);
  }

  /** Recorded here, or — the run is the workers' — posted for the worker to record. */
  private async record(runId: string, decisions: DecisionInput[]): Promise<void> {
    const workers = await this.workersOf(runId);
    if (workers) return this.post(workers, runId, decisions);
    await this.deps.runner.decideApprovals(runId, decisions);
  }

  /** The workers' port when they have the run now (asked fresh: a run taken here by mistake would run here). */
  private async workersOf(runId: string): Promise<WorkersPort | undefined> {
    const w = this.deps.workers;
    const port = w?.isShared(runId) ? w.port() : null;
    if (!port) return undefined;
    const h = await port.get(runId);
    return h && !h.wantedBack ? port : undefined;
  }

  /**
   * Each decision posted durably, bound to the call and the hash shown; then the worker's verdict
   * awaited: a refusal (the arguments changed, decided already) is thrown with its reason; no worker
   * yet is said — the decision stays posted and is recorded when one takes the run.
   */
  private async post(port: WorkersPort, runId: string, decisions: DecisionInput[]): Promise<void> {
    const w = this.deps.workers!;
    const posted = [];
    for (const d of decisions) posted.push(await port.decide(runId, seen(d), bodyOf(d), w.by));
    w.log.info(
      `run ${runId}: ${posted.map((p) => `${p.decision.kind} ${p.toolCallId}`).join(', ')} posted for the workers`,
    );
    const verdicts = await Promise.all(posted.map((p) => port.settled(p, SETTLE_MS).catch(() => p)));
    const refused = verdicts.filter((v) => v.outcome === 'refused');
    if (refused.length > 0)
      throw new Error(`the worker refused it: ${refused.map((v) => v.outcomeDetail ?? 'no reason given').join('; ')}`);
    if (verdicts.some((v) => v.outcome === null))
      void w.notices.info(
        'Agent Waypoints: your decision is posted; no worker has taken it yet. It is recorded when one does, and the run continues then.',
      );
  }
}

function bodyOf(d: DecisionInput): DecisionBody {
  if (d.kind === 'reject') return { kind: 'reject', reason: d.reason };
  if (d.kind === 'approve_edited') return { kind: 'approve_edited', argumentsJson: d.argumentsJson };
  return { kind: 'approve', ...(d.access ? { access: d.access } : {}) };
}

/** Only the id and the hash: nothing else a caller's object holds reaches the decision. */
const seen = (c: SeenCall): SeenCall => ({ toolCallId: c.toolCallId, inputHash: c.inputHash });
