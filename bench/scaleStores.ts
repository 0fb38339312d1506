// Parts of the scale run (bench/scale.ts) beside the interleaved disk run: a crash at the last step
// made by SIGKILL of a writer process, and a store of many runs — on disk and on PostgreSQL — timed
// as the Runs view opens it (the store opened, then the tree's load: RunsTreeModel itself), with the
// heap it holds.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nodeFs, openDiskStore, type FsLayer } from '../src/store';
import pg from 'pg';
import { openPgStore } from '../src/store/pg/store';
import { DEFAULT_PG_SCHEMA, quoteIdent } from '../src/store/pg/schema';
import type { CheckpointStore } from '../src/store/api/types';
import type { Store } from '../src/store/core/store';
import { RunsTreeModel } from '../src/views/runs/treeModel';
import { BENCH_OWNER } from './contenders/ours';
import { benchRunMeta } from './extras';
import { fullGc } from './measure';
import { median } from './stats';

export interface KilledWriter {
  dir: string;
  runId: string;
  messages: number;
  contentBytes: number;
  /**
   * Open + loadResumeSnapshot (as the runner resumes) after a full GC (as the bench's resumes) / as a
   * caller's process does it, no GC first; `wholeMs`: open + loadSnapshot, the whole history read.
   */
  harnessedMs: number[];
  apiMs: number[];
  wholeMs: number[];
}

/** Writes the run in a child process (bench/scaleChild.ts), SIGKILLs it at its last step, then resumes what it left. */
export async function killedWriter(o: {
  dir: string;
  steps: number;
  seed: number;
  condenseEvery: number;
  rounds: number;
}): Promise<KilledWriter> {
  const runId = 'bench-scale-killed';
  fs.mkdirSync(o.dir, { recursive: true });
  const child = fork(
    path.join(__dirname, 'scaleChild.ts'),
    [o.dir, String(o.steps), String(o.seed), String(o.condenseEvery), runId],
    { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const said = await new Promise<{ messages: number; contentBytes: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { messages: number; contentBytes: number }));
    child.once('exit', (code) => reject(new Error(`the scale writer exited (${code}) before its last step`)));
  });
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
  const harnessedMs: number[] = [];
  const apiMs: number[] = [];
  const wholeMs: number[] = [];
  const ways = [
    { gc: true, whole: false, out: harnessedMs },
    { gc: false, whole: false, out: apiMs },
    { gc: true, whole: true, out: wholeMs },
  ];
  for (let r = 0; r < o.rounds; r++)
    for (const w of r % 2 === 0 ? ways : [...ways].reverse()) {
      if (w.gc) fullGc();
      const t0 = performance.now();
      const store = openDiskStore(o.dir);
      const loaded = w.whole ? await store.loadSnapshot(runId) : await store.loadResumeSnapshot(runId);
      w.out.push(performance.now() - t0);
      await store.close();
      if (loaded.snapshot.messages.length !== said.messages)
        throw new Error(
          `resumed ${loaded.snapshot.messages.length} messages after the kill, the writer had ${said.messages}`,
        );
    }
  return { dir: o.dir, runId, ...said, harnessedMs, apiMs, wholeMs };
}

export interface ManyRuns {
  runs: number;
  setupMs: number;
  /** The store opened (whenOpen: ready to list, from the index's head when it has a current one). */
  openMs: number[];
  /** The store opened and the Runs tree's first page (RunsTreeModel.loadFirstPage: the newest 500, what the tree shows first). */
  firstPageMs: number[];
  /** The same and every unfinished run, however old (RunsTreeModel.load: what "Needs attention" and startup show). */
  unfinishedMs: number[];
  /** The store opened and every page listed (the whole index read). */
  allPagesMs: number[];
  /** Summaries the tree's load was handed, and the index entries the store held then. */
  summariesRead: number;
  entriesHeld: number;
  /**
   * Heap held by the open store with the tree loaded / with the whole index: after a full GC, less
   * the heap after a full GC once it is closed and let go (medians).
   */
  heapBytes: number;
  wholeHeapBytes: number;
}

/** The fs layer without its barriers: a store of many runs is generated fast, then timed through the real one. */
const UNSYNCED: FsLayer = { ...nodeFs, fsync: async () => undefined, fdatasync: async () => undefined };

async function createRuns(store: CheckpointStore, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { run, lease } = await store.createRun(benchRunMeta(i), BENCH_OWNER);
    await store.setRunState(run.run_id, i % 5 === 0 ? 'paused_error' : 'completed', null);
    await lease.release();
  }
}

/** Every page, as a caller that wants the whole list does. */
async function allPages(store: CheckpointStore): Promise<number> {
  let cursor: string | undefined;
  let n = 0;
  do {
    const page = await store.listRuns({ limit: 500, ...(cursor ? { cursor } : {}) });
    n += page.runs.length;
    cursor = page.cursor;
  } while (cursor);
  return n;
}

/**
 * The tree's load on a fresh store, counting the summaries listRuns hands it; `firstPage` is called
 * once the tree could show its first page.
 */
async function treeLoad(store: Store, firstPage = () => {}): Promise<{ read: number; model: RunsTreeModel }> {
  let read = 0;
  const counting = new Proxy(store, {
    get(target, key) {
      if (key === 'listRuns')
        return async (...args: Parameters<CheckpointStore['listRuns']>) => {
          const page = await target.listRuns(...args);
          read += page.runs.length;
          return page;
        };
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const model = new RunsTreeModel(counting);
  await model.loadFirstPage();
  firstPage();
  await model.load();
  return { read, model };
}

/** The heap an open store holds: after a full GC with it open, less after a full GC once it is closed and dropped. */
async function held(open: () => Store, fill: (s: Store) => Promise<unknown>): Promise<number> {
  const withIt = await heapWhileOpen(open, fill); // its locals (the store, the tree) are gone once it returns
  fullGc();
  return withIt - process.memoryUsage().heapUsed;
}

async function heapWhileOpen(open: () => Store, fill: (s: Store) => Promise<unknown>): Promise<number> {
  const store = open();
  const kept = await fill(store);
  fullGc();
  const heap = process.memoryUsage().heapUsed;
  if (kept instanceof RunsTreeModel) kept.dispose();
  await store.close();
  return heap;
}

async function timeOpens(open: () => Store, count: number, repeats: number, setupMs: number): Promise<ManyRuns> {
  const openMs: number[] = [];
  const firstPageMs: number[] = [];
  const unfinishedMs: number[] = [];
  const allPagesMs: number[] = [];
  const heap: number[] = [];
  const wholeHeap: number[] = [];
  let summariesRead = 0;
  let entriesHeld = 0;
  for (let r = 0; r < repeats; r++) {
    fullGc();
    let t0 = performance.now();
    let store = open();
    await store.whenOpen();
    openMs.push(performance.now() - t0);
    const start = t0;
    const { read, model } = await treeLoad(store, () => firstPageMs.push(performance.now() - start));
    unfinishedMs.push(performance.now() - t0);
    summariesRead = read;
    entriesHeld = store.index.entries.size;
    model.dispose();
    await store.close();
    if (model.all().length < Math.min(500, count)) throw new Error(`the tree loaded ${model.all().length} runs`);
    fullGc();
    t0 = performance.now();
    store = open();
    const n = await allPages(store);
    allPagesMs.push(performance.now() - t0);
    await store.close();
    if (n !== count) throw new Error(`listed ${n} of ${count} runs`);
    heap.push(await held(open, async (s) => (await treeLoad(s)).model));
    wholeHeap.push(await held(open, (s) => allPages(s)));
  }
  return {
    runs: count,
    setupMs,
    openMs,
    firstPageMs,
    unfinishedMs,
    allPagesMs,
    summariesRead,
    entriesHeld,
    heapBytes: median(heap),
    wholeHeapBytes: median(wholeHeap),
  };
}

export async function manyRunsOnDisk(dir: string, count: number, repeats: number): Promise<ManyRuns> {
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const writer = openDiskStore(dir, { fs: UNSYNCED });
  await createRuns(writer, count);
  await writer.close();
  return timeOpens(() => openDiskStore(dir), count, repeats, performance.now() - t0);
}

/** On PostgreSQL: generated with synchronous_commit off for the writer's session defaults (the timing reads only). */
export async function manyRunsOnPg(url: string, count: number, repeats: number): Promise<ManyRuns> {
  const t0 = performance.now();
  const workspace = 'bench-many';
  const writer = openPgStore({ connectionString: url, workspace });
  await createRuns(writer, count);
  await writer.close();
  // The runs are made in seconds and timed at once; a table that grew to this size in use has been
  // analyzed by autovacuum on the way. Without statistics the planner takes it for a few hundred rows
  // and sorts them all instead of reading the listing index.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`ANALYZE ${quoteIdent(DEFAULT_PG_SCHEMA)}.runs`);
  } finally {
    await c.end();
  }
  return timeOpens(() => openPgStore({ connectionString: url, workspace }), count, repeats, performance.now() - t0);
}
