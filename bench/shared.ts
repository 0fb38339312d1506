// The shared-store rows: ours on PostgreSQL vs LangGraph's PostgresSaver, side by side on
// one throwaway server (fsync on: a commit is durable when it returns), the same workload, steps
// interleaved as in the main run. Per-step time at 10 / 100 / 1000, WAL bytes per step, committed
// transactions per step, table bytes after the run, resume latency (fresh open + rebuild).
import pg from 'pg';
import { startCluster } from '../test/support/postgres';
import { OursPgContender, PostgresSaverContender, WalMeter } from './contenders/pg';
import { measureResume, measureRun } from './measure';
import { median, windowAround } from './stats';
import { contenderFigures, pointsFor, windowWidth, type ContenderFigures } from './summarize';
import { Workload } from './workload';

export interface SharedResults {
  steps: number;
  server: string;
  contentBytes: number;
  figures: Record<'ours_pg' | 'postgres', ContenderFigures>;
  resume: Record<'ours_pg' | 'postgres', { medianMs: number; samples: number[] }>;
  tableBytes: Record<'ours_pg' | 'postgres', number>;
}

export async function measureShared(o: {
  steps: number;
  seed: number;
  warmupSteps: number;
  resumeRounds: number;
  runId: string;
  log: (m: string) => void;
}): Promise<SharedResults> {
  const cluster = startCluster({ fsync: true });
  try {
    const ours = await cluster.createDatabase('ours');
    const theirs = await cluster.createDatabase('langgraph');
    const server = await serverVersion(cluster.url());
    const contenders = (w: Workload, suffix: string) => [
      new OursPgContender(
        cluster.url(ours),
        { ...w.runInput, run_id: `${w.runInput.run_id}${suffix}` },
        {
          kind: 'append',
          input: w.runStarted,
        },
      ),
      new PostgresSaverContender(
        cluster.url(theirs),
        { ...w.runInput, run_id: `${w.runInput.run_id}${suffix}` },
        w.initial,
        { kind: 'append', input: w.runStarted },
      ),
    ];
    // Warm-up: connections, statement plans, JIT — paid here, not at step 10.
    const warm = new Workload(o.seed + 1, o.runId);
    const warmed = contenders(warm, '-warmup');
    await measureRun(warm, warmed, undefined, { steps: o.warmupSteps, primitivePerStep: 0, gcSteps: new Set() });
    for (const c of warmed) await c.close();

    const points = pointsFor(o.steps);
    const gcSteps = new Set<number>();
    for (const p of points) {
      const w = windowAround(p, windowWidth(p), o.steps);
      for (let s = w.from; s <= w.to; s++) gcSteps.add(s);
    }
    const workload = new Workload(o.seed, o.runId);
    const cs = contenders(workload, '');
    const tick = Math.max(1, Math.floor(o.steps / 10));
    const samples = await measureRun(workload, cs, undefined, {
      steps: o.steps,
      primitivePerStep: 0,
      gcSteps,
      onProgress: (s) => s % tick === 0 && o.log(`  shared store: step ${s}/${o.steps}`),
    });
    for (const c of cs) await c.close();
    const resume = await measureResume(cs, o.resumeRounds, workload.lastSnapshotMessages);
    const tableBytes = {
      ours_pg: await tableBytesOf(cluster.url(ours), 'agent_waypoints'),
      postgres: await tableBytesOf(cluster.url(theirs), 'public'),
    };
    return {
      steps: o.steps,
      server,
      contentBytes: samples.contentBytes.reduce((a, b) => a + b, 0),
      figures: {
        ours_pg: contenderFigures([samples], 'ours_pg', points),
        postgres: contenderFigures([samples], 'postgres', points),
      },
      resume: {
        ours_pg: { medianMs: median(resume.ours_pg!), samples: resume.ours_pg! },
        postgres: { medianMs: median(resume.postgres!), samples: resume.postgres! },
      },
      tableBytes,
    };
  } finally {
    cluster.destroy();
  }
}

async function tableBytesOf(url: string, schema: string): Promise<number> {
  const m = await WalMeter.open(url);
  try {
    return await m.tableBytes(schema);
  } finally {
    await m.close();
  }
}

async function serverVersion(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return String((await c.query('SHOW server_version')).rows[0].server_version);
  } finally {
    await c.end();
  }
}

const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ms';
const bytes = (v: number | null): string =>
  v === null ? 'n/a' : v >= 1e6 ? `${(v / 1e6).toFixed(2)} MB` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} KB` : `${v} B`;
const x = (v: number): string =>
  v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 0.1 ? v.toFixed(2) : v.toPrecision(2);

/** The Markdown section: one row per figure, ours / PostgresSaver beside it, and ✔ when ours is ahead. */
export function sharedReport(r: SharedResults): string {
  const o = r.figures.ours_pg;
  const p = r.figures.postgres;
  const lines = [
    `### Shared store: ours on PostgreSQL vs LangGraph PostgresSaver (one PostgreSQL ${r.server} server, fsync on, N = ${r.steps})`,
    '',
    '| figure | ours (PostgreSQL) | PostgresSaver | ours / PostgresSaver | ahead |',
    '|---|---|---|---|---|',
  ];
  const row = (label: string, a: number | null, b: number | null, fmt: (v: number | null) => string) => {
    const ratio = a !== null && b ? a / b : null;
    lines.push(
      `| ${label} | ${fmt(a)} | ${fmt(b)} | ${ratio === null ? 'n/a' : x(ratio)} | ${ratio === null ? '?' : ratio <= 1 ? '✔' : '✘'} |`,
    );
  };
  for (const [i, op] of o.points.entries()) {
    const pp = p.points[i]!;
    row(
      `per-step time @${op.point} (steps ${op.window.from}–${op.window.to}), median`,
      op.medianMs,
      pp.medianMs,
      (v) => (v === null ? 'n/a' : ms(v)),
    );
  }
  for (const [i, op] of o.points.entries())
    row(`WAL bytes per step @${op.point} (median)`, op.bytesPerStep, p.points[i]!.bytesPerStep, bytes);
  row('WAL bytes, whole run', o.totalBytesWritten, p.totalBytesWritten, bytes);
  const last = o.points.at(-1)!;
  row(
    `committed transactions per step @${last.point} (median)`,
    last.durableWritesPerStep,
    p.points.at(-1)!.durableWritesPerStep,
    (v) => (v === null ? 'n/a' : x(v)),
  );
  row(`table bytes after ${r.steps} steps`, r.tableBytes.ours_pg, r.tableBytes.postgres, bytes);
  row(
    `resume latency (fresh open + rebuild, median of ${r.resume.ours_pg.samples.length})`,
    r.resume.ours_pg.medianMs,
    r.resume.postgres.medianMs,
    (v) => (v === null ? 'n/a' : ms(v)),
  );
  lines.push('');
  lines.push(
    `Content handed to the stores: ${bytes(r.contentBytes)}. Bytes are the server's WAL during each step (pg_current_wal_insert_lsn, read outside the clock); table bytes are pg_total_relation_size of each one's tables (TOAST and indexes included).`,
  );
  return lines.join('\n');
}
