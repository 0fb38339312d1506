// May this run be restored, forked, resumed or decided now — and if not, why. Written once, in one
// wording: the commands and the run view controller ask before they act (and the actions again
// before they write), the Runs tree sets its context values from it, the run view shows the reason
// it is given. `why…` functions are pure over what is known of the run (RunFacts); RunGuards
// gathers those facts from the store, the runner and the workspace's trust.
import { isTerminalState, type RestoreRecord, type RunSummary } from '../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../store/api/types';
import { lastJournaledSeq, restoreWrote } from './restore/plan';

/** What is known of a run now. A caller that cannot know a fact leaves it out (the tree knows only the summary). */
export interface RunFacts {
  run: Pick<RunSummary, 'run_id' | 'state' | 'pending_approvals' | 'last_seq'>;
  /** Executing in this window. Unknown: a run whose state is `running` counts as executing. */
  active?: boolean;
  /** The workspace is trusted. Unknown: trusted (restricted mode is also checked where the action writes). */
  trusted?: boolean;
  /** Another window that holds the run now, if any. */
  heldBy?: Pick<OwnerInfo, 'label' | 'pid'> | null;
}

/** A guard said no: the message is the reason, as the user reads it. */
export class ActionRefusedError extends Error {}

const executing = (f: RunFacts) => f.active ?? f.run.state === 'running';
const held = (f: RunFacts) =>
  f.heldBy ? `Read-only: this run is held by ${f.heldBy.label} (pid ${f.heldBy.pid}).` : null;

/** A forged or stale checkpoint number. */
export function whyNoCheckpoint(f: RunFacts, seq: number): string | null {
  return seq > f.run.last_seq
    ? `checkpoint #${seq} is not in run ${f.run.run_id} (its last is #${f.run.last_seq})`
    : null;
}

/** Why this window may not write the run's records (decide its approvals, send, undo a condense), or null. */
export function whyReadOnly(f: RunFacts): string | null {
  if (f.trusted === false)
    return 'Restricted mode: this workspace is not trusted, so write and command tools are disabled. Trust the workspace to decide.';
  if (f.active) return null; // executing here: this window holds it
  return held(f);
}

/** Deciding approvals needs a run this window may write. */
export const whyNotDecide = whyReadOnly;

/**
 * Why the run's files may not be restored now. With `at` (a checkpoint and the newest one with a
 * journaled change after it, plan.ts lastJournaledSeq): also when nothing changed after it.
 */
export function whyNotRestore(f: RunFacts, at?: { seq: number; lastChangeSeq: number | null }): string | null {
  if (f.trusted === false)
    return 'Restricted mode: restoring files writes the workspace, which an untrusted workspace does not allow. Trust the workspace first.';
  if (executing(f)) return 'The run is executing: cancel it before restoring its files.';
  const h = held(f);
  if (h) return h;
  if (at) {
    const missing = whyNoCheckpoint(f, at.seq);
    if (missing) return missing;
    if (at.lastChangeSeq === null || at.seq > at.lastChangeSeq)
      return `The agent changed no files after checkpoint #${at.seq}: there is nothing to restore.`;
  }
  return null;
}

/** Undo a restore = restore to the checkpoint it followed; only a restore that wrote files can be undone. */
export function whyNotUndoRestore(f: RunFacts, record: RestoreRecord): string | null {
  if (record.applied)
    return 'These files were brought into a checkout from the run: undo that with Undo bring back, in that checkout.';
  if (!restoreWrote(record)) return 'This restore wrote no files: there is nothing to undo.';
  return whyNotRestore(f);
}

/** Why the run's files may not be brought into this checkout now (or a bring-back undone), or null. */
export function whyNotBringBack(f: RunFacts): string | null {
  if (f.trusted === false)
    return 'Restricted mode: bringing files back writes the workspace, which an untrusted workspace does not allow. Trust the workspace first.';
  if (executing(f))
    return 'The run is executing: wait until it stops (or take it back here) before bringing its files back.';
  return held(f);
}

/** Why Resume does not apply (the run view's Resume buttons, the tree's `.resumable`), or null. */
export function whyNotResume(f: RunFacts): string | null {
  if (executing(f)) return 'The run is executing.';
  if (isTerminalState(f.run.state)) return 'The run has finished: send a follow-up to continue the conversation.';
  const n = f.run.pending_approvals;
  if (n > 0) return `The run waits for your decision on ${n} tool call${n === 1 ? '' : 's'}.`;
  return held(f);
}

/** A fork reads the run and writes a new one: it needs only the checkpoint (with files, also a restore). */
export function whyNotFork(f: RunFacts, seq: number): string | null {
  return whyNoCheckpoint(f, seq);
}

/** The run-level answers the run view shows beside its buttons (per run of the thread). */
export interface RunGuardReasons {
  restore: string | null;
  resume: string | null;
  decide: string | null;
}

export function runReasons(f: RunFacts): RunGuardReasons {
  return { restore: whyNotRestore(f), resume: whyNotResume(f), decide: whyNotDecide(f) };
}

export interface GuardDeps {
  store: Pick<CheckpointStore, 'getRun' | 'owner' | 'listEffects' | 'listRestores'>;
  isActive(runId: string): boolean;
  /** This window (a run it holds is not "held by another window"). */
  owner: Pick<OwnerInfo, 'owner_id'>;
  /** The workspace is trusted (VS Code's workspace trust); always true outside VS Code. */
  trusted(): boolean;
}

/** The guards over the run as it is now: the store's summary and lease holder, the runner, trust. */
export class RunGuards {
  constructor(private readonly deps: GuardDeps) {}

  /** Everything the guards know of a run now. */
  async facts(run: RunSummary): Promise<RunFacts> {
    const active = this.deps.isActive(run.run_id);
    const holder = active ? undefined : await this.deps.store.owner(run.run_id);
    return {
      run,
      active,
      trusted: this.deps.trusted(),
      heldBy: holder && holder.owner_id !== this.deps.owner.owner_id ? holder : null,
    };
  }

  /** Why this window may not write the run's records (the run view's read-only banner; send; undo condense). */
  async readOnly(run: string | RunSummary): Promise<string | null> {
    return whyReadOnly(await (typeof run === 'string' ? this.factsOf(run) : this.facts(run)));
  }

  async decide(runId: string): Promise<string | null> {
    return whyNotDecide(await this.factsOf(runId));
  }

  /** The run-level answers (the run view's header). */
  async reasons(run: RunSummary): Promise<RunGuardReasons> {
    return runReasons(await this.facts(run));
  }

  async resume(runId: string): Promise<string | null> {
    return whyNotResume(await this.factsOf(runId));
  }

  async fork(runId: string, seq: number): Promise<string | null> {
    return whyNotFork(await this.factsOf(runId), seq);
  }

  async restore(runId: string, seq: number): Promise<string | null> {
    const facts = await this.factsOf(runId);
    const [effects, restores] = await Promise.all([
      this.deps.store.listEffects(runId),
      this.deps.store.listRestores(runId),
    ]);
    return whyNotRestore(facts, { seq, lastChangeSeq: lastJournaledSeq(effects, restores) });
  }

  async bringBack(runId: string): Promise<string | null> {
    return whyNotBringBack(await this.factsOf(runId));
  }

  async undoRestore(runId: string, record: RestoreRecord): Promise<string | null> {
    return whyNotUndoRestore(await this.factsOf(runId), record);
  }

  /** Throws the reason when `reason` is one (for callers that refuse with an error). */
  static refuse(reason: string | null): void {
    if (reason) throw new ActionRefusedError(reason);
  }

  private async factsOf(runId: string): Promise<RunFacts> {
    const run = await this.deps.store.getRun(runId);
    if (!run) throw new ActionRefusedError(`there is no run ${runId} in this workspace`);
    return this.facts(run);
  }
}
