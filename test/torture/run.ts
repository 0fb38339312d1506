// SIGKILL torture. A child process writes a growing run and ACKs every write; the parent kills it
// at a seeded random moment, reopens the store, and checks: every ACKed durable write present and
// intact (records, snapshots, effects, approvals, blobs), 0 corrupt or quarantined files, every side
// effect run once or re-run only behind a distinct "uncertain" approval, and a finished run's
// transcript equal to the uninterrupted one. Then a new child continues the run, and is killed again.
//
//   npm run torture -- --trials 500 [--seed 7] [--tsx] [--keep] [--pg] [--worker-trials 30 | --no-workers]
//
// Then the workers' takeover test (test/unit/cli/workerTakeover.int.test.ts) at its soak count: 30
// SIGKILLs of the worker holding a run (`npm test` runs it with fewer).
//
// --pg runs it against the shared store (PostgreSQL, a throwaway cluster): the same child, the same
// checks, the rows instead of the files (backend.ts).
//
// The child is bundled once with esbuild (the extension's own bundler): `node --import tsx` takes
// ~0.9 s per start on a 2-vCPU machine, the bundle ~0.15 s. --tsx runs it through tsx instead.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleScript } from '../support/bundleChild';
import { openDiskStoreReady } from '../../src/store/disk/store';
import { readWitnessFile, WITNESS_FILE } from '../../src/store/disk/witness';
import { parseSegment } from '../../src/store/disk/segment';
import type { CorruptionReport } from '../../src/store/api/types';
import { diskBackend, type TortureBackend } from './backend';
import { pgBackend } from './pgTorture';
import { workerTakeover } from './workers';
import { startCluster } from '../support/postgres';
import { ACK, canonical, digest, expectedTranscript, mulberry32, type Ack } from './shared';

export interface TortureOptions {
  trials: number;
  seed?: number;
  dir?: string;
  /** Run the child through tsx instead of a bundle. */
  tsx?: boolean;
  steps?: number;
  /** Every Nth killed trial then cuts the run's newest commit off its segment (a lost tail); 0 = never. */
  lostTailEvery?: number;
  /** The store under test (default: the disk store in `<dir>/store`). */
  backend?: (dir: string) => TortureBackend;
  /**
   * What happens at the drawn moment: the child is SIGKILLed (default), or `act` runs while the child
   * goes on (a database restart, or a stop): the child then finishes, or pauses on the store's error;
   * `heal` runs once the child has exited (the database started again).
   */
  fault?: { name: string; act: () => void; heal?: () => void };
  /**
   * After `trials`, more trials (up to `maxTrials`) until this holds: how often a fault lands where
   * the test needs it depends on the machine's load, not on the product.
   */
  until?: (r: TortureResult) => boolean;
  maxTrials?: number;
  log?: (line: string) => void;
}

export interface TortureResult {
  trials: number;
  kills: number;
  /** Trials in which the fault acted (a database restart or stop, while the child ran on). */
  faults: number;
  /** Children that paused on a store error (the database away) and were resumed by the next. */
  pauses: number;
  runsFinished: number;
  /** Lost-tail trials: the newest commit deleted after a kill; how many were acknowledged (and so must be reported). */
  lostTails: { trials: number; acknowledged: number; withEffects: number };
  failures: string[];
  dir: string;
}

export interface RunState {
  runId: string | null;
  seed: number;
  steps: number;
  recs: Map<number, { h: string; snap: string | null; durable: boolean }>;
  effects: Map<string, string>;
  approvals: Map<string, string>;
  blobs: Set<string>;
  done: boolean;
}

export const newRunState = (seed: number, steps: number): RunState => ({
  runId: null,
  seed,
  steps,
  recs: new Map(),
  effects: new Map(),
  approvals: new Map(),
  blobs: new Set(),
  done: false,
});

/** Bundles a child script (test/torture/<name>.ts) into outDir; returns the .cjs path. */
export function bundleChild(outDir: string, name = 'child'): Promise<string> {
  return bundleScript(path.join(__dirname, `${name}.ts`), path.join(outDir, `torture-${name}.cjs`));
}

function apply(st: RunState, a: Ack): void {
  switch (a.k) {
    case 'run':
      st.runId = a.run_id;
      break;
    case 'rec':
      st.recs.set(a.seq, { h: a.h, snap: a.snap, durable: a.durable });
      if (a.durable) for (const [s, r] of st.recs) if (s < a.seq) r.durable = true; // one commit carries everything queued before
      break;
    case 'flush':
      for (const [s, r] of st.recs) if (s <= a.upto) r.durable = true;
      break;
    case 'eff':
      st.effects.set(a.id, a.h);
      break;
    case 'appr':
      st.approvals.set(a.id, a.h);
      break;
    case 'blob':
      st.blobs.add(a.hash);
      break;
    case 'done':
      st.done = true;
      break;
  }
}

/**
 * Runs one child until it exits or is killed `kill.delayMs` after its `kill.afterAcks`-th ACK. The
 * moment is drawn against the child's progress rather than the wall clock, so a faster or slower
 * disk does not turn most trials into runs that finish before the kill; the extra 0–3 ms delay lands
 * kills inside writes, not only between them. With a `fault`, the fault acts at that moment instead
 * and the child runs on.
 */
export function runChild(
  cmd: string[],
  env: NodeJS.ProcessEnv,
  st: RunState,
  kill: { afterAcks: number; delayMs: number },
  fault?: (child: ChildProcess) => void,
): Promise<{ killed: boolean; faulted: boolean; paused: string | null; error: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(cmd[0]!, cmd.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let stderr = '';
    let error: string | null = null;
    let paused: string | null = null;
    let killed = false;
    let faulted = false;
    let timer: NodeJS.Timeout | undefined;
    let acks = 0;
    const act = () => (fault ? ((faulted = true), fault(child)) : ((killed = true), child.kill('SIGKILL')));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.startsWith(ACK)) continue;
        const a = JSON.parse(line.slice(ACK.length)) as Ack;
        if (a.k === 'stopping') {
          faulted = true; // it stops itself (STOP_BEFORE_WRITE)
          fault?.(child);
        } else if (a.k !== 'ready' && ++acks === kill.afterAcks) timer = setTimeout(act, kill.delayMs);
        if (a.k === 'error') error = a.message;
        if (a.k === 'paused') paused = a.message;
        apply(st, a);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (!killed && code !== 0 && !error && !paused)
        error = `child exited with ${code ?? signal}: ${stderr.slice(-2000)}`;
      resolve({ killed: killed && signal === 'SIGKILL', faulted, paused, error });
    });
  });
}

/** Everything the child ACKed must be stored, intact; nothing may be corrupt. */
export async function verify(backend: TortureBackend, st: RunState, effectsLog: string): Promise<string[]> {
  const problems: string[] = [];
  const reports: CorruptionReport[] = [];
  const store = await backend.open((e) => e.kind === 'corruption' && reports.push(e.report));
  try {
    const id = st.runId!;
    const latest = (await store.getRun(id))?.last_seq ?? 0;
    for (const [seq, r] of [...st.recs]) {
      const got = await store.get(id, seq);
      if (!r.durable) {
        if (got && digest(got) === r.h)
          r.durable = true; // it made it to disk after all
        else st.recs.delete(seq); // queued and lost with the process: never acknowledged as durable
        continue;
      }
      if (!got) problems.push(`ACKed checkpoint ${seq} missing (latest ${latest})`);
      else if (digest(got) !== r.h) problems.push(`checkpoint ${seq} differs from what was ACKed`);
      else if (r.snap) {
        const snap = await store.loadSnapshot(id, seq);
        if (snap.record.seq !== seq || digest(snap.snapshot) !== r.snap)
          problems.push(`snapshot of checkpoint ${seq} differs from what was ACKed`);
      }
    }
    const effects = new Map((await store.listEffects(id)).map((e) => [e.tool_call_id, e]));
    for (const [cid, h] of st.effects) {
      const e = effects.get(cid);
      if (!e) problems.push(`ACKed effect ${cid} missing`);
      else if (digest(e) !== h && digest({ ...e, result: null }) !== h)
        problems.push(`effect ${cid} differs from what was ACKed`);
    }
    const approvals = new Map((await store.listApprovals(id)).map((a) => [a.tool_call_id, a]));
    for (const [cid, h] of st.approvals) {
      const a = approvals.get(cid);
      const ok = a && (digest(a) === h || digest({ ...a, decision: null }) === h || a.uncertain);
      if (!ok) problems.push(`ACKed approval ${cid} missing or different`);
    }
    for (const hash of st.blobs)
      await store.getBlob(id, hash).catch((err: Error) => problems.push(`ACKed blob ${hash}: ${err.message}`));
    problems.push(...sideEffectProblems(effectsLog, id, effects));
    if (st.done) {
      const final = await store.loadSnapshot(id);
      if (canonical(final.snapshot.messages) !== canonical(expectedTranscript(st.seed, st.steps)))
        problems.push('the finished transcript differs from the uninterrupted run');
    }
  } finally {
    await store.close();
  }
  for (const r of reports) problems.push(`corruption reported: ${r.file}: ${r.reason}`);
  const quarantined = await backend.quarantined();
  if (quarantined.length) problems.push(`quarantine is not empty: ${quarantined.join(', ')}`);
  return problems;
}

/** Each side effect ran once, or again only behind a distinct uncertain approval; a result means it ran. */
function sideEffectProblems(logFile: string, runId: string, effects: Map<string, { result: unknown }>): string[] {
  const lines = fs.existsSync(logFile)
    ? fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith(`${runId}/`))
    : [];
  const byKey = new Map<string, string[]>();
  for (const l of lines) {
    const [key, mode] = l.split(' ');
    byKey.set(key!, [...(byKey.get(key!) ?? []), mode!]);
  }
  const problems: string[] = [];
  for (const [key, modes] of byKey) {
    if (modes.filter((m) => m === 'first').length > 1) problems.push(`side effect ${key} ran twice silently`);
    const uncertain = modes.filter((m) => m !== 'first');
    if (new Set(uncertain).size !== uncertain.length) problems.push(`side effect ${key} re-ran twice on one approval`);
  }
  for (const [cid, e] of effects) {
    const ran = [...byKey.keys()].some((k) => k.endsWith(`/${cid}`));
    if (e.result && !ran) problems.push(`effect ${cid} has a result but never ran`);
  }
  return problems;
}

/**
 * After a kill: cut the run's newest commit (or its newest acknowledged one and what follows it) off
 * its segment. If it had been acknowledged (the witness, written before each ACK, counts it) the store
 * must report the lost tail, naming the file and whether effect records went with it; if the kill came
 * before the acknowledgement, deleting it loses nothing anyone was told about, and nothing may be
 * reported.
 */
async function lostTailTrial(
  dir: string,
  runId: string,
  res: TortureResult,
  newestAcknowledged: boolean,
): Promise<string[]> {
  const runDir = path.join(dir, 'runs', runId);
  const newestSegment = fs
    .readdirSync(runDir)
    .filter((n) => n.startsWith('segment-'))
    .sort()
    .at(-1);
  if (!newestSegment) return [];
  const seg = path.join(runDir, newestSegment);
  const parsed = parseSegment(fs.readFileSync(seg));
  const w = readWitnessFile(
    fs.existsSync(path.join(runDir, WITNESS_FILE)) ? fs.readFileSync(path.join(runDir, WITNESS_FILE)) : null,
    runId,
  ).read;
  // The newest frame; or (every other lost-tail trial) the newest one the witness counts, and what
  // follows it — how often a kill lands before or after an acknowledgement is a matter of timing, and
  // the acknowledged case is the one that must be reported.
  const ackedAt =
    newestAcknowledged && w.kind === 'ok'
      ? parsed.frames.findIndex((f, i) => i > 0 && (f.value as { first?: unknown }).first === w.witness.commits)
      : -1;
  const last = ackedAt > 0 ? parsed.frames[ackedAt] : parsed.frames.at(-1);
  const commit = last?.value as { first?: number; ops?: unknown[] } | undefined;
  if (!last || parsed.frames.length < 2 || typeof commit?.first !== 'number') return [];
  const n = commit.first;
  const newest = newestSegment;
  const acknowledged = w.kind === 'ok' && w.witness.commits >= n;
  const effects = JSON.stringify(commit.ops).includes('"op":"effect"');
  fs.truncateSync(seg, last.start); // that commit gone, cut at its frame boundary (and all after it)
  fs.rmSync(path.join(runDir, 'owner.lock'), { force: true }); // the killed owner's
  res.lostTails.trials++;
  if (acknowledged) res.lostTails.acknowledged++;
  if (acknowledged && effects) res.lostTails.withEffects++;
  const reports: CorruptionReport[] = [];
  const store = await openDiskStoreReady(dir, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
  try {
    await (
      await store.acquire(runId, { owner_id: 'verifier', label: 'verifier', pid: process.pid, hostname: os.hostname() })
    ).release();
    const damage = (await store.getRun(runId))?.damage;
    const problems: string[] = [];
    const r = reports.find((x) => x.file.endsWith(newest));
    if (!acknowledged) {
      // Written but not yet acknowledged when the kill came: its loss may go unseen — or be seen (the
      // index may already have counted it) — but nothing else may be blamed.
      const others = reports.filter((x) => !x.file.endsWith(newest));
      if (others.length)
        problems.push(
          `an unacknowledged commit ${n} was cut off, yet ${others.map((x) => x.file).join(', ')} reported`,
        );
    } else if (!r)
      problems.push(`the acknowledged newest commit ${n} (in ${newest}) was cut off and nothing reported it`);
    else {
      if (r.effects_lost !== effects)
        problems.push(
          `lost tail (commit ${n}): effects_lost ${r.effects_lost}, the commit ${effects ? 'held' : 'held no'} effect records`,
        );
      if (!damage) problems.push(`lost tail (commit ${n}): no damage recorded in the run`);
    }
    return problems;
  } finally {
    await store.close();
  }
}

export async function runTorture(o: TortureOptions): Promise<TortureResult> {
  const log = o.log ?? (() => undefined);
  const dir = o.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'aw-torture-'));
  const storeDir = path.join(dir, 'store');
  const backend = (o.backend ?? diskBackend)(storeDir);
  const effectsLog = path.join(dir, 'effects.log');
  const cmd = o.tsx
    ? [process.execPath, '--import', 'tsx', path.join(__dirname, 'child.ts')]
    : [process.execPath, await bundleChild(dir)];
  const rand = mulberry32(o.seed ?? 1);
  const steps = o.steps ?? 12;
  const res: TortureResult = {
    trials: 0,
    kills: 0,
    faults: 0,
    pauses: 0,
    runsFinished: 0,
    lostTails: { trials: 0, acknowledged: 0, withEffects: 0 },
    failures: [],
    dir,
  };
  let runSeed = (o.seed ?? 1) * 1000;
  let st = newRunState(++runSeed, steps);
  const more = (t: number) => t <= o.trials || (!!o.until && !o.until(res) && t <= (o.maxTrials ?? o.trials));
  for (let t = 1; more(t); t++) {
    // A 12-step run ACKs ≈130 writes: a kill somewhere in the next 1–100 leaves most trials killed
    // and still finishes a run every few trials.
    const kill = { afterAcks: 1 + Math.floor(rand() * 100), delayMs: Math.floor(rand() * 4) };
    const killAfter = `ACK ${kill.afterAcks} + ${kill.delayMs} ms`;
    const env = {
      ...backend.env,
      ...(o.fault ? { PAUSE_ON_STORE_ERROR: '1' } : {}),
      EFFECTS_LOG: effectsLog,
      SEED: String(st.seed),
      STEPS: String(st.steps),
      ...(st.runId ? { RUN_ID: st.runId } : {}),
    };
    const fault = o.fault;
    const r = await runChild(cmd, env, st, kill, fault && (() => fault.act()));
    if (r.faulted) o.fault?.heal?.();
    res.trials++;
    if (r.killed) res.kills++;
    if (r.faulted) res.faults++;
    if (r.paused) res.pauses++;
    const problems = r.error ? [`child failed: ${r.error}`] : st.runId ? await verify(backend, st, effectsLog) : [];
    // A lost-tail trial ends its run: the child (not the product's loop) would take the fallback for the whole truth.
    const lostTail =
      backend.lostTails &&
      !r.error &&
      r.killed &&
      st.runId &&
      !st.done &&
      o.lostTailEvery &&
      res.kills % o.lostTailEvery === 0;
    if (lostTail) problems.push(...(await lostTailTrial(storeDir, st.runId!, res, res.lostTails.trials % 2 === 1)));
    const at = o.fault ? `${o.fault.name} after ${killAfter}` : `kill after ${killAfter}`;
    for (const p of problems) res.failures.push(`trial ${t} (run ${st.runId}, ${at}): ${p}`);
    const how = r.killed
      ? `killed after ${killAfter}`
      : r.paused
        ? `paused (${r.paused.slice(0, 120)})`
        : 'ran to the end';
    log(
      `trial ${t}: ${how}${lostTail ? ', newest commit deleted' : ''}, ${st.recs.size} checkpoints + ${st.effects.size} effects ACKed, ${problems.length ? `FAILED: ${problems.join('; ')}` : 'ok'}`,
    );
    if (lostTail) st = newRunState(++runSeed, steps);
    else if (st.done) {
      res.runsFinished++;
      st = newRunState(++runSeed, steps);
    }
    if (problems.length && r.error) st = newRunState(++runSeed, steps); // do not hammer a run whose child cannot start
  }
  return res;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const num = (flag: string, d: number) => {
    const i = args.indexOf(flag);
    return i >= 0 ? Number(args[i + 1]) : d;
  };
  const t0 = Date.now();
  // --pg: a throwaway PostgreSQL cluster (fsync on, as in use) for the length of the run.
  const cluster = args.includes('--pg') ? startCluster({ log: (l) => console.log(l) }) : undefined;
  let r: TortureResult;
  try {
    r = await runTorture({
      trials: num('--trials', 50),
      seed: num('--seed', 1),
      steps: num('--steps', 12),
      lostTailEvery: num('--lost-tail-every', 4),
      tsx: args.includes('--tsx'),
      ...(cluster ? { backend: pgBackend(cluster.url(), `torture-${Date.now()}`) } : {}),
      log: (l) => console.log(l),
    });
  } finally {
    cluster?.destroy();
  }
  const workersOk = args.includes('--no-workers') || (await workerTakeover(num('--worker-trials', 30)));
  for (const f of r.failures) console.error(`FAIL ${f}`);
  const lt = r.lostTails;
  console.log(
    `\ntorture: ${r.trials} trials, ${r.kills} SIGKILLs, ${r.runsFinished} runs finished, ${lt.trials} lost tails (${lt.acknowledged} acknowledged, ${lt.withEffects} with effect records), ${r.failures.length} failures (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  if (!args.includes('--keep')) fs.rmSync(r.dir, { recursive: true, force: true });
  if (!workersOk) console.error('FAIL worker takeover (its output is above)');
  process.exit(r.failures.length || !workersOk ? 1 : 0);
}

if (require.main === module) void main();
