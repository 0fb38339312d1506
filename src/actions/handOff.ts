// *Continue in background* and *Bring back here*: a run of the shared store handed to the workers
// (this window lets go at its next step boundary; a worker with a checkout of the project takes it),
// and taken back — the worker lets go at its next step boundary, the run's net file changes come into
// this checkout through Bring back's preview (bringBack/action.ts), and the run is offered to resume
// here. vscode-free; guards.ts says when each applies.
import { errorMessage } from '../common/errors';
import type { DecidedBy, RunSummary } from '../store/api/schema';
import type { CheckpointStore } from '../store/api/types';
import type { BackgroundRuns, WorkersPort } from './background';
import type { BringBackAction } from './bringBack/action';
import type { RunGuards } from './guards';
import type { ActionLog, Notices } from './ports';
import type { ResumeAction } from './resume';

export interface HandOffDeps {
  store: Pick<CheckpointStore, 'getRun'>;
  runner: { isActive(runId: string): boolean; letGo(runId: string, detail: string): boolean };
  guards: Pick<RunGuards, 'handOff' | 'takeBack'>;
  background: Pick<BackgroundRuns, 'port' | 'set'>;
  bringBack: Pick<BringBackAction, 'plan' | 'run'>;
  resume: Pick<ResumeAction, 'run'>;
  notices: Notices;
  log: ActionLog;
  /** Who hands off and takes back (this user, this machine, this window). */
  by: DecidedBy;
  /** Shows `title` while `task` runs (a notification with a spinner in the window). */
  progress<T>(title: string, task: () => Promise<T>): Promise<T>;
}

/** How long Bring back waits for the worker to reach its next step boundary. */
export const LET_GO_MS = 300_000;

export class HandOffAction {
  constructor(private readonly deps: HandOffDeps) {}

  /** Hands the run to the workers; true when it was. */
  async continueInBackground(runId: string): Promise<boolean> {
    const { notices, log } = this.deps;
    const refused = await this.refusal(() => this.deps.guards.handOff(runId));
    if (refused) return false;
    const workers = this.workers();
    if (!workers) return false;
    const run = (await this.deps.store.getRun(runId))!;
    try {
      const h = await workers.handOff(runId, this.deps.by);
      this.deps.background.set(runId, h);
    } catch (err) {
      notices.error(`Agent Waypoints: could not hand “${run.title}” to the workers: ${errorMessage(err)}`);
      return false;
    }
    const here = this.deps.runner.letGo(
      runId,
      'Handed to the workers: this window let go at a step boundary, and a worker continues the run.',
    );
    log.info(`run ${runId}: handed to the workers${here ? '; this window lets go at its next step' : ''}`);
    void notices.info(
      `Agent Waypoints: “${run.title}” continues in the background: a worker with a checkout of this project takes it${here ? ' once this window lets go at its next step' : ''}. Its steps show here as they are written.`,
    );
    return true;
  }

  /**
   * Takes the run back from the workers (they let go at their next step boundary), brings its files
   * into this checkout (previewed), and offers to resume it here. Resolves to the run's state then,
   * or undefined when refused or stopped short (said to the user).
   */
  async bringBackHere(runId: string): Promise<string | undefined> {
    const { notices, log } = this.deps;
    if (await this.refusal(() => this.deps.guards.takeBack(runId))) return undefined;
    const workers = this.workers();
    if (!workers) return undefined;
    const before = (await this.deps.store.getRun(runId))!;
    try {
      if (await workers.get(runId)) {
        await this.deps.progress(`Asking the workers to let go of “${before.title}” at its next step…`, () =>
          workers.bringBack(runId, this.deps.by, { timeoutMs: LET_GO_MS }),
        );
        this.deps.background.set(runId, undefined);
        log.info(`run ${runId}: taken back from the workers`);
      }
    } catch (err) {
      notices.error(`Agent Waypoints: could not take “${before.title}” back from the workers: ${errorMessage(err)}`);
      return undefined;
    }
    const plan = await this.deps.bringBack.plan(runId);
    const toWrite = plan.files.some((f) => f.action === 'revert' || f.action === 'partial' || f.overwritable);
    if (toWrite && !(await this.deps.bringBack.run(runId))) {
      void notices.warn(
        `Agent Waypoints: “${before.title}” is back in this window, but its files were not brought here. Bring it back here again to take them before you resume it.`,
      );
      return undefined;
    }
    const run = (await this.deps.store.getRun(runId))!;
    if (toWrite === false)
      void notices.info(`Agent Waypoints: “${run.title}” is back in this window; this checkout already has its files.`);
    await this.offerResume(run);
    return run.state;
  }

  private async offerResume(run: RunSummary): Promise<void> {
    if (run.state !== 'interrupted' && run.state !== 'paused_error' && run.state !== 'paused_cancelled') return;
    const pick = await this.deps.notices.info(`Agent Waypoints: resume “${run.title}” in this window?`, 'Resume here');
    if (pick) await this.deps.resume.run(run.run_id);
  }

  private workers(): WorkersPort | null {
    const w = this.deps.background.port();
    if (!w)
      void this.deps.notices.warn('Agent Waypoints: the shared run store is not connected: try again once it is.');
    return w;
  }

  /** The guard's reason, said as a warning; true when refused. */
  private async refusal(guard: () => Promise<string | null>): Promise<boolean> {
    const reason = await guard().catch((err: unknown) => errorMessage(err));
    if (reason) void this.deps.notices.warn(`Agent Waypoints: ${reason}`);
    return reason !== null;
  }
}
