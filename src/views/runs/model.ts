// The runs tree's model: run summaries (from the store's index, cheap) and, per expanded run,
// pages of its checkpoints. Updated from store events; never polls. vscode-free.
import { Emitter } from '../../runner/events';
import type { CheckpointRecord, RestoreRecord, RunSummary } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';

export type RunGroup = 'attention' | 'running' | 'finished' | 'failed';
export const GROUPS: readonly RunGroup[] = ['attention', 'running', 'finished', 'failed'];
export const PAGE_SIZE = 50;

/** Which group a run belongs to: what it needs from the user first. */
export function groupOf(run: RunSummary): RunGroup {
  if (run.pending_approvals > 0) return 'attention';
  switch (run.state) {
    case 'running':
      return 'running';
    case 'completed':
      return 'finished';
    case 'failed':
      return 'failed';
    default:
      return 'attention'; // awaiting_approval, interrupted, paused_*
  }
}

interface CheckpointPage {
  records: CheckpointRecord[];
  exhausted: boolean;
}

export class RunsModel {
  private readonly runs = new Map<string, RunSummary>();
  private readonly pages = new Map<string, CheckpointPage>();
  private readonly restoreLists = new Map<string, RestoreRecord[]>();
  private loading: Promise<void> | undefined;
  private readonly changed = new Emitter<string | undefined>();
  private readonly pendingChanges = new Set<string | undefined>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscription: { dispose(): void };

  /** Fires with a run id (that run changed) or undefined (the list changed); coalesced. */
  readonly onDidChange = (l: (runId: string | undefined) => void) => this.changed.on(l);

  constructor(private readonly store: CheckpointStore) {
    this.subscription = store.onEvent((e) => {
      if (e.kind === 'checkpoint') {
        const page = this.pages.get(e.run_id);
        if (page && !page.records.some((r) => r.seq === e.record.seq)) page.records.unshift(e.record);
        void this.refreshRun(e.run_id);
      } else if (e.kind === 'run-created' || e.kind === 'run-updated' || e.kind === 'approval') {
        void this.refreshRun(e.run_id);
      } else if (e.kind === 'restore') {
        this.restoreLists.delete(e.run_id);
        this.fire(e.run_id);
      } else if (e.kind === 'run-deleted') {
        this.runs.delete(e.run_id);
        this.pages.delete(e.run_id);
        this.fire(undefined);
      }
    });
  }

  /** Loads every run summary once (from the index: no run's history is read). */
  load(): Promise<void> {
    this.loading ??= (async () => {
      let cursor: string | undefined;
      do {
        const page = await this.store.listRuns({ limit: 500, ...(cursor ? { cursor } : {}) });
        for (const r of page.runs) this.runs.set(r.run_id, r);
        cursor = page.cursor;
      } while (cursor);
    })();
    return this.loading;
  }

  /** Forget everything and read again (after an import, or on the Refresh button). */
  async reload(): Promise<void> {
    this.runs.clear();
    this.pages.clear();
    this.restoreLists.clear();
    this.loading = undefined;
    await this.load();
    this.fire(undefined);
  }

  /** Bytes the run takes on disk (its log, blobs and meta). */
  storageBytes(runId: string): Promise<number> {
    return this.store.storageBytes(runId);
  }

  get(runId: string): RunSummary | undefined {
    return this.runs.get(runId);
  }

  all(): RunSummary[] {
    return [...this.runs.values()].sort((a, b) => b.updated_ms - a.updated_ms);
  }

  inGroup(group: RunGroup): RunSummary[] {
    return this.all().filter((r) => groupOf(r) === group);
  }

  pendingApprovals(): number {
    let n = 0;
    for (const r of this.runs.values()) n += r.pending_approvals;
    return n;
  }

  /** The loaded checkpoints of a run (newest first), loading the first page on demand. */
  async checkpoints(runId: string): Promise<CheckpointPage> {
    let page = this.pages.get(runId);
    if (!page) {
      const records = await this.store.list(runId, { limit: PAGE_SIZE });
      page = { records, exhausted: records.length < PAGE_SIZE };
      this.pages.set(runId, page);
    }
    return page;
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

  async loadMore(runId: string): Promise<void> {
    const page = await this.checkpoints(runId);
    const oldest = page.records.at(-1)?.seq;
    if (page.exhausted || oldest === undefined) return;
    const more = await this.store.list(runId, { limit: PAGE_SIZE, before: oldest });
    page.records.push(...more);
    page.exhausted = more.length < PAGE_SIZE;
    this.fire(runId);
  }

  private async refreshRun(runId: string): Promise<void> {
    const before = this.runs.get(runId);
    const after = await this.store.getRun(runId).catch(() => undefined);
    if (after) this.runs.set(runId, after);
    else this.runs.delete(runId);
    // A run that moved between groups changes the list; otherwise only its own node.
    this.fire(!before || !after || groupOf(before) !== groupOf(after) ? undefined : runId);
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
    this.changed.dispose();
  }
}
