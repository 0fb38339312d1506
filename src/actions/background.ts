// The runs of this project that the workers have, as this window knows them: the hand-offs (who
// holds each, whether it waits or stopped) kept current by the shared store's change feed, never
// polled. Every change the feed names is followed in the store (`follow`: the run's new records, so
// the Runs view and the run view show a worker's steps as they are written), and a run of the
// workers that starts waiting for a decision or stops is said once, with what the user can do next.
// vscode-free: the window gives it the workers of its shared store and its notices.
import { Emitter } from '../common/emitter';
import { errorMessage } from '../common/errors';
import { isTerminalState, type DecidedBy, type RunSummary } from '../store/api/schema';
import type { CheckpointStore, Disposable } from '../store/api/types';
import type { HandOff, PostedDecision, SharedChange } from '../store/pg/workers';
import type { DecisionBody } from '../store/pg/handoffs';
import type { RunFacts } from './guards';
import type { ActionLog, Notices } from './ports';

/** The workers of the shared store, as the window's actions use them (store/pg/workers.ts SharedWorkers). */
export interface WorkersPort {
  handOff(runId: string, by: DecidedBy): Promise<HandOff>;
  bringBack(runId: string, to: DecidedBy, o?: { timeoutMs?: number }): Promise<void>;
  get(runId: string): Promise<HandOff | undefined>;
  list(): Promise<HandOff[]>;
  decide(
    runId: string,
    call: { toolCallId: string; inputHash: string },
    decision: DecisionBody,
    by: DecidedBy,
  ): Promise<PostedDecision>;
  settled(posted: PostedDecision, timeoutMs: number): Promise<PostedDecision>;
  watch(listener: (c: SharedChange) => void): Disposable;
}

export interface BackgroundDeps {
  store: Pick<CheckpointStore, 'follow' | 'getRun'>;
  notices: Notices;
  log: ActionLog;
  /** Opens the run's view (at its first waiting call when it waits). */
  open(runId: string, waiting: boolean): Promise<unknown>;
  /** The user's *Bring back here* on a run that stopped with the workers. */
  bringBack(runId: string): Promise<unknown>;
}

/** Changes of one turn of the event loop are followed together. */
const COALESCE_MS = 30;

export class BackgroundRuns implements Disposable {
  private readonly handOffs = new Map<string, HandOff>();
  /** What each run of the workers was last seen doing: a change is said to the user. */
  private readonly seen = new Map<string, { waiting: boolean; stopped: boolean }>();
  private workers: WorkersPort | null = null;
  private sub: Disposable | undefined;
  private readonly toFollow = new Set<string>();
  private readonly toRead = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private resync = false;
  private readonly changed = new Emitter<string | undefined>();
  /** A run's hand-off changed (undefined: any may have). */
  readonly onDidChange = (l: (runId: string | undefined) => void) => this.changed.on(l);
  /** Settles when what was pushed so far is followed (tests wait on it). */
  idle: Promise<void> = Promise.resolve();

  constructor(private readonly deps: BackgroundDeps) {}

  /** Starts following the workers of the shared store (again, after a reconnect: `resync`). */
  connect(workers: WorkersPort): void {
    if (this.workers === workers) return;
    this.sub?.dispose();
    this.workers = workers;
    this.sub = workers.watch((c) => this.onChange(c));
    this.resync = true;
    this.soon();
  }

  /** The workers, when the shared store is connected. */
  port(): WorkersPort | null {
    return this.workers;
  }

  /** The run's hand-off as last pushed, if the workers have it and nobody asked it back. */
  get(runId: string): HandOff | undefined {
    const h = this.handOffs.get(runId);
    return h && !h.wantedBack ? h : undefined;
  }

  /** The guards' fact (guards.ts RunFacts.withWorkers). */
  facts(runId: string): RunFacts['withWorkers'] {
    const h = this.get(runId);
    return h ? { holder: h.holder ? { label: h.holder.label } : null, status: h.status } : null;
  }

  /** The run as this window handed it off or took it back: known at once, before the feed says so. */
  set(runId: string, h: HandOff | undefined): void {
    if (h) this.handOffs.set(runId, h);
    else this.handOffs.delete(runId);
    this.changed.emit(runId);
  }

  private onChange(c: SharedChange): void {
    if (c.kind === 'resync') this.resync = true;
    else {
      this.toFollow.add(c.runId);
      if (c.kind !== 'commit') this.toRead.add(c.runId);
    }
    this.soon();
  }

  private soon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.idle = this.idle.then(() => this.flush());
    }, COALESCE_MS);
  }

  private async flush(): Promise<void> {
    const workers = this.workers;
    if (!workers) return;
    const follow = [...this.toFollow];
    const read = [...this.toRead];
    const all = this.resync;
    this.toFollow.clear();
    this.toRead.clear();
    this.resync = false;
    try {
      if (all) await this.readAll(workers);
      else for (const runId of read) await this.readOne(workers, runId);
      const ids = all ? [...new Set([...follow, ...this.handOffs.keys()])] : follow;
      await this.deps.store.follow(ids);
      for (const runId of ids) await this.look(runId, all);
    } catch (err) {
      this.deps.log.warn(`following the workers' runs: ${errorMessage(err)}`);
    }
  }

  private async readAll(workers: WorkersPort): Promise<void> {
    const list = await workers.list();
    this.handOffs.clear();
    for (const h of list) this.handOffs.set(h.runId, h);
    this.changed.emit(undefined);
  }

  private async readOne(workers: WorkersPort, runId: string): Promise<void> {
    const before = this.handOffs.get(runId);
    const now = await workers.get(runId);
    if (now) this.handOffs.set(runId, now);
    else this.handOffs.delete(runId);
    if (!same(before, now)) this.changed.emit(runId);
  }

  /**
   * A run of the workers that starts waiting for a decision, or stops: said once, with what to do
   * next. `quiet`: only noted (what was so before this window looked is no news).
   */
  private async look(runId: string, quiet: boolean): Promise<void> {
    const h = this.get(runId);
    if (!h) return void this.seen.delete(runId);
    const run = await this.deps.store.getRun(runId).catch(() => undefined);
    if (!run) return;
    const now = { waiting: run.pending_approvals > 0, stopped: isTerminalState(run.state) || h.status === 'stopped' };
    const was = this.seen.get(runId);
    this.seen.set(runId, now);
    if (quiet || (was?.waiting === now.waiting && was?.stopped === now.stopped)) return;
    if (now.waiting && !was?.waiting) void this.tell(h, run, 'waiting');
    else if (now.stopped && !was?.stopped) void this.tell(h, run, 'stopped');
  }

  private async tell(h: HandOff, run: RunSummary, what: 'waiting' | 'stopped'): Promise<void> {
    const title = `“${run.title}”`;
    const { notices } = this.deps;
    if (what === 'waiting') {
      const pick = await notices.info(
        `Agent Waypoints: ${title} waits for your decision (in the background).`,
        'Open run',
      );
      if (pick) await this.deps.open(h.runId, true);
      return;
    }
    const how =
      run.state === 'completed'
        ? 'finished in the background'
        : `stopped in the background: ${h.detail ?? run.state_detail ?? run.state}`;
    const pick = await notices.info(`Agent Waypoints: ${title} ${how}.`, 'Open run', 'Bring back here');
    if (pick === 'Open run') await this.deps.open(h.runId, false);
    if (pick === 'Bring back here') await this.deps.bringBack(h.runId);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.sub?.dispose();
    this.changed.dispose();
  }
}

function same(a: HandOff | undefined, b: HandOff | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.status === b.status &&
    a.detail === b.detail &&
    a.holder?.owner_id === b.holder?.owner_id &&
    !!a.wantedBack === !!b.wantedBack &&
    a.handedMs === b.handedMs
  );
}
