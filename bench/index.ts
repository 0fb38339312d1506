// `npm run bench` (N = 1000 steps), `npm run bench -- --quick` (N = 100) and `-- --smoke` (N = 20,
// every row at its smallest size, once: what `npm test` runs so the bench never rots; its figures are
// not comparable): runs the workload against ours and the two peers interleaved in one process, then
// prints a Markdown table to stdout and writes bench/results/latest.json. Progress goes to stderr.
// See bench/README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureActivation, measureCrashCycle, measureFixedBytes, measureListing, runFiles, tempDirIn } from './extras';
import { fileJournalReport, measureFileJournal, type FileJournalResult } from './files';
import { diskUsage } from './fsutil';
import { IsolatedContender, openOurs } from './isolated';
import { machineInfo } from './machine';
import { exposeGc, measureResume, measureRun, type Resumable, type RunSamples } from './measure';
import { RawAppend } from './primitive';
import { measureRunView, runViewTable } from './runView';
import { contextTable, measureContext } from './context';
import { type BenchResults, buildReport, type ReleaseCost } from './report';
import { median } from './stats';
import { contenderFigures, distanceToLimit, pointsFor, primitiveFigures, withEarlyRuns } from './summarize';
import { Workload } from './workload';
import { measureWorkspaceTools, toolsReport } from './workspaceTools';
import { measureShared, sharedReport } from './shared';
import { measureSandbox, sandboxBenchReport } from './sandbox';
import { measureManyRuns, measureScale } from './scale';
import { manyRunsReport, scaleReport } from './scaleReport';

interface Options {
  quick: boolean;
  smoke: boolean;
  steps: number;
  repeats: number;
  /**
   * Short runs of the same seed (EARLY_STEPS steps each, every contender), whose steps join the window
   * around step 10 only: one run gives that window ten samples, and ten samples of a step of a few
   * milliseconds move its ratios too much from one full run to the next (bench/README.md).
   */
  earlyRuns: number;
  warmupSteps: number;
  resumeRounds: number;
  activationRuns: number;
  activationRepeats: number;
  seed: number;
  keep: boolean;
  dir: string;
}

function parseArgs(argv: string[]): Options {
  const smoke = argv.includes('--smoke');
  const quick = smoke || argv.includes('--quick');
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const num = (name: string, fallback: number): number => {
    const v = value(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} needs a positive integer, got ${v}`);
    return n;
  };
  return {
    quick,
    smoke,
    steps: num('--steps', smoke ? 20 : quick ? 100 : 1000),
    repeats: num('--repeats', 1),
    earlyRuns: num('--early-runs', smoke ? 1 : quick ? 2 : 7),
    warmupSteps: smoke ? 3 : quick ? 5 : 20,
    resumeRounds: smoke ? 1 : quick ? 3 : 31,
    activationRuns: smoke ? 100 : 1000,
    activationRepeats: smoke ? 1 : quick ? 3 : 7,
    seed: num('--seed', 20240601),
    keep: argv.includes('--keep'),
    dir: value('--dir') ?? os.tmpdir(),
  };
}

const mode = (o: Options): string => (o.smoke ? 'smoke' : o.quick ? 'quick' : 'full');
const log = (m: string): void => void process.stderr.write(`${m}\n`);
const RUN_ID = 'bench-run-0001';
/** Steps of an early run: the window around step 10 (6–15), and step 16 for the barrier that carries step 15's results. */
const EARLY_STEPS = 16;
const RESULTS_DIR = path.join(__dirname, 'results');
/**
 * Ours, the two peers, the floor ours' step is measured against (contenders/bareLog.ts: never a peer,
 * never resumed), and ours again through the public API as a caller loops over it (contenders/ours.ts,
 * ApiContender: with and without a flush() per step; not resumed, the files are ours').
 */
const KINDS = ['ours', 'lowdb', 'sqlite', 'bare', 'api', 'api_flush'] as const;

/** The contenders, each on a thread of its own (isolated.ts), over the seeded workload's run. */
function contendersFor(base: string, seed: number): IsolatedContender[] {
  return KINDS.map((k) => new IsolatedContender(k, tempDirIn(base, k), seed, RUN_ID));
}

/**
 * The floor is only a floor if it makes ours' durable barriers: step by step the same number, except
 * in a step during which ours' background compaction synced its snapshot, or a resume point was
 * written (counted in that step).
 */
function checkFloorBarriers(samples: RunSamples): void {
  const ours = samples.byContender.ours!;
  const bare = samples.byContender.bare!;
  for (const [i, o] of ours.entries()) {
    const b = bare[i]!;
    if (
      o.compactionBytes === 0 &&
      (o.pointBytes ?? 0) === 0 &&
      (o.durableWrites !== b.durableWrites || o.leadBarriers !== b.leadBarriers)
    )
      throw new Error(
        `the bare log made ${b.durableWrites} barriers in step ${o.step}, ours ${o.durableWrites}: the floor no longer follows ours`,
      );
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  exposeGc();
  const root = fs.mkdtempSync(path.join(opts.dir, 'waypoints-bench-'));
  /** The contenders' threads, ended when the bench ends (or fails). */
  const threads: IsolatedContender[] = [];
  const startedAt = performance.now();
  const fileJournal = () =>
    measureFileJournal(
      tempDirIn(root, 'files'),
      opts.smoke
        ? { edits: 10, scanFiles: 1_000, rounds: 1 }
        : { edits: opts.quick ? 100 : 1000, scanFiles: opts.quick ? 5_000 : 50_000, rounds: opts.quick ? 3 : 5 },
    );
  const shared = () =>
    measureShared({
      steps: opts.steps,
      seed: opts.seed,
      warmupSteps: opts.warmupSteps,
      resumeRounds: opts.resumeRounds,
      runId: RUN_ID,
      log,
    });
  if (process.argv.includes('--shared-only')) {
    // The shared store's rows alone (ours on PostgreSQL vs PostgresSaver, on a throwaway server).
    process.stdout.write(sharedReport(await shared()) + '\n');
    fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  const contextFigures = () => measureContext({ steps: opts.smoke ? 20 : opts.quick ? 100 : 1000, window: 128_000 });
  if (process.argv.includes('--context-only')) {
    process.stdout.write(contextTable(await contextFigures()) + '\n');
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes('--run-view-only')) {
    // The run view's rows alone (they build their own 1000-step run).
    const runView = await measureRunView({
      steps: 1000,
      streamSeconds: opts.quick ? 3 : 10,
      repeats: 3,
      dir: root,
      log,
    });
    process.stdout.write(runViewTable(runView) + '\n');
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes('--scale')) {
    // The scale run alone: a 10,000-step run and a store of 10,000 runs, on disk and on PostgreSQL.
    const value = (name: string) => process.argv[process.argv.indexOf(name) + 1];
    const scaleOpts = {
      steps: process.argv.includes('--steps') ? opts.steps : 10_000,
      runs: process.argv.includes('--runs') ? Number(value('--runs')) : 10_000,
      seed: opts.seed,
      condenseEvery: 40,
      resumeRounds: 7,
      dir: root,
      noView: process.argv.includes('--no-view'),
      diskOnly: process.argv.includes('--disk-only'),
      log,
    };
    if (process.argv.includes('--runs-only')) {
      // The store of many runs alone (activation, the Runs tree's first load, the heap they hold).
      const start = os.loadavg();
      const many = await measureManyRuns(scaleOpts);
      const report = manyRunsReport(many, { start, end: os.loadavg() });
      fs.mkdirSync(RESULTS_DIR, { recursive: true });
      fs.writeFileSync(
        path.join(RESULTS_DIR, 'scale-runs.json'),
        JSON.stringify({ ...many, table: report }, null, 2) + '\n',
      );
      process.stdout.write(report + '\n');
      if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
      return;
    }
    const scale = await measureScale(scaleOpts);
    const report = scaleReport(scale);
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(path.join(RESULTS_DIR, 'scale.json'), JSON.stringify({ ...scale, table: report }, null, 2) + '\n');
    process.stdout.write(report + '\n');
    log(
      `bench: scale done in ${((performance.now() - startedAt) / 1000).toFixed(0)} s; bench/results/scale.json written`,
    );
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  const sandboxFigures = () => measureSandbox({ dir: root, rounds: opts.smoke ? 2 : opts.quick ? 10 : 50, log });
  if (process.argv.includes('--sandbox-only')) {
    // The command sandbox's rows alone (a small workspace of their own).
    process.stdout.write(sandboxBenchReport(await sandboxFigures()) + '\n');
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes('--files-only')) {
    // The file journal's rows alone (they do not depend on the store workload).
    process.stdout.write(fileJournalReport(await fileJournal()) + '\n');
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    return;
  }
  const machine = machineInfo(root);
  log(
    `bench: ${mode(opts)}, N = ${opts.steps}, repeats = ${opts.repeats}, in ${root} (${machine.tempFs}), load ${machine.loadAvg.map((l) => l.toFixed(2)).join(' ')}`,
  );
  try {
    // Warm-up: JIT, module loading and first-file costs are paid before step 1 — in each contender's
    // own thread (below, another seed's run, discarded), and for the raw append here.
    const warmRaw = new RawAppend(tempDirIn(root, 'warmup/raw'));
    for (let i = 0; i < opts.warmupSteps * 3; i++) await warmRaw.once();
    await warmRaw.close();

    const points = pointsFor(opts.steps);
    const runs: RunSamples[] = [];
    // Other work on the machine skews absolute times (ratios less so): sampled so the report says how loaded it was.
    const loadDuring: number[] = [];
    let last:
      | {
          workload: Workload;
          contenders: IsolatedContender[];
          dir: string;
          crash: Resumable;
          release: ReleaseCost;
          runFiles: BenchResults['runFiles'];
        }
      | undefined;
    for (let r = 0; r < opts.repeats; r++) {
      const dir = tempDirIn(root, `run${r}`);
      const workload = new Workload(opts.seed, RUN_ID);
      const contenders = contendersFor(dir, opts.seed);
      threads.push(...contenders);
      for (const c of contenders)
        await c.warmUp(tempDirIn(root, `warmup/${r}-${c.name}`), opts.seed + 1, opts.warmupSteps);
      const tick = Math.max(1, Math.floor(opts.steps / 10));
      const samples = await measureRun(workload, contenders, new RawAppend(tempDirIn(dir, 'raw')), {
        steps: opts.steps,
        primitivePerStep: 3,
        onProgress: (s) => {
          if (s % tick === 0) loadDuring.push(os.loadavg()[0]!);
          if (s % tick === 0)
            log(
              `  repeat ${r + 1}/${opts.repeats}: step ${s}/${opts.steps} (${((performance.now() - startedAt) / 1000).toFixed(0)} s)`,
            );
        },
      });
      checkFloorBarriers(samples);
      const ours = contenders[0]!;
      await ours.idle();
      const crash = await ours.crashCopy(path.join(dir, 'ours-after-crash'));
      const filesAfterCrash = runFiles(path.join(dir, 'ours-after-crash'), RUN_ID);
      // Letting the run go flushes and compacts its log (once per run, off the step path): timed apart, in its thread.
      const before = { bytes: await ours.bytesWritten(), files: await ours.durableWrites() };
      await ours.close();
      const release = {
        ms: ours.closeMs,
        bytes: (await ours.bytesWritten()) - before.bytes,
        files: (await ours.durableWrites()) - before.files,
      };
      for (const c of contenders.slice(1)) await c.close();
      runs.push(samples);
      if (last) for (const c of last.contenders) await c.dispose();
      if (last && !opts.keep) fs.rmSync(last.dir, { recursive: true, force: true });
      last = {
        workload,
        contenders,
        dir,
        crash,
        release,
        runFiles: { released: runFiles(ours.dir, RUN_ID), crashed: filesAfterCrash },
      };
    }
    // The window around step 10 again, in short runs of their own: fresh stores, fresh threads, the same steps.
    const early: RunSamples[] = [];
    if (opts.steps >= EARLY_STEPS)
      for (let r = 0; r < opts.earlyRuns; r++) {
        log(`  early run ${r + 1}/${opts.earlyRuns}: steps 1–${EARLY_STEPS} (the window around step 10) …`);
        const dir = tempDirIn(root, `early${r}`);
        const cs = contendersFor(dir, opts.seed);
        threads.push(...cs);
        for (const c of cs)
          await c.warmUp(tempDirIn(root, `warmup/early${r}-${c.name}`), opts.seed + 1, opts.warmupSteps);
        const samples = await measureRun(new Workload(opts.seed, RUN_ID), cs, new RawAppend(tempDirIn(dir, 'raw')), {
          steps: EARLY_STEPS,
          primitivePerStep: 3,
        });
        checkFloorBarriers(samples);
        for (const c of cs) await c.close();
        for (const c of cs) await c.dispose();
        if (!opts.keep) fs.rmSync(dir, { recursive: true, force: true });
        early.push(samples);
      }
    const { workload, contenders, crash, release } = last!;
    log(`  conversation at step ${opts.steps}: ${(workload.conversationBytes / 1e6).toFixed(2)} MB; resume …`);
    const stores = contenders.filter((c) => ['ours', 'lowdb', 'sqlite'].includes(c.name));
    const storage = Object.fromEntries(stores.map((c) => [c.name, diskUsage(c.dir)]));
    const resumeHeap: number[] = [];
    const resume = await measureResume(
      [...stores, crash],
      opts.resumeRounds,
      workload.lastSnapshotMessages,
      resumeHeap,
    );
    const cycleEvery = Math.max(1, Math.round(opts.steps / 100));
    const cycleFrom = opts.steps - 10 * cycleEvery;
    log(`  resume after a crash at steps ${cycleFrom}–${opts.steps}, every ${cycleEvery} (ours) …`);
    const crashCycle = await measureCrashCycle(openOurs, tempDirIn(root, 'crash-cycle'), {
      seed: opts.seed,
      runId: RUN_ID,
      steps: opts.steps,
      from: cycleFrom,
      every: cycleEvery,
      rounds: opts.smoke ? 1 : opts.quick ? 3 : 7,
    });
    log('  listing checkpoints (ours) …');
    const listing = await measureListing(openOurs, contenders[0]!.dir, RUN_ID);
    if (listing.checkpoints !== workload.checkpointCount)
      throw new Error(`listing found ${listing.checkpoints} checkpoints, wrote ${workload.checkpointCount}`);
    log(`  activation with ${opts.activationRuns} runs (ours) …`);
    const activation = await measureActivation(
      openOurs,
      tempDirIn(root, 'activation'),
      opts.activationRuns,
      opts.activationRepeats,
    );

    log('  fixed bytes per step (empty tool outputs, ours) …');
    const fixedBytes = await measureFixedBytes(
      openOurs,
      tempDirIn(root, 'fixed'),
      opts.smoke ? 10 : opts.quick ? 30 : 100,
    );
    const storeOnly = process.argv.includes('--store-only');

    const toolsSize = opts.smoke
      ? { srcFiles: 500, distFiles: 50, repeats: 1 }
      : opts.quick
        ? { srcFiles: 5_000, distFiles: 500, repeats: 3 }
        : { srcFiles: 32_000, distFiles: 2_000, repeats: 7 };
    if (!storeOnly)
      log(
        `  workspace tools on ${toolsSize.srcFiles + toolsSize.distFiles} generated files, ripgrep vs the Node fallback …`,
      );
    const workspaceTools = storeOnly ? undefined : await measureWorkspaceTools({ dir: root, ...toolsSize });
    const files = storeOnly ? undefined : await fileJournal();

    const figures = Object.fromEntries(
      contenders.map((c) => [
        c.name,
        withEarlyRuns(
          contenderFigures(runs, c.name, points),
          (ps) => contenderFigures([...runs, ...early], c.name, ps).points,
          runs.length,
          early.length,
        ),
      ]),
    );
    const primitive = primitiveFigures(runs, points);
    primitive.points = withEarlyRuns(
      primitive,
      (ps) => primitiveFigures([...runs, ...early], ps).points,
      runs.length,
      early.length,
    ).points;
    const results: BenchResults & { options: Options; samples: unknown; files: FileJournalResult | undefined } = {
      mode: mode(opts),
      machine: { ...machine, loadAvgAfter: os.loadavg(), loadMaxDuring: Math.max(...loadDuring) },
      durationS: (performance.now() - startedAt) / 1000,
      options: opts,
      workload: {
        steps: opts.steps,
        seed: opts.seed,
        conversationBytes: workload.conversationBytes,
        contentBytes: workload.totalContentBytes,
        checkpoints: workload.checkpointCount,
        effects: workload.effectCount,
        toolCalls: workload.toolCallCount,
      },
      points,
      figures,
      primitive,
      distance: distanceToLimit(figures.ours!, primitive.points),
      resume: Object.fromEntries(Object.entries(resume).map(([k, v]) => [k, { medianMs: median(v), samples: v }])),
      resumeHeapBytes: median(resumeHeap),
      crashCycle,
      storage: Object.fromEntries(
        Object.entries(storage).map(([k, u]) => [
          k,
          {
            ...u,
            ratioApparent: u.apparent / workload.totalContentBytes,
            ratioAllocated: u.allocated / workload.totalContentBytes,
          },
        ]),
      ),
      activation,
      listing,
      files,
      release,
      runFiles: last!.runFiles,
      fixedBytes,
      notes: Object.assign({}, ...contenders.map((c) => c.notes())) as Record<string, string>,
      samples: runs.map((s) => ({
        contentBytes: s.contentBytes,
        startBytes: s.startBytes,
        byContender: s.byContender,
      })),
    };
    log('  shared store: ours on PostgreSQL vs LangGraph PostgresSaver, one server …');
    const sharedResults = await shared();
    Object.assign(results, { shared: sharedResults });
    const sections = [buildReport(results), sharedReport(sharedResults)];
    if (!storeOnly) {
      log('  run view …');
      const runView = await measureRunView({
        steps: opts.smoke ? 100 : 1000,
        streamSeconds: opts.smoke ? 1 : opts.quick ? 3 : 10,
        repeats: opts.smoke ? 1 : 3,
        dir: tempDirIn(root, 'run-view'),
        log,
      });
      log('  context management …');
      const context = await contextFigures();
      log('  command sandbox …');
      const sandbox = await sandboxFigures();
      sections.push(
        toolsReport(workspaceTools!, toolsSize.repeats),
        runViewTable(runView),
        fileJournalReport(files!),
        sandboxBenchReport(sandbox),
        contextTable(context),
      );
      Object.assign(results, { runView, context, sandbox });
    }
    const report = sections.join('\n\n');
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(
      path.join(RESULTS_DIR, 'latest.json'),
      JSON.stringify({ ...results, workspaceTools, table: report }, null, 2) + '\n',
    );
    process.stdout.write(report + '\n');
    log(`bench: done in ${results.durationS.toFixed(0)} s; bench/results/latest.json written`);
  } finally {
    for (const t of threads) await t.dispose();
    if (!opts.keep) fs.rmSync(root, { recursive: true, force: true });
    else log(`bench: files kept in ${root}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
