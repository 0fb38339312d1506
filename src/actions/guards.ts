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
  /** It lives in the shared store (workers can take it). Unknown: not asked. */
  shared?: boolean;
  /** Handed to the workers and not asked back: what the hand-off says now. */
  withWorkers?: { holder: Pick<OwnerInfo, 'label'> | null; status: 'ready' | 'waiting' | 'stopped' } | null;
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

const RESTRICTED_DECIDE =
  'Restricted mode: this workspace is not trusted, so write and command tools are disabled. Trust the workspace to decide.';

/** Why this window may not write the run's records (send, undo a condense), or null. */
export function whyReadOnly(f: RunFacts): string | null {
  if (f.trusted === false) return RESTRICTED_DECIDE;
  if (f.active) return null; // executing here: this window holds it
  if (f.withWorkers)
    return 'This run is with the workers: decide its calls here, and bring it back here to send it a message.';
  return held(f);
}

/**
 * Deciding approvals needs a run this window may write — or one with the workers: the decision is
 * posted for the worker to record (whichever holds it).
 */
export function whyNotDecide(f: RunFacts): string | null {
  if (f.trusted === false) return RESTRICTED_DECIDE;
  if (f.active || f.withWorkers) return null;
  return held(f);
}

/** Why *Continue in background* does not apply: hand the run to the workers of the shared store. */
export function whyNotHandOff(f: RunFacts): string | null {
  if (f.shared === false)
    return 'Only a run of the shared store can continue in the background: this one is stored on this machine.';
  if (isTerminalState(f.run.state)) return 'The run has finished: there is nothing to continue in the background.';
  if (f.withWorkers) return 'The run is already with the workers.';
  return held(f);
}

/** Why *Bring back here* does not apply: take the run from the workers and its files into this checkout. */
export function whyNotTakeBack(f: RunFacts): string | null {
  if (f.trusted === false)
    return 'Restricted mode: bringing a run back writes its files into the workspace, which an untrusted workspace does not allow. Trust the workspace first.';
  if (f.shared === false) return 'This run is stored on this machine: it never left this window.';
  if (f.active) return 'The run is executing in this window already.';
  return f.withWorkers ? null : held(f);
}

/** Where the workers have the run, for the run view's header: a sentence, or null when they do not. */
export function withWorkersNote(f: RunFacts): string | null {
  const w = f.withWorkers;
  if (!w) return null;
  if (w.holder)
    return `With the workers: ${w.holder.label} is driving it. Decide its calls here; Bring back here to work on it in this window.`;
  if (w.status === 'waiting')
    return 'With the workers: it waits for a decision. Decide here and a worker continues it.';
  if (w.status === 'stopped')
    return 'With the workers: it stopped there. Bring back here to take its files and continue it in this window.';
  return 'With the workers: it waits for a worker with a checkout of this project to take it.';
}

/**
 * Why the run's files may not be restored now. With `at` (a checkpoint and the newest one with a
 * journaled change after it, plan.ts lastJournaledSeq): also when nothing changed after it.
 */
export function whyNotRestore(f: RunFacts, at?: { seq: number; lastChangeSeq: number | null }): string | null {
  if (f.trusted === false)
    return 'Restricted mode: restoring files writes the workspace, which an untrusted workspace does not allow. Trust the workspace first.';
  if (executing(f)) return 'The run is executing: cancel it before restoring its files.';
  if (f.withWorkers) return 'The run is with the workers: bring it back here before restoring its files.';
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
  if (f.withWorkers) return 'The run is with the workers: bring it back here to resume it in this window.';
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
  /** Continue in background; absent where the store is not shared. */
  handOff?: string | null;
  /** Bring back here: offered while the run is with the workers. */
  takeBack?: string | null;
  /** Where the workers have it (withWorkersNote), or null. */
  withWorkers?: string | null;
}

export function runReasons(f: RunFacts): RunGuardReasons {
  return {
    restore: whyNotRestore(f),
    resume: whyNotResume(f),
    decide: whyNotDecide(f),
    handOff: f.shared ? whyNotHandOff(f) : 'The run is not in the shared store.',
    takeBack: f.withWorkers ? whyNotTakeBack(f) : 'The run is not with the workers.',
    withWorkers: withWorkersNote(f),
  };
}

export interface GuardDeps {
  store: Pick<CheckpointStore, 'getRun' | 'owner' | 'listEffects' | 'listRestores' | 'isShared'>;
  isActive(runId: string): boolean;
  /** This window (a run it holds is not "held by another window"). */
  owner: Pick<OwnerInfo, 'owner_id'>;
  /** The workspace is trusted (VS Code's workspace trust); always true outside VS Code. */
  trusted(): boolean;
  /** The run's hand-off to the workers as last pushed (actions/background.ts), if any. */
  withWorkers?(runId: string): RunFacts['withWorkers'];
}

/** The guards over the run as it is now: the store's summary and lease holder, the runner, trust. */
export class RunGuards {
  constructor(private readonly deps: GuardDeps) {}

  /** Everything the guards know of a run now. */
  async facts(run: RunSummary): Promise<RunFacts> {
    const active = this.deps.isActive(run.run_id);
    const holder = active ? undefined : await this.deps.store.owner(run.run_id);
    const shared = this.deps.store.isShared(run.run_id);
    return {
      run,
      active,
      trusted: this.deps.trusted(),
      heldBy: holder && holder.owner_id !== this.deps.owner.owner_id ? holder : null,
      shared,
      withWorkers: (shared && this.deps.withWorkers?.(run.run_id)) || null,
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

  async handOff(runId: string): Promise<string | null> {
    return whyNotHandOff(await this.factsOf(runId));
  }

  async takeBack(runId: string): Promise<string | null> {
    return whyNotTakeBack(await this.factsOf(runId));
  }

  /** The run view's banner: what hides its decision controls (a run with the workers is decided here). */
  async viewReadOnly(run: RunSummary): Promise<string | null> {
    return whyNotDecide(await this.facts(run));
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
