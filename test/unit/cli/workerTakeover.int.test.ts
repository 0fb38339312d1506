// Workers that die or freeze: two worker processes and a client; a run handed off, its calls decided
// from the client, the worker holding it SIGKILLed at a random point of a random command — the other
// worker takes it over once the lease is free and completes it: no effect lost, none run twice
// without a decision, one owner per lease token. A worker SIGSTOPped past its lease and continued
// finds its writes refused. AW_WORKER_TRIALS sets the number of kills: 10 in `npm test` (a kill costs
// seconds of two workers' CPU on a shared 2-core machine), 30 in the soak (`npm run torture`);
// AW_SOAK multiplies the default.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { cliBundle, type CliProcess } from '../../support/cliProcess';
import { admin } from '../store/pg/support';
import { scaled } from '../../support/timeScale';
import { trials } from '../../support/trials';
import {
  approvalsNow,
  client,
  decideUntilDone,
  effectLines,
  person,
  project,
  startAsking,
  startWorker,
  threeCommands,
  type Client,
  type Project,
} from './workerSupport';

// Short, so a takeover is quick; long enough that a busy 2-core machine does not starve a live
// worker's heartbeats (every fifth of it) into a takeover.
const LEASE_MS = 1_500;
const TRIALS = trials(10, 'AW_WORKER_TRIALS');

describe('agent-waypoints worker: takeover of a dead or frozen worker', function () {
  this.timeout(180_000);
  let server: ModelServer;
  let p: Project;
  let c: Client;
  const workers = new Map<string, CliProcess>();
  const dead: [string, CliProcess][] = [];
  let made = 0;
  before(() => cliBundle());
  beforeEach(async () => {
    server = await startModelServer({ scenario: threeCommands(0.15) });
    p = project(server.url);
    c = await client(p, server.url, LEASE_MS);
  });
  afterEach(async () => {
    for (const w of workers.values()) {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
      if (w.child.signalCode === 'SIGSTOP' || w.child.exitCode === null) w.child.kill('SIGCONT');
      await w.done;
    }
    workers.clear();
    await c.close();
    await server.close();
  });
  const spawnWorker = async () => {
    const name = `worker-${++made}`;
    workers.set(name, await startWorker(p, name, ['--lease-ms', String(LEASE_MS), '--runs', '4']));
  };
  /** What the workers said and where the run is, for a failure's message. */
  const explain = async (runId: string, err: Error): Promise<never> => {
    const run = await c.store.getRun(runId);
    const asked = (await approvalsNow(c, runId)).map((a) => [a.tool_call_id, a.uncertain, a.decision?.kind]);
    const effs = (await c.store.listEffects(runId)).map((e) => [e.tool_call_id, e.result === null ? 'open' : 'done']);
    const said = [...dead, ...workers].map(([n, w]) => `--- ${n}:\n${w.stderr()}`).join('\n');
    const where = `${run?.state} ${run?.state_detail}; asked ${JSON.stringify(asked)}; effects ${JSON.stringify(effs)}; lines ${effectLines(p).join(',')}`;
    throw new Error(`${err.message}; ${where}; ${JSON.stringify(await c.workers.get(runId))}\n${said}`);
  };
  /** The process of the worker holding the run now (its lease's owner label is "worker NAME"). */
  const holderOf = async (runId: string) => {
    const h = (await c.workers.get(runId))?.holder;
    const name = h?.label.replace(/^worker /, '');
    return name ? { name, proc: workers.get(name) } : undefined;
  };

  it(`SIGKILL the worker holding the run mid-command, ${TRIALS} times: the other completes it, nothing lost, nothing run twice undecided, one owner per token`, async function () {
    this.timeout(60_000 + TRIALS * 20_000); // a trial takes 2–5 s on an idle 2-core machine, 12 s under a load of 20
    await spawnWorker();
    await spawnWorker();
    const owners = new Map<string, Set<string>>(); // run/token → owners seen
    const sub = c.workers.watch((ch) => {
      if (ch.kind !== 'lease') return;
      void admin((db) =>
        db.query(`SELECT lease_token, lease_owner FROM agent_waypoints.runs WHERE workspace = $1 AND run_id = $2`, [
          p.workspace,
          ch.runId,
        ]),
      ).then((r) => {
        const row = r.rows[0] as { lease_token: string; lease_owner: string | null } | undefined;
        if (!row?.lease_owner) return;
        const key = `${ch.runId}/${row.lease_token}`;
        owners.set(key, (owners.get(key) ?? new Set()).add(JSON.parse(row.lease_owner).owner_id as string));
      });
    });
    const effects = path.join(p.checkout, 'effects.log');
    let midCommand = 0;
    let rerunsDecided = 0;
    let respawned: Promise<void> = Promise.resolve();
    for (let trial = 0; trial < TRIALS; trial++) {
      fs.rmSync(effects, { force: true });
      const runId = await startAsking(c);
      await c.workers.handOff(runId, person);
      const done = decideUntilDone(c, runId, effects, 60_000).catch((err: Error) => explain(runId, err));
      // A random command, a random moment of it: its intent recorded, then 0–200 ms (it runs ~150 ms).
      const k = 1 + Math.floor(Math.random() * 3);
      const reached = until(async () => {
        await c.store.rescan();
        return (await c.store.listEffects(runId)).some((e) => e.tool_call_id === `call_e${k}`);
      }, 60_000).catch((err: Error) => explain(runId, err));
      await Promise.race([reached, done]);
      await respawned; // another worker listens before this one dies
      await new Promise((r) => setTimeout(r, Math.random() * 200));
      const holder = await holderOf(runId);
      if (holder?.proc) {
        const open = (await c.store.listEffects(runId)).some((e) => e.result === null);
        if (open) midCommand++;
        holder.proc.child.kill('SIGKILL');
        await holder.proc.done;
        workers.delete(holder.name);
        dead.push([holder.name, holder.proc]);
        respawned = spawnWorker(); // the other worker takes over meanwhile
      }
      await done;
      if (process.env.AW_PROGRESS) process.stderr.write(`trial ${trial} done at ${new Date().toISOString()}\n`);
      const lines = effectLines(p);
      const approvedAgain = (await approvalsNow(c, runId)).filter((a) => a.uncertain && a.decision?.kind === 'approve');
      rerunsDecided += approvedAgain.length;
      for (const e of ['e1', 'e2', 'e3']) {
        const n = lines.filter((l) => l === e).length;
        assert.ok(n >= 1, `trial ${trial}: ${e} lost (${lines.join(',')})`);
        const decidedAgain = approvedAgain.filter((a) => a.tool_call_id === `call_${e}`).length;
        assert.ok(n <= 1 + decidedAgain, `trial ${trial}: ${e} ran ${n} times, ${decidedAgain} re-run decided`);
      }
    }
    sub.dispose();
    for (const [key, seen] of owners) assert.equal(seen.size, 1, `lease ${key} had ${seen.size} owners`);
    process.stdout.write(
      `      ${TRIALS} kills, ${midCommand} with a call under way; re-runs approved after "may already have run": ${rerunsDecided}; leases seen: ${owners.size}\n`,
    );
    assert.ok(midCommand >= TRIALS / 3, `only ${midCommand} kills landed mid-command`);
  });

  it('SIGSTOP the worker past its lease: the other takes over and finishes; continued, its writes are refused', async () => {
    await spawnWorker();
    const runId = await startAsking(c);
    await c.workers.handOff(runId, person);
    const effects = path.join(p.checkout, 'effects.log');
    const done = decideUntilDone(c, runId, effects, scaled(20_000)).catch((err: Error) => explain(runId, err));
    await until(async () => effectLines(p).includes('e2'));
    const frozen = await holderOf(runId);
    assert.ok(frozen?.proc, 'a worker holds it');
    frozen.proc.child.kill('SIGSTOP');
    await spawnWorker();
    await done;
    frozen.proc.child.kill('SIGCONT');
    await until(async () => /does not own run/.test(frozen.proc!.stderr())).catch(() =>
      assert.fail(`the continued worker said:\n${frozen.proc!.stderr()}`),
    );
    const lines = effectLines(p);
    assert.deepEqual(lines, ['e1', 'e2', 'e3'], 'each command once: e2 was answered "it ran" from its line');
    assert.equal((await c.store.getRun(runId))?.state, 'completed');
  });
});

/** Waits until `cond` holds, looking again every 20 ms (the condition lives in another process). */
async function until(cond: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
