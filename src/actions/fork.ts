// Fork from a checkpoint: a new run that continues from it, paused until the user resumes it —
// with the conversation only, or (when the agent changed files after the checkpoint) with the
// conversation and the files, which is a restore that rewinds (restore.ts). One fork-then-pause
// for both (`forkPaused`).
import { errorMessage } from '../common/errors';
import type { RestoreRecord, RunSummary } from '../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../store/api/types';
import { type RunGuards } from './guards';
import type { Notices } from './ports';
import { lastJournaledSeq } from './restore/plan';

/** A checkpoint of a run. */
export interface CheckpointTarget {
  runId: string;
  seq: number;
}

/**
 * Forks the run at `from` and pauses the fork (the user resumes it). `restoredFiles`: the fork of a
 * restore — calls whose file changes the restore put back are not carried into it, so it runs them
 * again (asking as the policy says) instead of replaying results the files no longer show.
 */
export async function forkPaused(
  d: { store: CheckpointStore; owner: OwnerInfo },
  from: CheckpointTarget,
  o: { restoredFiles?: boolean } = {},
): Promise<RunSummary> {
  const omitEffects = o.restoredFiles
    ? (await d.store.listEffects(from.runId))
        .filter((e) => (e.checkpoint_seq ?? -1) >= from.seq && (e.files?.length ?? 0) > 0)
        .map((e) => e.tool_call_id)
    : undefined;
  const { run, lease } = await d.store.fork(from.runId, from.seq, d.owner, omitEffects ? { omitEffects } : undefined);
  try {
    const how = o.restoredFiles ? ', with its files restored' : '';
    const detail = `Forked from run ${from.runId} at checkpoint #${from.seq}${how}. Resume it to continue from there.`;
    return await d.store.setRunState(run.run_id, 'paused_cancelled', detail);
  } finally {
    await lease.release();
  }
}

export interface ForkDeps {
  store: CheckpointStore;
  owner: OwnerInfo;
  guards: RunGuards;
  notices: Notices;
  /** The restore that rewinds the conversation too (restore.ts RestoreAction.run with rewind). */
  restoreAndRewind(from: CheckpointTarget): Promise<RestoreRecord | undefined>;
  /** Resume a run (resume.ts), for the notification's button. */
  resume(runId: string): Promise<unknown>;
}

export class ForkAction {
  constructor(private readonly deps: ForkDeps) {}

  /**
   * Forks from the checkpoint; `withFiles` absent: asked when the agent changed files after it.
   * Returns the fork's run id, undefined when refused, cancelled or failed (the user was told).
   */
  async run(from: CheckpointTarget, o: { withFiles?: boolean } = {}): Promise<string | undefined> {
    const { notices } = this.deps;
    const refused = await this.deps.guards.fork(from.runId, from.seq).catch((err: unknown) => errorMessage(err));
    if (refused) {
      void notices.warn(`Agent Waypoints: ${refused}`);
      return undefined;
    }
    const withFiles = o.withFiles ?? (await this.askWithFiles(from));
    if (withFiles === undefined) return undefined;
    if (withFiles) return (await this.deps.restoreAndRewind(from))?.forked_run_id ?? undefined;
    try {
      const run = await forkPaused(this.deps, from);
      // Not awaited: the fork is returned at once; the button resumes it whenever clicked.
      void notices
        .info(`Forked into “${run.title}”. Resume it to continue from checkpoint #${from.seq}.`, 'Resume now')
        .then((pick) => (pick ? this.deps.resume(run.run_id) : undefined));
      return run.run_id;
    } catch (err) {
      notices.error(`Agent Waypoints: could not fork: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** Conversation only, or conversation and files — asked only when the agent changed files after the checkpoint. */
  private async askWithFiles(from: CheckpointTarget): Promise<boolean | undefined> {
    const [effects, restores] = await Promise.all([
      this.deps.store.listEffects(from.runId),
      this.deps.store.listRestores(from.runId),
    ]);
    const last = lastJournaledSeq(effects, restores);
    if (last === null || last < from.seq) return false;
    return this.deps.notices.choose(
      [
        {
          label: 'Conversation only',
          detail: 'The fork starts from the checkpoint; the files stay as they are now.',
          value: false,
        },
        {
          label: 'Conversation and files',
          detail: 'Restore the files the agent changed after the checkpoint (with a preview), then fork.',
          value: true,
        },
      ],
      { title: `Fork from checkpoint #${from.seq}`, placeHolder: 'The agent changed files after this checkpoint' },
    );
  }
}
