// The Markdown report: targets (docs/design.md, Targets) with ✔/✘, then every figure side by side with the
// ratio ours/peer beside it. Ratios < 1 mean ours is smaller/faster; "×" is how many times.
import type { ActivationResult, CrashCycleResult, FixedBytesResult, ListingResult, RunFiles } from './extras';
import type { MachineInfo } from './machine';
import type { ContenderFigures, PrimitivePoint } from './summarize';

/** ", of 8 runs" when a window was taken over more than one run (the early runs: bench/index.ts). */
const runsOf = (runs: number | undefined): string => (runs !== undefined && runs > 1 ? `, of ${runs} runs` : '');

/** Letting go of ours' run at the end: flush + log compaction. */
export interface ReleaseCost {
  ms: number;
  bytes: number;
  files: number;
}

export interface BenchResults {
  mode: string;
  machine: MachineInfo & { loadAvgAfter: number[]; loadMaxDuring: number };
  durationS: number;
  workload: {
    steps: number;
    seed: number;
    conversationBytes: number;
    contentBytes: number;
    checkpoints: number;
    effects: number;
    toolCalls: number;
  };
  points: number[];
  figures: Record<string, ContenderFigures>;
  primitive: { points: PrimitivePoint[]; medianMs: number; p95Ms: number; p99Ms: number };
  distance: { point: number; value: number }[];
  resume: Record<string, { medianMs: number; samples: number[] }>;
  /**
   * The resuming contender's heap as each resume began (its own thread's, after a full GC there;
   * median over every contender's resumes): the garbage collection a resume causes grows with it.
   */
  resumeHeapBytes?: number;
  /** Resume after a crash at points across a compaction cycle (ours alone, a second run of the workload). */
  crashCycle?: CrashCycleResult;
  storage: Record<
    string,
    { apparent: number; allocated: number; files: number; ratioApparent: number; ratioAllocated: number }
  >;
  activation: ActivationResult;
  listing: ListingResult;
  release: ReleaseCost;
  /** The run's folder after it was let go, and as a crash left it. */
  runFiles: { released: RunFiles; crashed: RunFiles };
  fixedBytes: FixedBytesResult;
  notes: Record<string, string>;
}

/** "900–1000, every 10" */
const cycleSpan = (cc: CrashCycleResult): string => {
  const steps = cc.points.map((p) => p.step);
  return `${steps[0]}–${steps.at(-1)}, every ${steps.length > 1 ? steps[1]! - steps[0]! : 1}`;
};

const PEERS = [
  ['lowdb', 'whole-file rewrite (lowdb)'],
  ['sqlite', 'LangGraph SqliteSaver'],
] as const;

const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ms';
const bytes = (v: number | null): string => {
  if (v === null) return 'n/a';
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GB`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} MB`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} KB`;
  return `${v.toFixed(0)} B`;
};
const x = (v: number | null): string =>
  v === null ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
const mark = (ok: boolean): string => (ok ? '✔' : '✘');
/** ours/peer, and how many times better (or worse) ours is: "0.05 (20× faster)". */
const ratio = (ours: number | null, peer: number | null, better = 'less', worse = 'more'): string => {
  if (ours === null || peer === null || peer === 0 || ours === 0) return 'n/a';
  const r = ours / peer;
  return r <= 1 ? `${x(r)} (${x(1 / r)}× ${better})` : `${x(r)} (${x(r)}× ${worse})`;
};

export function buildReport(r: BenchResults): string {
  const ours = r.figures.ours!;
  const last = r.points.at(-1)!;
  const first = r.points[0]!;
  const at = (name: string, p: number) => r.figures[name]!.points.find((f) => f.point === p)!;
  const lines: string[] = [];
  const m = r.machine;
  lines.push(
    `### Benchmark (${r.mode}: N = ${r.workload.steps} steps, conversation ${bytes(r.workload.conversationBytes)} at step ${r.workload.steps})`,
  );
  lines.push('');
  lines.push(
    `${m.date.slice(0, 10)} · ${m.cpu}, ${m.cores} cores · Node ${m.node} · ${m.tempFs} · load avg (1/5/15 min) ${m.loadAvg.map((l) => l.toFixed(2)).join(' ')} at start, ${m.loadAvgAfter.map((l) => l.toFixed(2)).join(' ')} at end, 1-min max ${m.loadMaxDuring.toFixed(2)} during the steps · ${r.durationS.toFixed(0)} s · commit ${m.git}`,
  );
  lines.push('');
  if (r.mode === 'smoke')
    lines.push(
      '*A smoke run: every row once, at its smallest size, to show the bench still runs. Its figures say nothing about the goals; `npm run bench` (or `-- --quick`) measures them.*',
      '',
    );

  // ── targets ──
  const growth = ours.points.at(-1)!.medianMs / at('ours', first).medianMs;
  const maxAmp = ours.maxAmplification;
  const lowLast = at('lowdb', last);
  const sqlLast = at('sqlite', last);
  const oursLast = at('ours', last);
  lines.push('| target | measured | goal | |');
  lines.push('|---|---|---|---|');
  lines.push(
    `| per-step cost growth, step ${last} / step ${first} (median) | ${x(growth)} | ≤ 1.5 | ${mark(growth <= 1.5)} |`,
  );
  lines.push(
    `| write amplification, worst step | ${maxAmp ? `${x(maxAmp.value)} (step ${maxAmp.step})` : 'n/a'} | ≤ 3 at every step | ${maxAmp ? mark(maxAmp.value <= 3) : '?'} |`,
  );
  lines.push(
    `| resume latency, ${r.workload.steps}-step run, after the run was let go (log compacted), median | ${ms(r.resume.ours!.medianMs)} | ≤ 150 ms | ${mark(r.resume.ours!.medianMs <= 150)} |`,
  );
  const crashed = r.resume.ours_after_crash;
  if (crashed)
    lines.push(
      `| resume latency, ${r.workload.steps}-step run, after a crash (snapshot + segment as the kill left them), median | ${ms(crashed.medianMs)} | ≤ 100 ms | ${mark(crashed.medianMs <= 100)} |`,
    );
  const cc = r.crashCycle;
  if (cc)
    lines.push(
      `| resume latency, ${cc.steps}-step run, after a crash anywhere in the last steps (${cycleSpan(cc)}), the slowest point's median | ${ms(cc.worst.medianMs)} (step ${cc.worst.step}) | ≤ 100 ms | ${mark(cc.worst.medianMs <= 100)} |`,
    );
  lines.push(
    `| activation, ${r.activation.runs} runs (median) | ${ms(r.activation.medianMs)} | ≤ 50 ms | ${mark(r.activation.medianMs <= 50)} |`,
  );
  const st = r.storage.ours!;
  lines.push(
    `| storage growth, file bytes / content | ${x(st.ratioApparent)} | ≤ 2 | ${mark(st.ratioApparent <= 2)} |`,
  );
  lines.push(
    `| storage growth, allocated blocks / content | ${x(st.ratioAllocated)} | ≤ 2 | ${mark(st.ratioAllocated <= 2)} |`,
  );
  for (const d of r.distance)
    lines.push(
      `| distance to the disk's limit at step ${d.point} (per-step time ÷ barriers × 4 KB append + fdatasync) | ${x(d.value)} | ≤ 1.5 | ${mark(d.value <= 1.5)} |`,
    );
  for (const p of r.primitive.points) {
    const v = at('ours', p.point).medianMs / (3 * p.medianMs);
    lines.push(
      `| per-step time @${p.point} ÷ three raw 4 KB appends + fdatasync (median${runsOf(p.runs)}) | ${x(v)} | ≤ 1.5 | ${mark(v <= 1.5)} |`,
    );
  }
  const bw = oursLast.barriersWithEffects;
  const bo = oursLast.barriersWithout;
  lines.push(
    `| durable barriers per step @${last}, steps with side-effecting calls / without (median; a step's results counted with it) | ${bw === null ? 'n/a' : x(bw)} / ${bo === null ? 'n/a' : x(bo)} | ≤ 2 / ≤ 1 | ${mark((bw ?? 0) <= 2 && (bo ?? 0) <= 1)} |`,
  );
  const rf = r.runFiles;
  lines.push(
    `| files of the ${r.workload.steps}-step run, let go / after a crash (blobs apart) | ${rf.released.files.length} / ${rf.crashed.files.length} | ≤ 4 | ${mark(rf.released.files.length <= 4 && rf.crashed.files.length <= 4)} |`,
  );
  const fb = r.fixedBytes;
  lines.push(
    `| fixed bytes per step (tool outputs empty; index.json apart, see below) | ${bytes(fb.medianFixedLog)} | ≤ 1 KB | ${mark(fb.medianFixedLog <= 1024)} |`,
  );
  for (const p of r.points) {
    const worst = Math.max(...PEERS.map(([n]) => at('ours', p).medianMs / at(n, p).medianMs));
    lines.push(
      `| no slower than either peer: per-step time @${p} (ours / the faster peer, median) | ${x(worst)} | ≤ 1 | ${mark(worst <= 1)} |`,
    );
  }
  const peerResume = Math.min(...PEERS.map(([n]) => r.resume[n]!.medianMs));
  lines.push(
    `| no slower than either peer: resume after the run was let go (ours / the faster peer) | ${x(r.resume.ours!.medianMs / peerResume)} | ≤ 1 | ${mark(r.resume.ours!.medianMs <= peerResume)} |`,
  );
  if (crashed)
    lines.push(
      `| no slower than either peer: resume after a crash (ours / the faster peer) | ${x(crashed.medianMs / peerResume)} | ≤ 1 | ${mark(crashed.medianMs <= peerResume)} |`,
    );
  const vsLow = lowLast.medianMs / oursLast.medianMs;
  const vsSql = sqlLast.medianMs / oursLast.medianMs;
  lines.push(`| faster than whole-file rewrite at step ${last} | ${x(vsLow)}× | ≥ 10× | ${mark(vsLow >= 10)} |`);
  lines.push(`| faster than SqliteSaver at step ${last} | ${x(vsSql)}× | ≥ 2× | ${mark(vsSql >= 2)} |`);
  const ampVsLow =
    oursLast.amplification !== null && lowLast.amplification ? oursLast.amplification / lowLast.amplification : null;
  lines.push(
    `| write amplification vs whole-file rewrite at step ${last} | ${ampVsLow === null ? 'n/a' : ampVsLow > 0 ? `1/${x(1 / ampVsLow)}` : '0'} | ≤ 1/30 | ${ampVsLow === null ? '?' : mark(ampVsLow <= 1 / 30)} |`,
  );
  lines.push('');

  // ── side by side ──
  const head = ['figure', 'ours', ...PEERS.flatMap(([, label]) => [label, 'ours / peer'])];
  lines.push(`| ${head.join(' | ')} |`);
  lines.push(`|${head.map(() => '---').join('|')}|`);
  const row = (
    label: string,
    val: (name: string) => number | null,
    fmt: (v: number | null) => string,
    words: [string, string] = ['less', 'more'],
  ): void => {
    const o = val('ours');
    lines.push(
      `| ${label} | ${fmt(o)} | ${PEERS.map(([name]) => `${fmt(val(name))} | ${ratio(o, val(name), ...words)}`).join(' | ')} |`,
    );
  };
  const fmtMs = (v: number | null) => (v === null ? 'n/a' : ms(v));
  for (const p of r.points) {
    const w = at('ours', p).window;
    lines.push(
      `| per-step time @${p} (steps ${w.from}–${w.to}${runsOf(at('ours', p).runs)}), median / p95 | ${ms(at('ours', p).medianMs)} / ${ms(at('ours', p).p95Ms)} | ${PEERS.map(
        ([n]) =>
          `${ms(at(n, p).medianMs)} / ${ms(at(n, p).p95Ms)} | ${ratio(at('ours', p).medianMs, at(n, p).medianMs, 'faster', 'slower')}`,
      ).join(' | ')} |`,
    );
  }
  for (const p of r.points) row(`bytes written per step @${p} (median)`, (n) => at(n, p).bytesPerStep, bytes);
  for (const p of r.points)
    row(`write amplification @${p} (window Σ written / Σ content)`, (n) => at(n, p).amplification, x);
  row('write amplification, worst step', (n) => r.figures[n]!.maxAmplification?.value ?? null, x);
  row(`bytes written, whole run`, (n) => r.figures[n]!.totalBytesWritten, bytes);
  row(`durable barriers (fsync/fdatasync) per step @${last} (median)`, (n) => at(n, last).durableWritesPerStep, x);
  row(`on disk after ${r.workload.steps} steps (file bytes)`, (n) => r.storage[n]!.apparent, bytes);
  row('storage growth (file bytes / content)', (n) => r.storage[n]!.ratioApparent, x);
  row(`resume latency (median of ${r.resume.ours!.samples.length})`, (n) => r.resume[n]!.medianMs, fmtMs, [
    'faster',
    'slower',
  ]);
  row('resume latency (first, least warm)', (n) => r.resume[n]!.samples[0] ?? null, fmtMs, ['faster', 'slower']);
  lines.push('');

  // ── ours only ──
  lines.push('| ours only | value |');
  lines.push('|---|---|');
  lines.push(
    `| activation: openDiskStore + the Runs tree's first load (newest page, every unfinished run), ${r.activation.runs} runs, ${r.activation.loaded} loaded | median ${ms(r.activation.medianMs)}, first ${ms(r.activation.firstMs)} |`,
  );
  lines.push(
    `| list all ${r.listing.checkpoints} checkpoints of the ${r.workload.steps}-step run, ${r.listing.pages} pages of 50, fresh open | first page ${ms(r.listing.firstPageMs)}, all ${ms(r.listing.allPagesMs)} |`,
  );
  const crash = r.resume.ours_after_crash;
  if (crash) {
    lines.push(
      `| resume latency as after a crash (snapshot + the segment written since), median / first | ${ms(crash.medianMs)} / ${ms(crash.samples[0]!)} |`,
    );
  }
  if (cc) {
    const tails = cc.points.map((p) => p.segmentBytes);
    lines.push(
      `| resume after a crash at steps ${cycleSpan(cc)} (a second run, ours alone; median of ${cc.rounds} per point): fastest / slowest point, segment tail shortest / longest | ${ms(Math.min(...cc.points.map((p) => p.medianMs)))} / ${ms(cc.worst.medianMs)} (step ${cc.worst.step}); ${bytes(Math.min(...tails))} / ${bytes(Math.max(...tails))}${cc.compactedWithin ? ', a background compaction in between' : ', no compaction in between'} |`,
    );
  }
  if (r.resumeHeapBytes !== undefined)
    lines.push(
      `| the resuming contender's heap (its own thread's) as each resume began, after a full GC there (median over every contender's resumes) | ${bytes(r.resumeHeapBytes)} |`,
    );
  lines.push(
    `| letting the run go at the end (flush + one log compaction, off the step path) | ${ms(r.release.ms)}, ${bytes(r.release.bytes)}, ${r.release.files} durable barrier(s) |`,
  );
  lines.push(
    `| the run's folder: let go / after a crash | ${rf.released.files.join(', ')} / ${rf.crashed.files.join(', ')}; ${rf.released.blobs} blob(s) beside them |`,
  );
  lines.push(
    `| fixed bytes per step with index.json (written only when a listing's fields change), median of ${fb.steps} | ${bytes(fb.medianFixed)} (index.json ${bytes(fb.medianIndex)}; new content ${bytes(fb.medianContent)}) |`,
  );
  const oc = r.figures.ours!;
  const onPath = oc.maxAmplificationWithoutCompaction;
  lines.push(
    `| compaction while the run works: steps during which it wrote / its bytes in all / worst-step amplification without them | ${oc.compaction.steps} / ${bytes(oc.compaction.bytes)} / ${onPath ? `${x(onPath.value)} (step ${onPath.step})` : 'n/a'} |`,
  );
  for (const p of r.primitive.points) {
    const o = at('ours', p.point);
    lines.push(
      `| per-step time @${p.point} ÷ one raw 4 KB append + fdatasync, same process (medians ${ms(o.medianMs)} / ${ms(p.medianMs)}) | ${x(o.medianMs / p.medianMs)} |`,
    );
  }
  if (r.figures.bare)
    for (const p of r.primitive.points) {
      const b = at('bare', p.point);
      lines.push(
        `| the floor @${p.point}: a bare log with ours' barriers and none of its features (bench/contenders/bareLog.ts), per-step median ${ms(b.medianMs)} — ÷ three raw 4 KB appends + fdatasync / ours ÷ it | ${x(b.medianMs / (3 * p.medianMs))} / ${x(at('ours', p.point).medianMs / b.medianMs)} |`,
      );
    }
  for (const [name, what] of [
    ['api', 'no flush() between steps'],
    ['api_flush', 'flush() at the end of every step'],
  ] as const)
    if (r.figures[name])
      for (const p of r.points) {
        const a = at(name, p);
        const o = at('ours', p);
        lines.push(
          `| the public API @${p}: a plain loop through CheckpointStore, default options, no GC between steps, ${what} — per-step median / p95, its durable barriers per step / ÷ ours (the harnessed row) | ${ms(a.medianMs)} / ${ms(a.p95Ms)}, ${x(a.durableWritesPerStep)} / ${x(a.medianMs / o.medianMs)} |`,
        );
      }
  for (const p of r.points) {
    const o = at('ours', p);
    lines.push(
      `| per-step time @${p} ÷ one raw append + fdatasync of the step's own bytes (median over the window) | ${o.msOverRawOfStep === null ? 'n/a' : x(o.msOverRawOfStep)} |`,
    );
    lines.push(
      `| durable barriers per step @${p}: all steps / with side-effecting calls / without (median; a step's results counted with it) | ${x(o.durableWritesPerStep)} / ${o.barriersWithEffects === null ? 'n/a' : x(o.barriersWithEffects)} / ${o.barriersWithout === null ? 'n/a' : x(o.barriersWithout)} |`,
    );
  }
  for (const [i, p] of r.primitive.points.entries()) {
    const o = at('ours', p.point);
    lines.push(
      `| distance to the disk's limit @${p.point}: median per step of (time / its durable barriers) ${ms(o.msPerDurableWrite)} / raw append ${ms(p.medianMs)} (median ${x(o.durableWritesPerStep)} barriers per step) | ${x(r.distance[i]!.value)} |`,
    );
  }
  lines.push(
    `| raw 4 KB append + fdatasync to an open file, whole run | median ${ms(r.primitive.medianMs)}, p95 ${ms(r.primitive.p95Ms)}, p99 ${ms(r.primitive.p99Ms)} |`,
  );
  return lines.join('\n');
}
