// Is a change to the store faster? `npm run bench:ab`: the store of the working tree against the
// store of another commit (default HEAD), in one process, on the bench's workload, steps 6–15 (the
// window of the step-10 row), each step after a full GC as in the bench. A diagnostic beside the
// benchmark (bench/README.md, "A/B"), not a goal row.
//
// Two runs of the same code, one after the other, differ (the machine's speed drifts) by more
// than most changes to the step. Here the contenders take turns step by step in
// one process, so the drift hits all of them alike, and the commit runs twice — two copies exported
// from git, each a module tree of its own, as the working tree's is — so the run measures its own
// noise: the difference between the two copies of the same code.
//   --base REV   the commit to compare with (default HEAD); exported read-only (git archive)
//   --runs R     fresh runs (default 30; one more before them, not counted, warms the code up)
//   --cpu-only   fdatasync replaced by a turn of the event loop (as bench:calls --cpu-only)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { argValue, cpuOnlyIfAsked, FROM, runsArg, TO } from './diagnostic';
import { makeContender } from './isolated';
import { exposeGc, fullGc } from './measure';
import { paired } from './stats';
import { Workload } from './workload';
import type { Contender } from './contenders/types';

const REPO = path.resolve(__dirname, '..');

/** `rev`'s src/ and bench/ in `dir`, with the working tree's node_modules; read-only in git (no index, no branch). */
function exportRev(rev: string, dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', rev, 'src', 'bench', 'package.json', 'tsconfig.json'], {
    cwd: REPO,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}

type Make = typeof makeContender;

async function main(): Promise<void> {
  const runs = runsArg(30);
  const base = argValue('--base') ?? 'HEAD';
  let commit: string;
  try {
    commit = execFileSync('git', ['rev-parse', '--verify', '--quiet', `${base}^{commit}`], { cwd: REPO })
      .toString()
      .trim();
  } catch {
    throw new Error(`--base ${base} is not a commit of this repository`);
  }
  const cpuOnly = cpuOnlyIfAsked();
  exposeGc();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'waypoints-ab-'));
  try {
    const makers: Make[] = [];
    for (const copy of ['a', 'b']) {
      exportRev(commit, path.join(root, copy));
      const mod = (await import(path.join(root, copy, 'bench', 'isolated.ts'))) as { makeContender: Make };
      makers.push(mod.makeContender);
    }
    makers.push(makeContender);
    const names = [`${commit.slice(0, 7)}`, `${commit.slice(0, 7)} again`, 'working tree'];
    const steps: number[][] = names.map(() => []);
    for (let r = -1; r < runs; r++) {
      process.stderr.write(`\r  run ${r + 2}/${runs + 1}`);
      const w = new Workload(1, 'bench-run-0001');
      const cs: Contender[] = makers.map((make, i) => make('ours', path.join(root, 'stores', `${r}-${i}`), w));
      for (const c of cs) await c.start();
      for (let s = 1; s <= TO; s++) {
        const plan = w.nextStep();
        for (let k = 0; k < cs.length; k++) {
          // Who goes first turns with the step and the run: each contender is first, second and third alike.
          const i = (k + s + r + 1) % cs.length;
          const c = cs[i]!;
          let ms = 0;
          for (const op of plan.ops) {
            if (op.kind === 'model') {
              await c.modelWait?.(); // (off the clock, as in the bench)
              continue;
            }
            const t0 = process.hrtime.bigint();
            await c.apply(op);
            ms += Number(process.hrtime.bigint() - t0) / 1e6;
          }
          await c.endStep();
          if (r >= 0 && s >= FROM) steps[i]!.push(ms);
          fullGc(); // off the clock, before the next contender's step (as the bench)
        }
      }
      for (const c of cs) await c.close();
    }
    process.stderr.write('\n');
    const f = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(3)} ms`;
    const noise = paired(steps[1]!, steps[0]!);
    const change = paired(steps[2]!, steps[0]!);
    console.log(
      `\nThe step of ours (steps ${FROM}–${TO} of ${runs} runs, ${steps[0]!.length} steps each, a full GC between steps${cpuOnly ? ', fdatasync replaced by a turn of the event loop' : ''}):\n`,
    );
    console.log(
      '| store | step, median | − the commit, per step (median of the paired differences) | steps faster than the commit |',
    );
    console.log('|---|---|---|---|');
    console.log(`| ${names[0]} (the commit) | ${change.medianB.toFixed(3)} ms | | |`);
    console.log(
      `| ${names[1]} (the same code: the run's noise) | ${noise.medianA.toFixed(3)} ms | ${f(noise.medianDiff)} | ${(noise.fasterShare * 100).toFixed(0)} % |`,
    );
    console.log(
      `| ${names[2]} | ${change.medianA.toFixed(3)} ms | ${f(change.medianDiff)} | ${(change.fasterShare * 100).toFixed(0)} % |`,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
