// The Runs tree's model (RunsTreeModel; the store's RunModel, one run in memory, is another
// thing): run summaries (from the store's index, cheap: the newest page and every unfinished run)
// grouped into threads and, per expanded run, pages of its checkpoints in whole steps. Updated from store events; never polls. vscode-free.
import { Emitter } from '../../runner/events';
import {
  isTerminalState,
  RUN_STATES,
  type Approval,
  type CheckpointRecord,
  type RestoreRecord,
  type RunSummary,
} from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import type { RunFacts } from '../../actions/guards';
import { describeSteps, endOfSteps, groupBySteps, type StepView } from './steps';
import { groupThreads, type RunGroup, type Thread } from './threads';

export { GROUPS, groupOf, type RunGroup } from './threads';

/** Runs per page of the tree (the first is read when the view opens; "Load more runs…" reads the next). */
export const RUN_PAGE = 500;
/** The states a run is listed under "Needs attention" or "Running" in: every such run is loaded. */
const UNFINISHED = RUN_STATES.filter((s) => !isTerminalState(s));

/** Steps per page of a run's node ("Load more…" fetches the next). */
export const STEP_PAGE = 50;
/** Records per read while a page is gathered (a step is about five). */
const READ_CHUNK = 200;

/** The loaded checkpoints of a run: newest first, whole steps only. */
interface CheckpointPage {
  records: CheckpointRecord[];
  exhausted: boolean;
}

export interface StepPage {
  /** Newest first. */
  steps: StepView[];
  exhausted: boolean;
}

export class RunsTreeModel {
  private readonly runs = new Map<string, RunSummary>();
  private readonly pages = new Map<string, CheckpointPage>();
  private readonly restoreLists = new Map<string, RestoreRecord[]>();
  private readonly approvalMaps = new Map<string, Map<string, Approval>>();
  /** Deletions seen, and when each run was deleted (in that count): a read begun before a run's deletion must not bring it back. */
  private deletes = 0;
  private readonly deletedAt = new Map<string, number>();
  private threadList: Thread[] | undefined;
  private loading: { first: Promise<void>; all: Promise<void> } | undefined;
  /** Where the next page of older runs starts (undefined: every run is loaded). */
  private olderRuns: string | undefined;
  private loadingMore: Promise<void> | undefined;
  private readonly changed = new Emitter<string | undefined>();
  private readonly pendingChanges = new Set<string | undefined>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscription: { dispose(): void };
  private readonly workersSub: { dispose(): void } | undefined;

  /** Fires with a run id (that run changed) or undefined (the list changed); coalesced. */
  readonly onDidChange = (l: (runId: string | undefined) => void) => this.changed.on(l);

  constructor(
    private readonly store: CheckpointStore,
    /** The runs the workers have (actions/background.ts), pushed: a hand-off, a holder, a let-go. */
    private readonly workers?: {
      facts(runId: string): RunFacts['withWorkers'];
      onDidChange(l: (runId: string | undefined) => void): { dispose(): void };
    },
  ) {
    this.workersSub = workers?.onDidChange((runId) => this.fire(runId));
    this.subscription = store.onEvent((e) => {
      if (e.kind === 'checkpoint') {
        const page = this.pages.get(e.run_id);
        if (page && !page.records.some((r) => r.seq === e.record.seq)) page.records.unshift(e.record);
        void this.refreshRun(e.run_id);
      } else if (e.kind === 'approval') {
        this.approvalMaps.delete(e.run_id);
        void this.refreshRun(e.run_id);
      } else if (e.kind === 'run-created' || e.kind === 'run-updated') {
        void this.refreshRun(e.run_id);
      } else if (e.kind === 'restore') {
        this.restoreLists.delete(e.run_id);
        this.fire(e.run_id);
      } else if (e.kind === 'run-deleted') {
        this.deletedAt.set(e.run_id, ++this.deletes);
        this.runs.delete(e.run_id);
        this.threadList = undefined;
        this.pages.delete(e.run_id);
        this.approvalMaps.delete(e.run_id);
        this.fire(undefined);
      }
    });
  }

  /**
   * Loads the newest page of run summaries and every unfinished run's, however old (what "Needs
   * attention" and startup's resume offer show), once: from the store's index, never a run's history,
   * and never all of a store of thousands of runs. Older finished runs come a page at a time (loadMoreRuns).
   */
  load(): Promise<void> {
    return this.start().all;
  }

  /**
   * The newest page alone: what the tree shows first. The older unfinished runs follow (load), and
   * the tree is told when they add any (a shared store reads them with a query of their own).
   */
  loadFirstPage(): Promise<void> {
    return this.start().first;
  }

  private start(): { first: Promise<void>; all: Promise<void> } {
    if (this.loading) return this.loading;
    const since = this.deletes;
    const first = (async () => {
      const page = await this.store.listRuns({ limit: RUN_PAGE });
      this.add(page.runs, since);
      this.olderRuns = page.cursor;
    })();
    const all = first.then(async () => {
      const before = this.runs.size;
      let cursor: string | undefined;
      do {
        const page = await this.store.listRuns({ limit: 1000, states: UNFINISHED, ...(cursor ? { cursor } : {}) });
        this.add(page.runs, since);
        cursor = page.cursor;
      } while (cursor);
      if (this.runs.size !== before) this.fire(undefined);
    });
    all.catch(() => undefined); // met by whoever awaits load(); the first page's callers need not
    return (this.loading = { first, all });
  }

  /** Older runs are left to read (the tree offers "Load more runs…"). */
  get hasMoreRuns(): boolean {
    return this.olderRuns !== undefined;
  }

  /** Reads the next page of older runs. */
  loadMoreRuns(): Promise<void> {
    this.loadingMore ??= (async () => {
      await this.load();
      const since = this.deletes;
      const cursor = this.olderRuns;
      if (cursor === undefined) return;
      const page = await this.store.listRuns({ limit: RUN_PAGE, cursor });
      this.add(page.runs, since);
      this.olderRuns = page.cursor;
      this.fire(undefined);
    })().finally(() => (this.loadingMore = undefined));
    return this.loadingMore;
  }

  private add(runs: readonly RunSummary[], since: number): void {
    for (const r of runs) if (!this.deletedSince(r.run_id, since)) this.runs.set(r.run_id, r);
    this.threadList = undefined;
  }

  /** Forget everything and read again (after an import, or on the Refresh button). */
  async reload(): Promise<void> {
    this.runs.clear();
    this.threadList = undefined;
    this.pages.clear();
    this.restoreLists.clear();
    this.approvalMaps.clear();
    this.loading = undefined;
    this.olderRuns = undefined;
    await this.load();
    this.fire(undefined);
  }

  /** Bytes the run takes on disk (its log, blobs and meta). */
  storageBytes(runId: string): Promise<number> {
    return this.store.storageBytes(runId);
  }

  /** The run's hand-off to the workers, if they have it. */
  withWorkers(runId: string): RunFacts['withWorkers'] {
    return this.workers?.facts(runId) ?? null;
  }

  /** The run lives in the shared store (it can be handed to the workers). */
  isShared(runId: string): boolean {
    return this.store.isShared(runId);
  }

  get(runId: string): RunSummary | undefined {
    return this.runs.get(runId);
  }

  /**
   * The run's summary: as loaded, else from the store - a finished run older than the pages read, or
   * one whose change has not reached the tree yet (a command handed its id right after it was made).
   */
  async find(runId: string): Promise<RunSummary | undefined> {
    return this.runs.get(runId) ?? (await this.store.getRun(runId).catch(() => undefined));
  }

  /** The runs loaded: every unfinished one, finished ones as far as the pages read reach. */
  all(): RunSummary[] {
    return [...this.runs.values()].sort((a, b) => b.updated_ms - a.updated_ms);
  }

  /** Every thread (a run and its follow-up turns), most recently updated first. */
  threads(): Thread[] {
    this.threadList ??= groupThreads(this.runs.values());
    return this.threadList;
  }

  thread(threadId: string): Thread | undefined {
    return this.threads().find((t) => t.id === threadId);
  }

  threadsIn(group: RunGroup): Thread[] {
    return this.threads().filter((t) => t.group === group);
  }

  pendingApprovals(): number {
    let n = 0;
    for (const r of this.runs.values()) n += r.pending_approvals;
    return n;
  }

  /**
   * The loaded steps of a run (newest first), reading the first page on demand: whole steps, a
   * page at a time, so a long run's node opens without reading its whole history.
   */
  async steps(runId: string): Promise<StepPage> {
    let page = this.pages.get(runId);
    if (!page) {
      page = await this.readSteps(runId, undefined);
      this.pages.set(runId, page);
    }
    const run = this.runs.get(runId) ?? (await this.store.getRun(runId));
    if (!run) return { steps: [], exhausted: true };
    // A checkpoint written while the first page was read came before the page existed: fetch what the summary says is newer.
    const top = () => page.records[0]?.seq ?? 0;
    if (run.last_seq > top()) {
      const newer = await this.store.list(runId, { limit: run.last_seq - top() });
      page.records.unshift(...newer.filter((r) => r.seq > top()));
    }
    const steps = describeSteps(groupBySteps(page.records), { run, approvals: await this.approvals(runId) });
    return { steps, exhausted: page.exhausted };
  }

  private async approvals(runId: string): Promise<Map<string, Approval>> {
    let map = this.approvalMaps.get(runId);
    if (!map) {
      map = new Map((await this.store.listApprovals(runId)).map((a) => [a.tool_call_id, a]));
      this.approvalMaps.set(runId, map);
    }
    return map;
  }

  /** The next STEP_PAGE whole steps older than `before`: read in chunks until one step more shows up (or the run's start). */
  private async readSteps(runId: string, before: number | undefined): Promise<CheckpointPage> {
    const read: CheckpointRecord[] = [];
    let cursor = before;
    for (;;) {
      const chunk = await this.store.list(runId, {
        limit: READ_CHUNK,
        ...(cursor !== undefined ? { before: cursor } : {}),
      });
      read.push(...chunk);
      const end = endOfSteps(read, STEP_PAGE);
      if (end >= 0) return { records: read.slice(0, end), exhausted: false };
      if (chunk.length < READ_CHUNK) return { records: read, exhausted: true };
      cursor = chunk[chunk.length - 1]!.seq;
    }
  }

  /** The run's file restores, newest first (shown above its checkpoints). */
  async restores(runId: string): Promise<RestoreRecord[]> {
    let list = this.restoreLists.get(runId);
    if (!list) {
      list = (await this.store.listRestores(runId)).reverse();
      this.restoreLists.set(runId, list);
    }
    return list;
  }

  /** Loads the run's next page of (older) steps. */
  async loadMore(runId: string): Promise<void> {
    await this.steps(runId);
    const page = this.pages.get(runId)!;
    const oldest = page.records.at(-1)?.seq;
    if (page.exhausted || oldest === undefined) return;
    const more = await this.readSteps(runId, oldest);
    page.records.push(...more.records);
    page.exhausted = more.exhausted;
    this.fire(runId);
  }

  private async refreshRun(runId: string): Promise<void> {
    const known = this.runs.get(runId);
    const before = known && this.thread(known.thread_id);
    const since = this.deletes;
    const after = await this.store.getRun(runId).catch(() => undefined);
    if (this.deletedSince(runId, since)) return; // deleted meanwhile: what was read is gone
    if (after) this.runs.set(runId, after);
    else this.runs.delete(runId);
    this.threadList = undefined;
    // A new run (a new thread, or a turn joining one) or a thread that moved between groups changes the list; otherwise only its own nodes.
    const now = after && this.thread(after.thread_id);
    this.fire(!before || !now || before.group !== now.group ? undefined : runId);
  }

  /** Whether `runId` was deleted after the count stood at `since` (a read begun then may hold it). */
  private deletedSince(runId: string, since: number): boolean {
    return (this.deletedAt.get(runId) ?? 0) > since;
  }

  private fire(runId: string | undefined): void {
    this.pendingChanges.add(runId);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const all = this.pendingChanges.has(undefined);
      const ids = [...this.pendingChanges];
      this.pendingChanges.clear();
      if (all) this.changed.emit(undefined);
      else for (const id of ids) this.changed.emit(id);
    }, 50);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.subscription.dispose();
    this.workersSub?.dispose();
    this.changed.dispose();
  }
}
