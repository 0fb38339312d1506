// Parts of the scale run (bench/scale.ts) beside the interleaved disk run: a crash at the last step
// made by SIGKILL of a writer process, and a store of many runs — on disk and on PostgreSQL — timed
// as the Runs view opens it (the store opened, then the tree's first page), with the heap it holds.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nodeFs, openDiskStore, type FsLayer } from '../src/store';
import { openPgStore } from '../src/store/pg/store';
import type { CheckpointStore } from '../src/store/api/types';
import { BENCH_OWNER } from './contenders/ours';
import { benchRunMeta } from './extras';
import { fullGc } from './measure';
import { median } from './stats';

export interface KilledWriter {
  dir: string;
  runId: string;
  messages: number;
  contentBytes: number;
  /** Open + loadSnapshot after a full GC (as the bench's resumes) / as a caller's process does it, no GC first. */
  harnessedMs: number[];
  apiMs: number[];
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
  for (let r = 0; r < o.rounds; r++)
    for (const gc of r % 2 === 0 ? [true, false] : [false, true]) {
      if (gc) fullGc();
      const t0 = performance.now();
      const store = openDiskStore(o.dir);
      const loaded = await store.loadSnapshot(runId);
      (gc ? harnessedMs : apiMs).push(performance.now() - t0);
      await store.close();
      if (loaded.snapshot.messages.length !== said.messages)
        throw new Error(
          `resumed ${loaded.snapshot.messages.length} messages after the kill, the writer had ${said.messages}`,
        );
    }
  return { dir: o.dir, runId, ...said, harnessedMs, apiMs };
}

export interface ManyRuns {
  runs: number;
  setupMs: number;
  /** The store opened and the Runs tree's first page (500) listed, per fresh open. */
  firstPageMs: number[];
  /** The store opened and every page listed (what the tree loads before it renders). */
  allPagesMs: number[];
  /** Heap held by an open store with its first page listed (after a full GC, over the heap before it). */
  heapBytes: number;
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

/** Lists like RunsTreeModel.load(): pages of 500; `firstOnly` stops after the first. */
async function listed(store: CheckpointStore, firstOnly: boolean): Promise<number> {
  let cursor: string | undefined;
  let n = 0;
  do {
    const page = await store.listRuns({ limit: 500, ...(cursor ? { cursor } : {}) });
    n += page.runs.length;
    cursor = page.cursor;
  } while (cursor && !firstOnly);
  return n;
}

async function timeOpens(
  open: () => CheckpointStore,
  count: number,
  repeats: number,
  setupMs: number,
): Promise<ManyRuns> {
  const firstPageMs: number[] = [];
  const allPagesMs: number[] = [];
  const heap: number[] = [];
  for (let r = 0; r < repeats; r++)
    for (const firstOnly of [true, false]) {
      fullGc();
      const h0 = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const store = open();
      const n = await listed(store, firstOnly);
      (firstOnly ? firstPageMs : allPagesMs).push(performance.now() - t0);
      if (firstOnly) {
        fullGc();
        heap.push(process.memoryUsage().heapUsed - h0);
      }
      await store.close();
      if (n !== (firstOnly ? Math.min(500, count) : count)) throw new Error(`listed ${n} of ${count} runs`);
    }
  return { runs: count, setupMs, firstPageMs, allPagesMs, heapBytes: median(heap) };
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
  return timeOpens(() => openPgStore({ connectionString: url, workspace }), count, repeats, performance.now() - t0);
}
