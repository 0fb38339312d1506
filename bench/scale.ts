// `npm run bench -- --scale` (bench/README.md, "Scale"): the workload at the size unattended work
// reaches — a 10,000-step run with context management's condenses in it, and a store of 10,000 runs —
// on disk and on PostgreSQL. On disk ours, the floor (contenders/bareLog.ts) and the public API's loop
// run interleaved, each on a thread of its own, with the raw append beside them; a full GC runs in
// their threads only around the reported windows (each step's would take minutes on a heap this size).
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
import { windowAround } from './stats';
import { contenderFigures, pointsFor, primitiveFigures, windowWidth, type ContenderFigures } from './summarize';
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
    resume: { released: number[]; crashCopy: number[] };
    releaseMs: number;
    killed: KilledWriter;
  };
  pg?: { figures: ContenderFigures; resume: number[]; slowestStepMs: { ms: number; step: number } };
  manyRuns?: { disk: ManyRuns; pg: ManyRuns };
  runView?: RunViewFigures;
}

const RUN_ID = 'bench-scale-0001';

/** Steps whose figures are reported: a full GC in the contender's thread before and after each of them. */
function gcSteps(points: number[], steps: number): number[] {
  const out: number[] = [];
  for (const p of points) {
    const w = windowAround(p, windowWidth(p), steps);
    for (let s = w.from; s <= w.to; s++) out.push(s);
  }
  return out;
}

const slowest = (s: RunSamples, name: string) =>
  s.byContender[name]!.reduce((a, x) => (x.ms > a.ms ? { ms: x.ms, step: x.step } : a), { ms: 0, step: 0 });

async function diskRun(o: ScaleOptions, points: number[], loads: number[]) {
  const dir = tempDirIn(o.dir, 'disk');
  const workload = new Workload(o.seed, RUN_ID, { condenseEvery: o.condenseEvery });
  const extra = { workload: { condenseEvery: o.condenseEvery }, gcSteps: gcSteps(points, o.steps) };
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
    await ours.close();
    for (const c of cs.slice(1)) await c.close();
    o.log('  scale, disk: resume (let go, and a copy taken while held) …');
    const resume = await measureResume([ours, crash], o.resumeRounds, workload.lastSnapshotMessages);
    const figures = {
      ours: contenderFigures([samples], 'ours', points),
      bare: contenderFigures([samples], 'bare', points),
      api: contenderFigures([samples], 'api', points),
    };
    o.log(`  scale, disk: a writer process killed (SIGKILL) at step ${o.steps}, then resumed …`);
    const killed = await killedWriter({ ...o, dir: tempDirIn(dir, 'killed'), rounds: o.resumeRounds });
    return {
      workload,
      figures,
      slowestStepMs: { ours: slowest(samples, 'ours'), bare: slowest(samples, 'bare'), api: slowest(samples, 'api') },
      primitive: primitiveFigures([samples], points),
      storage: {
        released: diskUsage(ours.dir).apparent / workload.totalContentBytes,
        crashed: diskUsage(path.join(dir, 'ours-after-crash')).apparent / workload.totalContentBytes,
      },
      resume: { released: resume.ours!, crashCopy: resume.ours_after_crash! },
      releaseMs: ours.closeMs,
      killed,
    };
  } finally {
    for (const c of cs) await c.dispose();
  }
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
      gcSteps: new Set(gcSteps(points, o.steps)),
      onProgress: (s) => s % tick === 0 && o.log(`  scale, PostgreSQL: step ${s}/${o.steps}`),
    });
    await c.close();
    const resume = await measureResume([c], o.resumeRounds, workload.lastSnapshotMessages);
    o.log(`  scale, PostgreSQL: ${o.runs} runs …`);
    const runsDb = await cluster.createDatabase('runs');
    await withClient(cluster.url(), (db) => db.query(`ALTER DATABASE ${runsDb} SET synchronous_commit = off`));
    const many = await manyRunsOnPg(cluster.url(runsDb), o.runs, 5);
    return {
      figures: contenderFigures([samples], 'ours_pg', points),
      resume: resume.ours_pg!,
      slowestStepMs: slowest(samples, 'ours_pg'),
      many,
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

/** The store of many runs alone, on disk and on PostgreSQL (`--scale --runs-only`). */
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
  o.log(`  scale, disk: ${o.runs} runs …`);
  const manyDisk = await manyRunsOnDisk(tempDirIn(o.dir, 'many-runs'), o.runs, 5);
  o.log(`  scale, PostgreSQL: the ${o.steps}-step run …`);
  const pgr = await pgParts(o, points);
  const runView = o.noView
    ? undefined
    : await measureRunView({
        steps: o.steps,
        streamSeconds: 3,
        repeats: 3,
        dir: tempDirIn(o.dir, 'run-view'),
        log: o.log,
      });
  return {
    ...common,
    loadAvg: { start, end: os.loadavg(), maxDuring: Math.max(...loads, 0) },
    pg: { figures: pgr.figures, resume: pgr.resume, slowestStepMs: pgr.slowestStepMs },
    manyRuns: { disk: manyDisk, pg: pgr.many },
    ...(runView ? { runView } : {}),
  };
}
