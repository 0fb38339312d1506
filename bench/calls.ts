// Where ours' step goes beyond the floor's, store call by store call: `npm run bench:calls`.
// A diagnostic beside the benchmark (bench/README.md, "Per call"), not a goal row. Ours and the
// floor (contenders/bareLog.ts) run the bench's workload in one process, on fresh stores, step by
// step in turns (which goes first alternates), each step after a full GC as in the bench. Every call
// of steps 6–15 is timed on its own: the window the step-10 row is taken over.
//   --runs R     fresh runs (default 8; one more before them, not counted, warms the code up)
//   --cpu-only   fdatasync is replaced by a turn of the event loop: what is left is CPU and the
//                file system's page cache, so what a call costs beyond the disk shows alone
//   --between B  what comes between two steps: `gc` (default, as in the bench: a full GC), `none`
//                (the caches as the last step left them: what the calls cost warm), or `evict`
//                (64 MB read and written instead of a GC: the CPU caches emptied, the heap untouched)
//   --profile    V8's sampling profiler meanwhile: where ours' counted calls spent their time, by
//                file and by function (self time, then inclusive), and the profile in
//                bench/results/calls.cpuprofile
//                (the times in the first table are then a little slower)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CallProfiler, nowUs, selfTimeIn, type Profile, type Span } from './callProfile';
import { argValue, cpuOnlyIfAsked, FROM, runsArg, TO } from './diagnostic';
import { makeContender } from './isolated';
import { exposeGc, fullGc } from './measure';
import { median, sum } from './stats';
import { type Op, Workload } from './workload';
import type { Contender } from './contenders/types';

/** What a call is, as the table names it: a checkpoint by its phase, a barrier by its place in the step. */
function label(op: Op, barriers: number): string {
  if (op.kind === 'append') return `append ${op.input.phase}`;
  if (op.kind === 'barrier') return `makeDurable #${barriers + 1}`;
  if (op.kind === 'fence') return 'assertOwner';
  const later = 'durability' in op && op.durability ? ` (${op.durability})` : '';
  return op.kind === 'intent' ? `recordIntent${later}` : `recordResult${later}`;
}

const BETWEEN = ['gc', 'none', 'evict'] as const;
type Between = (typeof BETWEEN)[number];
const BETWEEN_SAYS: Record<Between, string> = {
  gc: 'a full GC',
  none: 'nothing',
  evict: 'the CPU caches emptied (no GC)',
};

/** Touches one byte of every 64 (a cache line) of a buffer far larger than the CPU's caches. */
function evictCaches(buf: Buffer): void {
  for (let i = 0; i < buf.length; i += 64) buf[i] = (buf[i]! + 1) & 0xff;
}

async function main(): Promise<void> {
  const runs = runsArg(8);
  const between = (argValue('--between') ?? 'gc') as Between;
  if (!BETWEEN.includes(between)) throw new Error(`--between must be one of ${BETWEEN.join(', ')}, got ${between}`);
  const evictBuf = between === 'evict' ? Buffer.alloc(64 * 1024 * 1024) : null;
  const cpuOnly = cpuOnlyIfAsked();
  exposeGc();
  const profiler = process.argv.includes('--profile') ? new CallProfiler() : null;
  /** Ours' counted calls, for the profile. */
  const spans: Span[] = [];
  await profiler?.start(50);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'waypoints-calls-'));
  const samples: Record<'ours' | 'bare', Map<string, number[]>> = { ours: new Map(), bare: new Map() };
  const order: string[] = [];
  /** Each counted step's calls together, per contender (its median is what the bench's step row takes). */
  const stepMs: Record<'ours' | 'bare', number[]> = { ours: [], bare: [] };
  try {
    for (let r = -1; r < runs; r++) {
      const w = new Workload(1, 'bench-run-0001');
      const pair: Contender[] = (['ours', 'bare'] as const).map((k) =>
        makeContender(k, path.join(root, `${r}-${k}`), w),
      );
      for (const c of pair) await c.start();
      for (let s = 1; s <= TO; s++) {
        const plan = w.nextStep();
        /** A step of the window (the warm-up run and the steps before the window are not counted). */
        const counted = r >= 0 && s >= FROM;
        for (let k = 0; k < pair.length; k++) {
          const c = pair[(k + s) % pair.length]!;
          let barriers = 0;
          let inStep = 0;
          for (const op of plan.ops) {
            if (op.kind === 'model') {
              await c.modelWait?.(); // (off the clock, as in the bench)
              continue;
            }
            const name = label(op, barriers);
            if (op.kind === 'barrier') barriers++;
            // (one clock for the table and the profile: the profiler stamps its samples in it)
            const us0 = nowUs();
            await c.apply(op);
            const us1 = nowUs();
            const ms = (us1 - us0) / 1000;
            inStep += ms;
            if (!counted) continue;
            if (profiler && c.name === 'ours') spans.push([us0, us1]);
            const by = samples[c.name as 'ours' | 'bare'];
            if (!by.has(name)) {
              by.set(name, []);
              if (!order.includes(name)) order.push(name);
            }
            by.get(name)!.push(ms);
          }
          await c.endStep();
          if (counted) stepMs[c.name as 'ours' | 'bare'].push(inStep);
          // Off the clock, before the next contender's step: a full GC collects what this one left (as
          // the bench); `evict` empties the caches instead; `none` leaves both (a scavenge may then
          // land on a step).
          if (between === 'gc') fullGc();
          else if (evictBuf) evictCaches(evictBuf);
        }
      }
      for (const c of pair) await c.close();
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  const steps = runs * (TO - FROM + 1);
  const f = (ms: number) => ms.toFixed(3);
  console.log(
    `\nPer store call, steps ${FROM}–${TO} of ${runs} runs (${steps} steps each), ${BETWEEN_SAYS[between]} between steps${cpuOnly ? ', fdatasync replaced by a turn of the event loop' : ''}:\n`,
  );
  console.log(
    '| call | calls per step | ours, median | the floor, median | ours per step | the floor per step | ours − the floor per step |',
  );
  console.log('|---|---|---|---|---|---|---|');
  let ours = 0;
  let bare = 0;
  for (const name of order) {
    const o = samples.ours.get(name) ?? [];
    const b = samples.bare.get(name) ?? [];
    const oMs = sum(o) / steps;
    const bMs = sum(b) / steps;
    ours += oMs;
    bare += bMs;
    console.log(
      `| ${name} | ${(o.length / steps).toFixed(2)} | ${o.length ? f(median(o)) : '–'} ms | ${b.length ? f(median(b)) : '–'} ms | ${f(oMs)} ms | ${f(bMs)} ms | ${f(oMs - bMs)} ms |`,
    );
  }
  console.log(`| **the step** | | | | **${f(ours)} ms** | **${f(bare)} ms** | **${f(ours - bare)} ms** |`);
  const [om, bm] = [median(stepMs.ours), median(stepMs.bare)];
  console.log(
    `| the step, median (as the bench's row) | | | | ${f(om)} ms | ${f(bm)} ms | ours ÷ the floor ${(om / bm).toFixed(2)} |`,
  );
  console.log("\nPer step: what the calls of that kind took in a step, the mean over the window's steps.");
  if (profiler) await printProfile(await profiler.stop(), spans);
}

async function printProfile(profile: Profile, spans: Span[]): Promise<void> {
  const repo = path.resolve(__dirname, '..');
  const out = path.join(repo, 'bench', 'results', 'calls.cpuprofile');
  await fs.promises.writeFile(out, JSON.stringify(profile));
  const t = selfTimeIn(profile, spans, repo);
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  console.log(
    `\nWhere ours' counted calls spent their time: ${t.samples} samples, self time (the whole profile: ${path.relative(repo, out)}).\n`,
  );
  const table = (what: string, rows: [string, number][]) =>
    console.log(`| ${what} | share |\n|---|---|\n${rows.map(([k, share]) => `| ${k} | ${pct(share)} |`).join('\n')}`);
  table('file', t.byFile.slice(0, 15));
  console.log();
  table('function', t.byFunction.slice(0, 20));
  const all = selfTimeIn(profile, spans, repo, true);
  console.log(
    "\nThe same samples, inclusive: a file's or function's share counts every sample it is on the stack of.\n",
  );
  table('file', all.byFile.filter(([k]) => k.startsWith('src/')).slice(0, 20));
  console.log();
  table('function', all.byFunction.filter(([k]) => !/^\((root|program|anonymous)\)/.test(k)).slice(0, 30));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
