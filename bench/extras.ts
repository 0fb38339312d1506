// Figures for ours only: the activation path with many runs in history, and paging through a long
// run's checkpoints as the Runs tree does.
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_OWNER, CountingFs, type OpenStore, OursContender } from './contenders/ours';
import { RunsTreeModel } from '../src/views/runs/treeModel';
import { measureResume, type Resumable } from './measure';
import { median } from './stats';
import { applyOp, Workload } from './workload';

/** The newest runs RunsTreeModel.load() (src/views/runs/treeModel.ts) asks for first. */
const RUN_PAGE = 500;
/** PAGE_SIZE of the Runs tree's checkpoint pages. */
const CHECKPOINT_PAGE = 50;

/** The metadata of the bench's generated run `i` (the activation and scale stores alike). */
export function benchRunMeta(i: number) {
  return {
    title: `run ${i}: fix flaky test in module ${i % 37}`,
    task: `Task number ${i}: make the build green.`,
    agent_name: 'agent-waypoints',
    model: 'gpt-4.1-mini',
  };
}

export interface ActivationResult {
  runs: number;
  /** Time to create the runs (untimed setup, shown for scale). */
  setupMs: number;
  /** The store opened + the Runs tree's first load (RunsTreeModel.load), per repeat. */
  samples: number[];
  medianMs: number;
  firstMs: number;
  /** Runs the tree holds after its first load: the newest page and every unfinished run. */
  loaded: number;
}

/** Creates `count` small runs, closes the store, then times what activation does, `repeats` times. */
export async function measureActivation(
  open: OpenStore,
  dir: string,
  count: number,
  repeats: number,
): Promise<ActivationResult> {
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const store = open(dir);
  for (let i = 0; i < count; i++) {
    const { run, lease } = await store.createRun(benchRunMeta(i), BENCH_OWNER);
    await store.append(run.run_id, {
      phase: 'run_started',
      step: 0,
      payload: {
        agent_name: 'agent-waypoints',
        resumed: false,
        task: `Task number ${i}`,
        extension_version: '0.1.0',
        tool_schema_hash: 'x'.repeat(64),
      },
    });
    await store.setRunState(run.run_id, i % 5 === 0 ? 'paused_error' : 'completed', null);
    await lease.release();
  }
  await store.close();
  const setupMs = performance.now() - t0;

  const samples: number[] = [];
  let loaded = 0;
  for (let r = 0; r < repeats; r++) {
    const t = performance.now();
    const s = open(dir);
    const tree = new RunsTreeModel(s);
    await tree.load();
    samples.push(performance.now() - t);
    loaded = tree.all().length;
    tree.dispose();
    await s.close();
    if (loaded < Math.min(RUN_PAGE, count)) throw new Error(`activation: the tree loaded ${loaded} of ${count} runs`);
  }
  return { runs: count, setupMs, samples, medianMs: median(samples), firstMs: samples[0]!, loaded };
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

export interface RunFiles {
  /** Files in the run's folder, blobs/ left out (those are tool outputs too large to inline, one per content). */
  files: string[];
  blobs: number;
}

/** What a run is on disk: the files of its folder (runs/<id>/) and how many blobs it keeps beside them. */
export function runFiles(storeDir: string, runId: string): RunFiles {
  const dir = path.join(storeDir, 'runs', runId);
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const blobsDir = path.join(dir, 'blobs');
  return {
    files: entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort(),
    blobs: fs.existsSync(blobsDir) ? fs.readdirSync(blobsDir).length : 0,
  };
}

export interface FixedBytesResult {
  steps: number;
  /** Median over the steps of (bytes the step wrote − the new content it handed over), per file kind and in all. */
  medianFixed: number;
  medianFixedLog: number;
  medianIndex: number;
  medianContent: number;
}

/**
 * Fixed bytes per step: the workload's steps with every tool output empty, through the disk store
 * as the runner calls it (its durability and barriers, as in the main run). What a step writes
 * beyond its new content (the assistant message with its calls) is metadata: checkpoint records,
 * framing, effect records, snapshot headers, the witness slots — and index.json, if the step changed
 * what a listing shows (reported apart; a running run's state does not change).
 */
export async function measureFixedBytes(open: OpenStore, dir: string, steps: number): Promise<FixedBytesResult> {
  fs.mkdirSync(dir, { recursive: true });
  const counter = new CountingFs();
  const store = open(dir, counter.layer);
  const workload = new Workload(7, 'bench-fixed-0001', { emptyToolOutputs: true });
  const runId = workload.runInput.run_id!;
  const { lease } = await store.createRun(workload.runInput, BENCH_OWNER);
  await store.append(runId, workload.runStarted);
  await store.flush();
  const fixed: number[] = [];
  const fixedLog: number[] = [];
  const index: number[] = [];
  const content: number[] = [];
  for (let i = 0; i < steps; i++) {
    const plan = workload.nextStep();
    const before = { all: counter.bytes, index: counter.bytesByKind.index };
    for (const op of plan.ops) await applyOp(store, runId, op);
    const all = counter.bytes - before.all;
    const idx = counter.bytesByKind.index - before.index;
    fixed.push(all - plan.contentBytes);
    fixedLog.push(all - idx - plan.contentBytes);
    index.push(idx);
    content.push(plan.contentBytes);
  }
  await lease.release();
  await store.close();
  return {
    steps,
    medianFixed: median(fixed),
    medianFixedLog: median(fixedLog),
    medianIndex: median(index),
    medianContent: median(content),
  };
}

export function tempDirIn(base: string, name: string): string {
  const d = path.join(base, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

export interface CrashCyclePoint {
  step: number;
  /** The run's snapshot.json and segment bytes in the copy: how much a resume verifies and replays. */
  snapshotBytes: number;
  segmentBytes: number;
  medianMs: number;
  samples: number[];
}

export interface CrashCycleResult {
  steps: number;
  rounds: number;
  points: CrashCyclePoint[];
  /** The point whose median resume was slowest. */
  worst: CrashCyclePoint;
  /** Whether a compaction fell between two copies (the snapshot changed): the sweep then holds its longest tail too. */
  compactedWithin: boolean;
}

/**
 * Resume after a crash across a compaction cycle. Where a crash lands decides how long the segment
 * tail a resume replays is: right after a background compaction it is a few commits; just before
 * the next one, half of what the snapshot covers. The main run's crash copy is one point of that
 * cycle. Here the same workload runs again through ours alone, a crash copy is taken every `every`
 * steps from step `from` to `steps` (as the main run's is: what was queued written, a compaction
 * under way finished, the run still held), and each copy is resumed `rounds` times, interleaved.
 */
export async function measureCrashCycle(
  open: OpenStore,
  dir: string,
  o: { seed: number; runId: string; steps: number; from: number; every: number; rounds: number },
): Promise<CrashCycleResult> {
  const workload = new Workload(o.seed, o.runId);
  const ours = new OursContender(tempDirIn(dir, 'run'), open, workload.runInput, {
    kind: 'append',
    input: workload.runStarted,
  });
  await ours.start();
  const copies: { step: number; messages: number; resume: Resumable['resume']; sizes: [number, number] }[] = [];
  for (let s = 1; s <= o.steps; s++) {
    const plan = workload.nextStep();
    for (const op of plan.ops) {
      if (op.kind === 'model') await ours.modelWait();
      else await ours.apply(op);
    }
    if (s < o.from || (o.steps - s) % o.every !== 0) continue;
    await ours.idle();
    const to = path.join(dir, `crash-${s}`);
    const { resume } = ours.crashCopy(to);
    const runDir = path.join(to, 'runs', o.runId);
    const size = (re: RegExp) =>
      fs
        .readdirSync(runDir)
        .filter((f) => re.test(f))
        .reduce((sum, f) => sum + fs.statSync(path.join(runDir, f)).size, 0);
    copies.push({
      step: s,
      messages: workload.lastSnapshotMessages,
      resume,
      sizes: [size(/^snapshot\.json$/), size(/^segment-/)],
    });
  }
  await ours.close();
  const samples = await measureResume(
    copies.map((c) => ({ name: `step ${c.step}`, resume: c.resume, messages: c.messages })),
    o.rounds,
    workload.lastSnapshotMessages,
  );
  const points = copies.map((c) => ({
    step: c.step,
    snapshotBytes: c.sizes[0],
    segmentBytes: c.sizes[1],
    medianMs: median(samples[`step ${c.step}`]!),
    samples: samples[`step ${c.step}`]!,
  }));
  return {
    steps: o.steps,
    rounds: o.rounds,
    points,
    worst: points.reduce((a, b) => (b.medianMs > a.medianMs ? b : a)),
    compactedWithin: new Set(points.map((p) => p.snapshotBytes)).size > 1,
  };
}
