// Figures for ours only: the activation path with many runs in history, and paging through a long
// run's checkpoints as the Runs tree does.
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_OWNER, type OpenStore } from './contenders/ours';
import { median } from './stats';

/** What RunsModel.load() (src/views/runs/model.ts) asks for per page. */
const RUN_PAGE = 500;
/** PAGE_SIZE of the Runs tree's checkpoint pages. */
const CHECKPOINT_PAGE = 50;

export interface ActivationResult {
  runs: number;
  /** Time to create the runs (untimed setup, shown for scale). */
  setupMs: number;
  /** openDiskStore + listRuns pages until the tree can render, per repeat. */
  samples: number[];
  medianMs: number;
  firstMs: number;
  pages: number;
}

/** Creates `count` small runs, closes the store, then times what activation does, `repeats` times. */
export async function measureActivation(open: OpenStore, dir: string, count: number, repeats: number): Promise<ActivationResult> {
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const store = open(dir);
  for (let i = 0; i < count; i++) {
    const { run, lease } = await store.createRun(
      { title: `run ${i}: fix flaky test in module ${i % 37}`, task: `Task number ${i}: make the build green.`, agent_name: 'agent-waypoints', model: 'gpt-4.1-mini' },
      BENCH_OWNER,
    );
    await store.append(run.run_id, {
      phase: 'run_started',
      step: 0,
      payload: { agent_name: 'agent-waypoints', resumed: false, task: `Task number ${i}`, extension_version: '0.1.0', tool_schema_hash: 'x'.repeat(64) },
    });
    await store.setRunState(run.run_id, i % 5 === 0 ? 'paused_error' : 'completed', null);
    await lease.release();
  }
  await store.close();
  const setupMs = performance.now() - t0;

  const samples: number[] = [];
  let pages = 0;
  let listed = 0;
  for (let r = 0; r < repeats; r++) {
    const t = performance.now();
    const s = open(dir);
    let cursor: string | undefined;
    pages = 0;
    listed = 0;
    do {
      const page = await s.listRuns({ limit: RUN_PAGE, ...(cursor ? { cursor } : {}) });
      listed += page.runs.length;
      pages += 1;
      cursor = page.cursor;
    } while (cursor);
    samples.push(performance.now() - t);
    await s.close();
    if (listed !== count) throw new Error(`activation: listed ${listed} runs, created ${count}`);
  }
  return { runs: count, setupMs, samples, medianMs: median(samples), firstMs: samples[0]!, pages };
}

export interface ListingResult {
  checkpoints: number;
  pages: number;
  /** Fresh open → first page (what expanding the run in the tree costs). */
  firstPageMs: number;
  /** Fresh open → every page, newest to oldest. */
  allPagesMs: number;
}

/** Pages through every checkpoint of `runId` on a freshly opened store, newest first. */
export async function measureListing(open: OpenStore, dir: string, runId: string): Promise<ListingResult> {
  const t0 = performance.now();
  const store = open(dir);
  let firstPageMs = 0;
  let before: number | undefined;
  let checkpoints = 0;
  let pages = 0;
  let lastSeq = Infinity;
  for (;;) {
    const page = await store.list(runId, { limit: CHECKPOINT_PAGE, ...(before !== undefined ? { before } : {}) });
    if (pages === 0) firstPageMs = performance.now() - t0;
    if (page.length === 0) break;
    pages += 1;
    checkpoints += page.length;
    for (const r of page) {
      if (r.seq >= lastSeq) throw new Error(`listing: seq ${r.seq} after ${lastSeq} (not newest first)`);
      lastSeq = r.seq;
    }
    before = page.at(-1)!.seq;
    if (page.length < CHECKPOINT_PAGE) break;
  }
  const allPagesMs = performance.now() - t0;
  await store.close();
  return { checkpoints, pages, firstPageMs, allPagesMs };
}

export function tempDirIn(base: string, name: string): string {
  const d = path.join(base, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}
