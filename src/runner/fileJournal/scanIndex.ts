// What the last command scan saw, kept between commands: per folder its stat, rules and files
// (scanTree.ts). The first scan walks the tree (scanWalk.ts); later ones refresh it
// (scanRefresh.ts) — before a command statting what the watcher names, after it every file. The
// index is rebuilt when it cannot be refreshed: never complete (a cap was hit), the exclude
// settings or the watcher's exclusions changed, the root moved, or an ignore file above the root
// changed. One scan at a time; a snapshot is a copy of the folder map, so a later scan never
// changes one already handed out.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../common/errors';
import type { Disposable } from '../../common/disposable';
import { toIgnoreGlobs } from '../tools/finder/excludes';
import { IgnoreRules } from '../tools/finder/gitignore';
import { IgnoreChain, loadAncestors } from '../tools/finder/ignoreChain';
import { ALWAYS_SKIPPED, DEFAULT_SCAN_MAX_FILES, DEFAULT_SCAN_MAX_MS, type ScanOptions } from './scan';
import { refreshTree } from './scanRefresh';
import { type DirNode, ScanFiles } from './scanTree';
import { anyControlKey, type StopReason, WalkContext, walkTree } from './scanWalk';
import { StatPool, type StatPoolOptions } from './statPool';
import { ChangeHints, type WorkspaceWatcher } from './watcher';

/** What one scan did (the bench and the tests read it; the journal does not). */
export interface ScanWork {
  /** 'walk': the tree was walked (first scan, or the index could not be refreshed); 'refresh': only what moved was read. */
  kind: 'walk' | 'refresh';
  /** Why a walk (null for a refresh). */
  why: string | null;
  /** Whether the watcher's hints chose the files statted (else every file was). */
  narrowed: boolean;
  folders: number;
  statted: number;
  reread: number;
  walked: number;
  fingerprinted: number;
  waitedMs: number;
  /** Files statted ahead on two threads (statPool.ts), and how many of those by the worker. */
  ahead: number;
  helped: number;
}

export interface Scan {
  /** Every file seen, by '/'-separated path relative to the root. */
  files: ScanFiles;
  /** Folders holding a git repository (a .git folder or file), relative; '' is the root. Nested ones too. */
  repos: string[];
  complete: boolean;
  /** Why the scan stopped early, or what it could not see, for the user. */
  note: string | null;
  /**
   * Folders ('' = all) whose files this scan listed under rules that changed since the last scan
   * (an ignore file, .git, or the exclude settings): a file newly seen there may have existed, hidden.
   */
  rulesChanged: string[];
  ms: number;
  work: ScanWork;
}

export interface WorkspaceIndexOptions {
  root: string;
  /** The host's file watcher; without one every file is statted before a command as well. */
  watcher?: WorkspaceWatcher;
  /** When every file is statted, on how many files a second thread helps (statPool.ts; tests lower it). */
  statPool?: StatPoolOptions;
}

interface IndexState {
  realRoot: string;
  /** Exclude globs and the watcher's exclusions the index was built with. */
  rulesKey: string;
  ancestors: IgnoreChain;
  ancestorsKey: string;
  dirs: Map<string, DirNode>;
  complete: boolean;
}

export class WorkspaceIndex implements Disposable {
  private state: IndexState | null = null;
  private readonly hints: ChangeHints;
  private queue: Promise<unknown> = Promise.resolve();
  /** A second thread for statting every file (a workspace of PARALLEL_MIN files or more). */
  private readonly pool: StatPool;

  constructor(private readonly opts: WorkspaceIndexOptions) {
    this.hints = new ChangeHints(opts.root, opts.watcher);
    this.pool = new StatPool(opts.statPool);
  }

  get root(): string {
    return this.opts.root;
  }

  /** Before a command: folders statted, files statted where the watcher saw a change (all without one). */
  before(opts: ScanOptions = {}): Promise<Scan> {
    return this.serially(() => this.scan(false, opts));
  }

  /** After a command: every folder and every file statted — the proof of what the command changed. */
  after(opts: ScanOptions = {}): Promise<Scan> {
    return this.serially(() => this.scan(true, opts));
  }

  /** Resolves once the second thread that shares the stats is up (false: there is none). Tests, the bench. */
  sharedStats(): Promise<boolean> {
    return this.pool.whenReady();
  }

  dispose(): void {
    this.hints.dispose();
    this.pool.dispose();
    this.state = null;
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async scan(statAll: boolean, opts: ScanOptions): Promise<Scan> {
    const t0 = performance.now();
    const maxFiles = opts.maxFiles ?? DEFAULT_SCAN_MAX_FILES;
    const maxMs = opts.maxMs ?? DEFAULT_SCAN_MAX_MS;
    const hints = this.hints.take();
    const work: ScanWork = {
      kind: 'walk',
      why: null,
      narrowed: false,
      folders: 0,
      statted: 0,
      reread: 0,
      walked: 0,
      fingerprinted: 0,
      waitedMs: 0,
      ahead: 0,
      helped: 0,
    };
    let ctx: WalkContext;
    try {
      const realRoot = await fs.realpath(this.opts.root);
      this.hints.realRoot = realRoot;
      const globs = toIgnoreGlobs([...(opts.exclude ?? []), ...ALWAYS_SKIPPED]);
      const excludedByWatcher = this.opts.watcher?.unwatched() ?? [];
      const unwatched = excludedByWatcher.length ? toIgnoreGlobs(excludedByWatcher) : null;
      const rulesKey = JSON.stringify([globs, unwatched]);
      ctx = new WalkContext(
        realRoot,
        IgnoreRules.fromLines(globs, { braces: true }),
        unwatched && IgnoreRules.fromLines(unwatched, { braces: true }),
        { maxFiles, deadline: Date.now() + maxMs, signal: opts.signal },
      );
      if (opts.signal?.aborted) ctx.stopped = 'cancel';
      const ancestorsKey = ancestorDirs(realRoot).map(anyControlKey).join('\n');
      const s = this.state;
      const why = !s
        ? 'first scan'
        : !s.complete
          ? 'the last scan stopped at the file cap'
          : s.realRoot !== realRoot
            ? 'the root moved'
            : s.rulesKey !== rulesKey
              ? 'the exclude settings changed'
              : s.ancestorsKey !== ancestorsKey
                ? 'an ignore file above the root changed'
                : null;
      if (why !== null) {
        work.why = why;
        const parent = path.dirname(realRoot);
        const ancestors = parent === realRoot ? IgnoreChain.empty() : await loadAncestors(parent);
        const dirs = new Map<string, DirNode>();
        this.state = { realRoot, rulesKey, ancestors, ancestorsKey, dirs, complete: false };
        await walkTree(ctx, '', ancestors, false, dirs);
        if (s) ctx.rulesChanged.push('');
      } else {
        work.kind = 'refresh';
        work.narrowed = !statAll && !hints.all;
        await refreshTree(ctx, s!.dirs, s!.ancestors, { statAll: statAll || hints.all, hints, pool: this.pool });
      }
      await ctx.proofs.settle();
      // Big enough for the next scan's stats to be shared: the worker boots meanwhile.
      if (ctx.files >= this.pool.min) this.pool.warm();
    } catch (err) {
      this.state = null;
      this.hints.lose();
      const note = `the workspace's files could not be listed: ${errorMessage(err)}`;
      return this.result(t0, work, null, { note, complete: false, rulesChanged: [''] });
    }
    const state = this.state!;
    // Stopped by the clock or a cancel, the next scan picks up where this one stopped (folders not
    // walked yet are walked, all files statted); past the file cap the index is never complete.
    state.complete = ctx.stopped !== 'limit';
    if (ctx.stopped) this.hints.lose(); // what it took is not all looked at: stat everything next time
    Object.assign(work, {
      statted: ctx.statted,
      reread: ctx.reread,
      walked: ctx.walked,
      fingerprinted: ctx.proofs.hashed,
      waitedMs: Math.round(ctx.proofs.waitedMs),
      ahead: ctx.ahead,
      helped: ctx.helped,
    });
    const notes = [stopNote(ctx.stopped, { maxFiles, maxMs, files: ctx.files })];
    if (ctx.proofs.unverified > 0)
      notes.push(
        `${ctx.proofs.unverified.toLocaleString('en')} files were being changed while they were scanned; a change to them that kept their size and times would not show`,
      );
    return this.result(t0, work, state, {
      note: notes.filter(Boolean).join('; ') || null,
      complete: ctx.stopped === null,
      rulesChanged: ctx.rulesChanged,
    });
  }

  private result(
    t0: number,
    work: ScanWork,
    state: IndexState | null,
    r: Pick<Scan, 'note' | 'complete' | 'rulesChanged'>,
  ): Scan {
    const dirs = new Map(state?.dirs ?? []);
    work.folders = dirs.size;
    const repos: string[] = [];
    for (const [rel, node] of dirs) if (node.frame.hasGit) repos.push(rel);
    return {
      files: new ScanFiles(dirs),
      repos: repos.sort(),
      ...r,
      ms: performance.now() - t0,
      work,
    };
  }
}

function stopNote(why: StopReason | null, c: { maxFiles: number; maxMs: number; files: number }): string | null {
  if (why === 'cancel') return 'the scan was cancelled';
  if (why === 'limit') return `the scan stopped at ${c.maxFiles.toLocaleString('en')} files (the workspace has more)`;
  if (why === 'deadline')
    return `the scan stopped after ${(c.maxMs / 1000).toFixed(0)} s (${c.files.toLocaleString('en')} files seen)`;
  return null;
}

/** The folders above the root, whose ignore files and .git apply inside it. */
function ancestorDirs(realRoot: string): string[] {
  const out: string[] = [];
  for (let d = realRoot; path.dirname(d) !== d;) {
    d = path.dirname(d);
    out.push(d);
  }
  return out;
}
