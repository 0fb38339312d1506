// "Resume agent session" for one run, from the palette, the tree, a notification or the run view:
// a finished run shows its stored result (nothing runs), a run waiting for decisions opens at its
// first waiting card, anything else continues exactly where it stopped — after a higher budget for
// a run paused on it, a confirmation when its conditions changed, and with the read-only offer when
// another window holds it.
import { errorMessage } from '../common/errors';
import { ResumeNeedsConfirmationError } from '../runner/errors';
import type { ResumeOptions, StartedRun } from '../runner/runner';
import { RunLockedError } from '../store/api/errors';
import { isTerminalState, type RunSummary } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import type { ActionLog, Notices, RunViews } from './ports';

export interface ResumeDeps {
  store: Pick<CheckpointStore, 'getRun'>;
  runner: { resume(runId: string, opts?: ResumeOptions): Promise<StartedRun> };
  views: RunViews;
  notices: Notices;
  log: ActionLog;
  /** The budget's step limit in the settings (a raised budget suggests the run's step plus this). */
  maxSteps(): number;
  /** The workers have the run now (asked fresh): it is brought back, never resumed from under them. */
  withWorkers?(runId: string): Promise<boolean>;
  /** *Bring back here* (actions/handOff.ts), offered for a run the workers have. */
  bringBack?(runId: string): Promise<unknown>;
}

/** What Resume did: the run's state it showed (finished, awaiting_approval), `running`, or undefined (cancelled, failed: said). */
export type ResumeResult = string | undefined;

export class ResumeAction {
  constructor(private readonly deps: ResumeDeps) {}

  async run(runOrId: RunSummary | string): Promise<ResumeResult> {
    const run = typeof runOrId === 'string' ? await this.deps.store.getRun(runOrId) : runOrId;
    if (!run) {
      this.deps.notices.error(`Agent Waypoints: no run with id ${String(runOrId)} in this workspace.`);
      return undefined;
    }
    const { views } = this.deps;
    // A finished run shows its stored result in its run view (nothing runs); there the user can send a follow-up.
    if (isTerminalState(run.state)) {
      await views.show(run.run_id);
      return run.state;
    }
    if (run.pending_approvals > 0) {
      await views.show(run.run_id, { kind: 'firstPending' });
      return 'awaiting_approval';
    }
    if (await this.deps.withWorkers?.(run.run_id)) {
      const pick = await this.deps.notices.warn(
        `“${run.title}” is with the workers: bring it back here to continue it in this window.`,
        'Bring back here',
      );
      if (pick) await this.deps.bringBack?.(run.run_id);
      return undefined;
    }
    const opts = run.state === 'paused_budget' ? await this.raisedBudget(run) : {};
    if (!opts) return undefined;
    const started = await this.tryResume(run, opts);
    if (started) views.track(started, run.title);
    return started ? 'running' : undefined;
  }

  private async tryResume(run: RunSummary, opts: ResumeOptions): Promise<StartedRun | undefined> {
    const { notices } = this.deps;
    try {
      return await this.deps.runner.resume(run.run_id, opts);
    } catch (err) {
      if (err instanceof ResumeNeedsConfirmationError) {
        const ok = await notices.confirm(`Resume “${run.title}”?`, `${err.reasons.join('.\n')}.`, 'Resume anyway');
        return ok ? this.tryResume(run, { ...opts, confirmed: true }) : undefined;
      }
      if (err instanceof RunLockedError) {
        const h = err.holder;
        const pick = await notices.warn(
          `“${run.title}” is held by ${h.label} (pid ${h.pid} on ${h.hostname}). Only one window can run it; here you can view it read-only.`,
          'Open latest checkpoint (read-only)',
        );
        if (pick) await this.deps.views.openCheckpoint(run.run_id, run.last_seq);
        return undefined;
      }
      this.deps.log.error(`resume of ${run.run_id} failed: ${errorMessage(err)}`);
      notices.error(`Agent Waypoints: could not resume “${run.title}”: ${errorMessage(err)}`);
      return undefined;
    }
  }

  private async raisedBudget(run: RunSummary): Promise<{ budget: { max_steps: number } } | undefined> {
    const value = await this.deps.notices.input({
      title: `Resume “${run.title}” with a higher budget`,
      prompt: `${run.state_detail ?? 'The run hit its budget.'} New maximum number of steps:`,
      value: String(run.step + this.deps.maxSteps()),
      validate: (v) => (/^\d+$/.test(v) && Number(v) > run.step ? undefined : `A whole number above ${run.step}.`),
    });
    return value ? { budget: { max_steps: Number(value) } } : undefined;
  }
}
