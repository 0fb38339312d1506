// `agent-waypoints worker`: serves the runs handed to the workers on the shared store, for the
// projects it has a checkout of. Idle, it sleeps on the store's change feed (LISTEN/NOTIFY: a
// hand-off, a decision, a lease let go) with a slow re-check for what no notification announces — a
// worker that died and whose lease went stale. It claims a run (handoffs.ts), takes its fenced lease,
// records the decisions posted for it and drives it until it waits for a decision (then it lets go:
// a run waiting for a person holds no worker, and whichever worker is free takes the decision), stops,
// or is wanted back (it lets go at the next step boundary). SIGTERM: every run stops at its next step
// boundary and is let go for another worker; a second SIGTERM stops them at once (interrupted).
import os from 'node:os';
import path from 'node:path';
import { errorMessage } from '../common/errors';
import { describeDecider, userName } from '../runner/decider';
import type { StartedRun } from '../runner/runner';
import { RunLockedError } from '../store/api/errors';
import { claimHandedOff } from '../store/pg/handoffs';
import { openPgStoreReady } from '../store/pg/store';
import { newPool } from '../store/pg/conn';
import { DEFAULT_PG_SCHEMA, quoteIdent } from '../store/pg/schema';
import type { SharedChange } from '../store/pg/listen';
import { loadShellGrammar } from '../runner/tools/shell/grammar';
import { workspaceIdentity } from '../workspaceIdentity';
import { compose } from './compose';
import { ConfigError } from './config';
import { Exit } from './output';
import type { Out } from './out';
import { pgUrl } from './store';
import { statusAfter, takeOn, type Checkout } from './workerRun';

export interface WorkerOptions {
  checkouts: string[];
  configFile: string | undefined;
  name: string | undefined;
  /** Serve what is there, then leave. */
  once: boolean;
  /** How long a silent owner keeps a run (the lease's staleness); heartbeats at a fifth of it. */
  leaseMs: number;
  /** Runs driven at once. */
  maxRuns: number;
}

export const DEFAULT_LEASE_MS = 30_000;

export async function runWorker(o: WorkerOptions, env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const url = pgUrl(env);
  if (!url)
    throw new ConfigError(
      'a worker serves the shared store: set AGENT_WAYPOINTS_PG_URL or AGENT_WAYPOINTS_PG_URL_FILE',
    );
  if (o.checkouts.length === 0) throw new ConfigError('name the checkouts it serves: --workspace DIR (repeatable)');
  const name = o.name ?? `${userName()}@${os.hostname()}:${process.pid}`;
  const heartbeatMs = Math.max(50, Math.min(5_000, Math.floor(o.leaseMs / 5)));
  const checkouts: Checkout[] = [];
  const w = new Worker(checkouts, name, o, out);
  const stop = onTerm(w);
  try {
    for (const dir of o.checkouts.map((d) => path.resolve(d))) {
      let store: Checkout['store'] | undefined;
      let workspace = '';
      const ctx = await compose({
        workspace: dir,
        storeDir: undefined,
        configFile: o.configFile,
        env,
        label: `worker ${name}`,
        drives: true,
        openStore: async (settings) => {
          const id = await workspaceIdentity(dir, settings.workspaceName);
          if (id.how === 'none')
            throw new ConfigError(`${dir} has no git remote: set "store.workspaceName" in the config file`);
          workspace = id.id;
          store = await openPgStoreReady({ connectionString: url, workspace, heartbeatMs, staleMs: o.leaseMs });
          return { store, storageDir: undefined, where: `the shared store (project ${id.label})` };
        },
      });
      checkouts.push({ dir, workspace, ctx, store: store! });
      out.progress(`worker ${name}: serving ${dir} (${workspace})`);
      if (ctx.sandboxUnavailable)
        out.problem(
          `worker ${name}: auto in sandbox is not available here (${ctx.sandboxUnavailable}): commands ask instead.`,
        );
    }
    // Loaded before the first run: compiling the grammar stalls the thread, and with it the heartbeats.
    await loadShellGrammar();
    await w.serve(url);
    return Exit.finished;
  } finally {
    stop();
    for (const c of checkouts) await c.ctx.close().catch(() => undefined);
  }
}

class Worker {
  private readonly driving = new Map<string, { c: Checkout; handle: StartedRun }>();
  private stopping = false;
  private wake: () => void = () => undefined;

  constructor(
    private readonly checkouts: Checkout[],
    private readonly name: string,
    private readonly o: WorkerOptions,
    private readonly out: Out,
  ) {}

  private log(line: string): void {
    this.out.progress(`worker ${this.name}: ${line}`);
  }

  async serve(url: string): Promise<void> {
    const pool = newPool({ connectionString: url, poolSize: 2 });
    const subs = this.checkouts.map((c) => c.store.engine.watch((ch) => this.onChange(c, ch)));
    await Promise.all(this.checkouts.map((c) => c.store.engine.changes().ready()));
    this.log('listening for runs handed to the workers');
    // The safety net: a lease that went stale by time alone announces nothing.
    const recheck = setInterval(() => this.wake(), Math.max(100, Math.floor(this.o.leaseMs / 2)));
    try {
      for (;;) {
        if (this.stopping) break;
        const slept = new Promise<void>((r) => (this.wake = r));
        const took = this.driving.size < this.o.maxRuns ? await this.claim(pool) : false;
        if (took) continue;
        if (this.o.once && this.driving.size === 0) break;
        await slept;
      }
      await Promise.all([...this.driving.values()].map((d) => d.handle.done));
    } finally {
      clearInterval(recheck);
      for (const s of subs) s.dispose();
      await pool.end().catch(() => undefined);
    }
  }

  private onChange(c: Checkout, ch: SharedChange): void {
    if (ch.kind === 'handoffs' && this.driving.has(ch.runId)) void this.checkWanted(c, ch.runId);
    // A hand-off, a decision, a lease let go, a reconnect: something may be there to take.
    if (ch.kind !== 'commit') this.wake();
  }

  /** Lets go of a run someone asked back, at its next step boundary. */
  private async checkWanted(c: Checkout, runId: string): Promise<void> {
    const h = await c.store.engine.handoffs.get(runId).catch(() => undefined);
    if (h && !h.wantedBack) return;
    const who = h?.wantedBack ? `brought back by ${describeDecider(h.wantedBack)}` : 'taken back from the workers';
    if (c.ctx.runner.letGo(runId, `Let go by worker ${this.name}: ${who}.`)) this.log(`run ${runId}: ${who}`);
  }

  /** Claims one run and starts driving it; false when there was nothing to take. */
  private async claim(pool: ReturnType<typeof newPool>): Promise<boolean> {
    const byWs = new Map(this.checkouts.map((c) => [c.workspace, c]));
    let got: { c: Checkout; runId: string; lease: Awaited<ReturnType<Checkout['store']['acquire']>> } | undefined;
    try {
      got = await claimHandedOff(
        pool,
        quoteIdent(DEFAULT_PG_SCHEMA),
        { workspaces: [...byWs.keys()], staleMs: this.o.leaseMs, skip: [...this.driving.keys()] },
        async ({ workspace, runId }) => {
          const c = byWs.get(workspace)!;
          const owner = c.ctx.owner;
          try {
            return { c, runId, lease: await c.store.acquire(runId, owner) };
          } catch (err) {
            if (err instanceof RunLockedError) return undefined; // another owner was quicker
            throw err;
          }
        },
      );
    } catch (err) {
      this.log(`could not claim a run: ${errorMessage(err)}`);
      return false;
    }
    if (!got) return false;
    const { c, runId, lease } = got;
    const token = c.store.engine.leaseToken(runId) ?? '0';
    this.log(`run ${runId}: taken (lease ${token})`);
    const handle = await takeOn(c, runId, lease, token, (l) => this.log(l)).catch((err: unknown) => {
      this.log(`run ${runId}: could not take it on: ${errorMessage(err)}`);
      void lease.release().catch(() => undefined);
      return undefined;
    });
    if (!handle) return true;
    this.drive(c, runId, token, handle);
    if (this.stopping) c.ctx.runner.letGo(runId, `Let go by worker ${this.name}: it is stopping.`);
    void this.checkWanted(c, runId);
    return true;
  }

  private drive(c: Checkout, runId: string, token: string, handle: StartedRun): void {
    this.driving.set(runId, { c, handle });
    // Where it stopped, on the hand-off row before the lease is let go (the runner's state event).
    const sub = c.ctx.runner.events.on((e) => {
      if (e.type === 'state' && e.runId === runId && e.state !== 'running')
        void c.store.engine.handoffs.setStatus(runId, token, statusAfter(e.state), e.detail).catch(() => undefined);
    });
    void handle.done.then(async (outcome) => {
      sub.dispose();
      await c.store.engine.handoffs
        .setStatus(runId, token, statusAfter(outcome.state), outcome.detail)
        .catch(() => undefined);
      this.log(`run ${runId}: ${outcome.state}${outcome.detail ? ` — ${outcome.detail}` : ''}`);
      this.driving.delete(runId);
      this.wake();
    });
  }

  /** Every run stops at its next step boundary and is let go; `now`: stopped at once (interrupted). */
  stop(now: boolean): void {
    this.stopping = true;
    for (const [runId, d] of this.driving) {
      if (now) d.c.ctx.runner.cancel(runId);
      else d.c.ctx.runner.letGo(runId, `Let go by worker ${this.name}: it is stopping; another worker continues.`);
    }
    this.wake();
  }
}

function onTerm(w: Worker): () => void {
  let asked = 0;
  const handler = () => w.stop(++asked > 1);
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
