// `npm run bench -- --scale` (bench/README.md, "Scale"): the workload at the size unattended work
// reaches — a 10,000-step run with context management's condenses in it, and a store of 10,000 runs —
// on disk and on PostgreSQL. On disk ours, the floor (contenders/bareLog.ts) and the public API's loop
// run interleaved, each on a thread of its own, with the raw append beside them. No full GC runs
// between steps: every contender collects when V8 decides, on its own clock, as a caller's process
// does (the public API's row always did). A forced collection of a heap that holds a long run leaves
// the collector's concurrent work on the cores the next steps run on, and slowed every contender's
// steps in the windows it was meant to keep clean, the floor's too. The window around step 10 is
// taken over short runs as well (fresh stores and threads, the same steps): one run's ten steps
// are too few to hold a ratio.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startCluster } from '../test/support/postgres';
import { OursPgContender } from './contenders/pg';
import { tempDirIn } from './extras';
import { diskUsage } from './fsutil';
import { IsolatedContender } from './isolated';
import { measureResume, measureRun, type RunSamples } from './measure';
import { RawAppend } from './primitive';
import { measureRunView, type RunViewFigures } from './runView';
import { killedWriter, manyRunsOnDisk, manyRunsOnPg, type KilledWriter, type ManyRuns } from './scaleStores';
import { contenderFigures, pointsFor, primitiveFigures, type ContenderFigures } from './summarize';
import { Workload } from './workload';

export interface ScaleOptions {
  steps: number;
  runs: number;
  seed: number;
  /** Steps between two condenses (a 128k window fills in about 40 of the workload's steps). */
  condenseEvery: number;
  resumeRounds: number;
  dir: string;
  /** Leave the run view out (no browser). */
  noView: boolean;
  /** The long run on disk alone (no store of many runs, no PostgreSQL, no run view). */
  diskOnly?: boolean;
  log(m: string): void;
}

export interface ScaleResults {
  steps: number;
  condenseEvery: number;
  contentBytes: number;
  conversationBytes: number;
  loadAvg: { start: number[]; end: number[]; maxDuring: number };
  points: number[];
  disk: {
    figures: Record<'ours' | 'bare' | 'api', ContenderFigures>;
    slowestStepMs: Record<'ours' | 'bare' | 'api', { ms: number; step: number }>;
    primitive: ReturnType<typeof primitiveFigures>;
    storage: { released: number; crashed: number };
    /** As the runner resumes (loadResumeSnapshot); `wholeAfterCrash`: the whole history read (loadSnapshot). */
    resume: { released: number[]; crashCopy: number[]; wholeAfterCrash: number[] };
    releaseMs: number;
    killed: KilledWriter;
  };
  pg?: { figures: ContenderFigures; resume: number[]; slowestStepMs: { ms: number; step: number } };
  manyRuns?: { disk: ManyRuns; pg: ManyRuns };
  runView?: RunViewFigures;
}

const RUN_ID = 'bench-scale-0001';

/**
 * Window widths of the scale run: 10 steps around step 10 (over the long run and the early runs),
 * 100 around the later points (with one run's 20, the median moved from one window to the next by
 * more than the goals' margins).
 */
const scaleWidth = (point: number): number => (point <= 10 ? 10 : 100);

/** Short runs of the long run's first steps, for the window around step 10. */
const EARLY_RUNS = 7;
const EARLY_STEPS = 16;

/** No step is followed by a forced collection (the file's head says why). */
const NO_GC: number[] = [];

const slowest = (s: RunSamples, name: string) =>
  s.byContender[name]!.reduce((a, x) => (x.ms > a.ms ? { ms: x.ms, step: x.step } : a), { ms: 0, step: 0 });

async function diskRun(o: ScaleOptions, points: number[], loads: number[]) {
  const dir = tempDirIn(o.dir, 'disk');
  const workload = new Workload(o.seed, RUN_ID, { condenseEvery: o.condenseEvery });
  const extra = { workload: { condenseEvery: o.condenseEvery }, gcSteps: NO_GC };
  const kinds = ['ours', 'bare', 'api'] as const;
  const cs = kinds.map((k) => new IsolatedContender(k, tempDirIn(dir, k), o.seed, RUN_ID, extra));
  try {
    for (const c of cs) await c.warmUp(tempDirIn(o.dir, `warmup/${c.name}`), o.seed + 1, 20);
    const tick = Math.max(1, Math.floor(o.steps / 20));
    const t0 = performance.now();
    const samples = await measureRun(workload, cs, new RawAppend(tempDirIn(dir, 'raw')), {
      steps: o.steps,
      primitivePerStep: 3,
      onProgress: (s) => {
        if (s % tick !== 0) return;
        loads.push(os.loadavg()[0]!);
        o.log(
          `  scale, disk: step ${s}/${o.steps} (${((performance.now() - t0) / 1000).toFixed(0)} s, load ${os.loadavg()[0]!.toFixed(1)})`,
        );
      },
    });
    const ours = cs[0]!;
    await ours.idle();
    const crash = await ours.crashCopy(path.join(dir, 'ours-after-crash'));
    const wholeCrash = await ours.crashCopy(path.join(dir, 'ours-whole-after-crash'), true);
    await ours.close();
    for (const c of cs.slice(1)) await c.close();
    o.log('  scale, disk: resume (let go, and a copy taken while held; and that copy read whole) …');
    const resume = await measureResume([ours, crash, wholeCrash], o.resumeRounds, workload.lastSnapshotMessages);
    fs.rmSync(path.join(dir, 'ours-whole-after-crash'), { recursive: true, force: true });
    const early = await earlyRuns(o, dir, extra);
    const figuresOf = (name: (typeof kinds)[number]) =>
      withEarly(
        contenderFigures([samples], name, points, scaleWidth),
        () => contenderFigures([samples, ...early], name, [10], scaleWidth).points[0]!,
      );
    const figures = { ours: figuresOf('ours'), bare: figuresOf('bare'), api: figuresOf('api') };
    o.log(`  scale, disk: a writer process killed (SIGKILL) at step ${o.steps}, then resumed …`);
    const killed = await killedWriter({ ...o, dir: tempDirIn(dir, 'killed'), rounds: o.resumeRounds });
    return {
      workload,
      figures,
      slowestStepMs: { ours: slowest(samples, 'ours'), bare: slowest(samples, 'bare'), api: slowest(samples, 'api') },
      primitive: withEarly(
        primitiveFigures([samples], points, scaleWidth),
        () => primitiveFigures([samples, ...early], [10], scaleWidth).points[0]!,
      ),
      storage: {
        released: diskUsage(ours.dir).apparent / workload.totalContentBytes,
        crashed: diskUsage(path.join(dir, 'ours-after-crash')).apparent / workload.totalContentBytes,
      },
      resume: {
        released: resume.ours!,
        crashCopy: resume.ours_after_crash!,
        wholeAfterCrash: resume.ours_whole_after_crash!,
      },
      releaseMs: ours.closeMs,
      killed,
    };
  } finally {
    for (const c of cs) await c.dispose();
  }
}

/**
 * The long run's first steps again, EARLY_RUNS times: fresh stores, fresh threads, the same steps,
 * interleaved as in the long run. Their steps join the window around step 10.
 */
async function earlyRuns(
  o: ScaleOptions,
  dir: string,
  extra: { workload: { condenseEvery: number }; gcSteps: number[] },
): Promise<RunSamples[]> {
  const out: RunSamples[] = [];
  if (o.steps < EARLY_STEPS) return out;
  for (let r = 0; r < EARLY_RUNS; r++) {
    o.log(`  scale, disk: early run ${r + 1}/${EARLY_RUNS}: steps 1–${EARLY_STEPS} (the window around step 10) …`);
    const at = tempDirIn(dir, `early${r}`);
    const cs = (['ours', 'bare', 'api'] as const).map(
      (k) => new IsolatedContender(k, tempDirIn(at, k), o.seed, RUN_ID, extra),
    );
    try {
      for (const c of cs) await c.warmUp(tempDirIn(at, `warmup-${c.name}`), o.seed + 1, 20);
      const workload = new Workload(o.seed, RUN_ID, { condenseEvery: o.condenseEvery });
      out.push(
        await measureRun(workload, cs, new RawAppend(tempDirIn(at, 'raw')), {
          steps: EARLY_STEPS,
          primitivePerStep: 3,
        }),
      );
      for (const c of cs) await c.close();
    } finally {
      for (const c of cs) await c.dispose();
    }
  }
  return out;
}

/** Figures whose point 10 is taken over the long run and the early runs together (`at10`). */
function withEarly<T extends { points: { point: number }[] }>(f: T, at10: () => T['points'][number]): T {
  if (!f.points.some((p) => p.point === 10)) return f;
  const ten = at10();
  return { ...f, points: f.points.map((p) => (p.point === 10 ? ten : p)) };
}

async function pgParts(o: ScaleOptions, points: number[]) {
  const cluster = startCluster({ fsync: true });
  try {
    const runDb = await cluster.createDatabase('scale');
    const workload = new Workload(o.seed, RUN_ID, { condenseEvery: o.condenseEvery });
    const c = new OursPgContender(cluster.url(runDb), workload.runInput, {
      kind: 'append',
      input: workload.runStarted,
    });
    const tick = Math.max(1, Math.floor(o.steps / 10));
    const samples = await measureRun(workload, [c], undefined, {
      steps: o.steps,
      primitivePerStep: 0,
      gcSteps: new Set(NO_GC),
      onProgress: (s) => s % tick === 0 && o.log(`  scale, PostgreSQL: step ${s}/${o.steps}`),
    });
    await c.close();
    const resume = await measureResume([c], o.resumeRounds, workload.lastSnapshotMessages);
    return {
      figures: contenderFigures([samples], 'ours_pg', points, scaleWidth),
      resume: resume.ours_pg!,
      slowestStepMs: slowest(samples, 'ours_pg'),
    };
  } finally {
    cluster.destroy();
  }
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * The store of many runs, on disk and on PostgreSQL (alone: `--scale --runs-only`), in a cluster of
 * its own: the long run's leaves its server busy for a while (its checkpoints, the vacuum of its
 * compacted rows), and activation measured there came out slower than alone.
 */
export async function measureManyRuns(o: ScaleOptions): Promise<NonNullable<ScaleResults['manyRuns']>> {
  o.log(`  scale, disk: ${o.runs} runs …`);
  const disk = await manyRunsOnDisk(tempDirIn(o.dir, 'many-runs'), o.runs, 5);
  const cluster = startCluster({ fsync: true });
  try {
    o.log(`  scale, PostgreSQL: ${o.runs} runs …`);
    const runsDb = await cluster.createDatabase('runs');
    await withClient(cluster.url(), (db) => db.query(`ALTER DATABASE ${runsDb} SET synchronous_commit = off`));
    return { disk, pg: await manyRunsOnPg(cluster.url(runsDb), o.runs, 5) };
  } finally {
    cluster.destroy();
  }
}

export async function measureScale(o: ScaleOptions): Promise<ScaleResults> {
  const start = os.loadavg();
  const loads: number[] = [];
  const points = pointsFor(o.steps);
  const disk = await diskRun(o, points, loads);
  const { workload, ...rest } = disk;
  const common = {
    steps: o.steps,
    condenseEvery: o.condenseEvery,
    contentBytes: workload.totalContentBytes,
    conversationBytes: workload.conversationBytes,
    points,
    disk: rest,
  };
  if (o.diskOnly) return { ...common, loadAvg: { start, end: os.loadavg(), maxDuring: Math.max(...loads, 0) } };
  const manyRuns = await measureManyRuns(o);
  o.log(`  scale, PostgreSQL: the ${o.steps}-step run …`);
  const pgr = await pgParts(o, points);
  const runView = o.noView
    ? undefined
    : await measureRunView({
        steps: o.steps,
        streamSeconds: 3,
        // Cold opens of the long run and of the floor, in turn: a page's creation in a fresh browser
        // alone moves by more than the goal's margin from one to the next, so the medians are taken
        // over nine of each (with five, two runs on one machine put the same build at 1.23 and 1.40).
        repeats: 9,
        dir: tempDirIn(o.dir, 'run-view'),
        log: o.log,
      });
  return {
    ...common,
    loadAvg: { start, end: os.loadavg(), maxDuring: Math.max(...loads, 0) },
    pg: { figures: pgr.figures, resume: pgr.resume, slowestStepMs: pgr.slowestStepMs },
    manyRuns,
    ...(runView ? { runView } : {}),
  };
}
