// What a backend must provide under the shared store core (store.ts): durable commits, run meta,
// blobs, the index cache and locks. The core owns every semantic (validation, seqs, durability
// classes, events); an engine owns bytes. memory/store.ts and disk/engine.ts are the two engines.
import type { RunMeta } from '../api/schema';
import type { CommitBody, CommitOp, IndexEntry, TailWitness } from './storedSchema';
import type { CompactedHistory } from './records';
import type { PointParts } from './runModel';
import type { CorruptionReport, OwnerInfo, RunEnd } from '../api/types';

/** Receives a run being loaded. `commit` throws to reject a commit (the chain stops before it). */
export interface LoadSink {
  meta(meta: RunMeta): void;
  /** `file`: the commit was read from disk with its records only skeleton-checked (RunModel.verified). */
  commit(body: CommitBody, file?: string): void;
  /**
   * A compacted history (a disk snapshot of version 7, after its other ops came as a commit): its
   * older records are read when first asked for (RunModel.adoptCompacted). Throws as `commit` does.
   */
  compacted(history: CompactedHistory, file: string): void;
  /**
   * A run read from its resume point (Engine.loadFromPoint), before the commits after it: what it
   * left on disk is read when asked for (RunModel.fromPoint). Throws as `commit` does.
   */
  point?(parts: PointParts, file: string): void;
}

/** Where a resume point stands in an engine's log (opaque to the core). */
export type PointPosition = unknown;

export interface LoadResult {
  /** The report when the chain was cut short or a file was bad (null: everything verified). */
  report: CorruptionReport | null;
  /** Commits applied (the run's durable commit count). */
  commits: number;
  /** The run's tail witness as read (null: none, or unreadable). */
  witness: TailWitness | null;
  /** Redundant things found missing and rebuilt (for the log, not an alarm). */
  notices: Notice[];
}

/** Something redundant found missing and rebuilt: logged, never shown as corruption. */
export interface Notice {
  file: string;
  message: string;
}

export interface LoadOptions {
  /** This instance holds the run's lock: bad files may be moved to quarantine, torn tails cut off. */
  repair: boolean;
  /** The index's durable commit count (a shorter chain = lost files). */
  expectCommits: number;
  /** The run's meta as the index knows it: the last resort when no file of the run holds it any more. */
  knownMeta?: RunMeta;
}

export interface EngineLock {
  readonly lost: boolean;
  release(): Promise<void>;
}

export interface IndexState {
  entries: IndexEntry[];
  /** Run ids present in storage (a run missing from the index is loaded to rebuild its entry). */
  present: string[];
  reports: CorruptionReport[];
  /** Redundant things found missing and rebuilt (for the log, not an alarm). */
  notices: Notice[];
  /** false: index.json is from a newer version; it is left untouched (the index lives in memory only). */
  writable: boolean;
}

/**
 * The part of the index a store lists from before it has read the whole (Engine.openIndexHead): the
 * newest entries and every unfinished run's. Every entry at or newer than `cutoff` is in it.
 */
export interface IndexHead {
  entries: IndexEntry[];
  /** Key (updated_ms, run_id) of the oldest of the newest entries; null: the head is the whole index. */
  cutoff: readonly [number, string] | null;
  /** Runs present without a usable entry: read to rebuild theirs, as the full opening does. */
  unindexed: string[];
  /**
   * The unfinished runs, when the engine reads them apart, after the newest: the store is listable
   * with the newest alone (the Runs view's first page), and a listing of unfinished runs waits for these.
   */
  unfinished?: Promise<Pick<IndexHead, 'entries' | 'unindexed'>>;
}

export interface Engine {
  /** Where the engine reports corruption it finds outside a run load (blobs, locks). */
  setReporter(fn: (r: CorruptionReport) => void): void;
  openIndex(): Promise<IndexState>;
  /**
   * The head of the index (the `newest` entries and every unfinished run's) when the engine can give
   * it without reading every entry, and knows it current; undefined: the store opens with openIndex.
   * Either way openIndex follows when the store first needs the whole index.
   */
  openIndexHead?(newest: number): Promise<IndexHead | undefined>;
  /** Run ids present in storage now (another window may have added or removed some). */
  listRunIds(): Promise<string[]>;
  /** Number of the run's newest commit (one directory listing, nothing read); undefined: no such run. */
  lastCommit(runId: string): Promise<number | undefined>;
  /** Written behind by the core; the index is a cache of what the runs hold. */
  saveIndex(entries: IndexEntry[]): Promise<void>;

  /** Creates the run's storage, takes its lock and writes run.json durably. EEXIST → `exists`. */
  createRun(meta: RunMeta, owner: OwnerInfo): Promise<EngineLock | 'exists'>;
  /**
   * Loads the run through `sink`. `repair`: this instance may move bad files to quarantine (it holds
   * the run, or nobody does). `expectCommits`: the index's durable count (a shorter chain = lost files).
   * undefined: no such run.
   */
  loadRun(runId: string, sink: LoadSink, opts: LoadOptions): Promise<LoadResult | undefined>;
  /** Commits written since the last load/loadMore (another window's progress), or 'reload'. */
  loadMore(runId: string, sink: LoadSink): Promise<number | 'reload'>;
  /**
   * Writes the next commit (numbers are the engine's); `meta` goes into the first commit. Durably,
   * unless `sync` is false: then it is written (a crash of the process keeps it) and made durable by
   * the run's next synced commit, which also makes everything before it durable. `meanwhile`: called
   * once the commit is handed to the disk, while its barrier is in flight (an engine that has no such
   * moment need not call it); it must not throw.
   */
  writeCommit(
    runId: string,
    ops: readonly CommitOp[],
    meta: RunMeta | undefined,
    sync?: boolean,
    meanwhile?: () => void,
  ): Promise<void>;
  /** Makes every commit written so far durable (after write-behind ones), without writing a commit. */
  syncCommits(runId: string): Promise<void>;
  /**
   * Records what the run holds after an acknowledged commit, outside its log, so a lost tail is seen
   * (disk/witness.ts). Never fails the caller. `reset`: rewrite it whole (after a load that found it stale or damaged).
   */
  writeWitness(runId: string, witness: TailWitness, opts?: { reset: boolean }): Promise<void>;
  /**
   * Gets what writeWitness will write for this very witness object ready ahead (while a barrier is in
   * flight); writeWitness with it then only writes. Never fails the caller.
   */
  prepareWitness?(runId: string, witness: TailWitness): void;
  /** The run's compacted part (loaded while held) was read from its spare copy after damage: compact() rewrites it before its next write. */
  needsRewrite(runId: string): boolean;
  /** Commits written since the last compaction (`singles`) and how many the compacted part covers. */
  logShape(runId: string): { singles: number; covered: number };
  /**
   * Replaces the whole log by one commit holding `ops` (crash-safe at every point). `end`: the run's
   * end as of its last commit (end.ts), kept beside it when the engine can give it back (readEnd).
   */
  compact(runId: string, ops: readonly CommitOp[], meta: RunMeta, end?: RunEnd): Promise<void>;
  /**
   * compact() while the run's appends go on: the log as of its last commit when this is called
   * (taken before anything awaits; `ops` is the run then), its heavy part beside the appends, and
   * only what must not overlap an append inside `critical` (the run's commit queue, between commits).
   * Engines without it are compacted between commits whole.
   */
  compactBeside?(
    runId: string,
    ops: readonly CommitOp[],
    meta: RunMeta,
    end: RunEnd | undefined,
    critical: (fn: () => Promise<void>) => Promise<void>,
  ): Promise<void>;
  /**
   * The end the last compaction kept, unchecked, when no commit has followed it — read without the
   * run's log; undefined otherwise (or when the engine keeps none).
   */
  readEnd?(runId: string): Promise<unknown>;
  /**
   * Whether the held run's log would gain from room written ahead of its appends now (reserve), so
   * its next barriers write data alone; engines without such room leave both out.
   */
  needsRoom?(runId: string): boolean;
  /** Writes that room (the store calls it between commits, while the runner waits for the model). */
  reserve?(runId: string): Promise<void>;
  deleteRun(runId: string): Promise<void>;
  storageBytes(runId: string): Promise<number>;

  /**
   * Resume points (disk/resumePoint.ts), for engines that keep them. Due: the held run's log has grown
   * enough since its last point. markResumePoint: a point after the last commit, the commits after it
   * written so they can be read from it alone (synchronous: between two commits); undefined: none now.
   * writeResumePoint: the point and what the run holds there (`parts`), off the step's path.
   */
  resumePointDue?(runId: string): boolean;
  markResumePoint?(runId: string): PointPosition | undefined;
  writeResumePoint?(runId: string, at: PointPosition, parts: PointParts): Promise<void>;
  /**
   * Loads the run from its resume point and the commits after it (`sink.point`, then `sink.commit`
   * each), as loadRun does otherwise; undefined when there is none that fits the files (then loadRun).
   */
  loadFromPoint?(runId: string, sink: LoadSink, opts: LoadOptions): Promise<LoadResult | undefined>;
  /** Reads the run whole without changing what this instance writes (a run resumed from a point, made whole). */
  readWhole?(runId: string, sink: LoadSink): Promise<LoadResult | undefined>;
  /** Removes the held run's resume point (its next load reads it whole, and judges what is wrong). */
  dropResumePoint?(runId: string): Promise<void>;

  /** Bytes are UTF-8 text: an engine that keeps text decodes them. */
  putBlob(runId: string, hash: string, content: string | Uint8Array): Promise<void>;
  getBlob(runId: string, hash: string, repair: boolean): Promise<string>;

  lock(runId: string, owner: OwnerInfo): Promise<EngineLock>;
  /**
   * Proves that this instance holds the run's lock at this moment, before a side effect starts:
   * RunNotOwnedError when another took it over, and a failure (never a guess) when that cannot be
   * known now. Local engines answer from their lock; the shared one asks the database.
   */
  assertOwner(runId: string): Promise<void>;
  /** Another machine can take a run over (the shared store), not only another window of this one. */
  readonly shared?: boolean;
  /** The live holder, if any (stale locks do not count). */
  holder(runId: string): Promise<OwnerInfo | undefined>;

  close(): Promise<void>;
}
