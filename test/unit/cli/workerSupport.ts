// Workers as a user runs them — `agent-waypoints worker` processes (bundled as dist/cli.js is) on
// the throwaway PostgreSQL cluster, the real openai client over HTTP to the scripted model server —
// and a client in the test process: a runner that starts runs and hands them off, and a person
// who decides what they ask, from another "machine" (a store that does not hold the run).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { localDecider } from '../../../src/runner/decider';
import type { Approval } from '../../../src/store/api/schema';
import { openPgStoreReady, type PgStore } from '../../../src/store/pg/store';
import { SharedWorkers } from '../../../src/store/pg/workers';
import { DEMO_MODEL_ID, type ScenarioInput } from '../../fixtures/modelServer/scenario';
import { startCli, type CliProcess } from '../../support/cliProcess';
import { sharedPostgres } from '../../support/postgres';
import { makeRunner, tmp, type TestRunner } from '../loop/support';

/** Three commands, each asked about, each appending its line to effects.log (then a short pause: a kill can land mid-command), then an answer. */
export function threeCommands(pauseS = 0.15): ScenarioInput {
  const cmd = (n: number) => ({
    reply: {
      content: null,
      tool_calls: [
        { id: `call_e${n}`, name: 'run_command', arguments: { command: `echo e${n} >> effects.log; sleep ${pauseS}` } },
      ],
    },
  });
  return {
    name: 'worker-three-commands',
    description: 'offline demo model: three commands, then an answer',
    model: DEMO_MODEL_ID,
    subconversations: [],
    turns: [cmd(1), cmd(2), cmd(3), { reply: { content: 'three lines written' } }],
  };
}

export interface Project {
  name: string;
  workspace: string;
  checkout: string;
  home: string;
  env: Record<string, string>;
}

export function project(modelUrl: string): Project {
  const name = `workers-${crypto.randomBytes(5).toString('hex')}`;
  const home = tmp('worker-home');
  const checkout = tmp('worker-checkout');
  fs.writeFileSync(path.join(home, 'agent-waypoints.json'), JSON.stringify({ store: { workspaceName: name } }));
  return {
    name,
    workspace: `name:${name}`,
    checkout,
    home,
    env: {
      AGENT_WAYPOINTS_HOME: home,
      AGENT_WAYPOINTS_BASE_URL: modelUrl,
      AGENT_WAYPOINTS_MODEL: DEMO_MODEL_ID,
      AGENT_WAYPOINTS_PG_URL: sharedPostgres().url(),
    },
  };
}

/** A worker process, once it listens for runs (its progress says so). */
export async function startWorker(p: Project, label: string, extra: string[] = []): Promise<CliProcess> {
  const w = await startCli(['worker', '--workspace', p.checkout, '--name', label, ...extra], p.env);
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (!w.stderr().includes('listening for runs')) return;
      w.child.stderr!.off('data', onData);
      resolve();
    };
    w.child.stderr!.on('data', onData);
    void w.done.then((r) => reject(new Error(`worker ${label} left (${r.code ?? r.signal}): ${r.stderr}`)));
    onData();
  });
  return w;
}

/** The client: a store on the project that holds nothing, a runner beside it, and the workers' API. */
export interface Client {
  store: PgStore;
  workers: SharedWorkers;
  runner: TestRunner;
  close(): Promise<void>;
}

export async function client(p: Project, modelUrl: string, leaseMs: number): Promise<Client> {
  const store = await openPgStoreReady({
    connectionString: sharedPostgres().url(),
    workspace: p.workspace,
    heartbeatMs: Math.floor(leaseMs / 5),
    staleMs: leaseMs,
  });
  const workers = new SharedWorkers(store);
  await workers.watching();
  const runner = makeRunner({ store, workspace: p.checkout, baseURL: modelUrl });
  return {
    store,
    workers,
    runner,
    close: async () => {
      await runner.runner.shutdown(1000);
      await store.close();
    },
  };
}

export const person = localDecider('client-machine', 'cli');

/** The run's approvals as another machine sees them now (its newest commits read first). */
export async function approvalsNow(c: Client, runId: string): Promise<Approval[]> {
  await c.store.rescan();
  return c.store.listApprovals(runId);
}

/**
 * Decides every call the run asks about until it finishes: a plain ask is approved; "may already
 * have run" is answered from the effects file — rejected when the command's line is there (it ran),
 * approved when it is not. Each decision is posted once (by call and hash). Resolves at `completed`.
 */
export function decideUntilDone(c: Client, runId: string, effects: string, timeoutMs = 30_000): Promise<void> {
  const posted = new Set<string>();
  return new Promise<void>((resolve, reject) => {
    let busy = false;
    let again = false;
    const look = async (): Promise<void> => {
      if (busy) return void (again = true);
      busy = true;
      try {
        for (const a of await approvalsNow(c, runId)) {
          const key = `${a.tool_call_id}/${a.input_hash}/${a.requested_ms}`;
          if (a.decision || posted.has(key)) continue;
          posted.add(key);
          const line = `e${a.tool_call_id.replace('call_e', '')}`;
          const ran =
            a.uncertain && fs.existsSync(effects) && fs.readFileSync(effects, 'utf8').split('\n').includes(line);
          await c.workers.decide(
            runId,
            { toolCallId: a.tool_call_id, inputHash: a.input_hash },
            ran ? { kind: 'reject', reason: 'it ran already' } : { kind: 'approve' },
            person,
          );
        }
        if ((await c.store.getRun(runId))?.state === 'completed') finish();
      } catch (err) {
        finish(err as Error);
      } finally {
        busy = false;
      }
      if (again) {
        again = false;
        await look();
      }
    };
    const finish = (err?: Error) => {
      sub.dispose();
      clearInterval(tick);
      clearTimeout(limit);
      if (err) reject(err);
      else resolve();
    };
    const sub = c.workers.watch((ch) => {
      if (ch.kind === 'resync' || ch.runId === runId) void look();
    });
    // A safety net as the workers have one: a takeover by time alone is announced by nothing.
    const tick = setInterval(() => void look(), 250);
    const limit = setTimeout(() => finish(new Error(`run ${runId} did not finish in ${timeoutMs} ms`)), timeoutMs);
    void look();
  });
}

/** Starts a run in the client's runner; it stops at its first command's approval. */
export async function startAsking(c: Client): Promise<string> {
  const h = await c.runner.runner.start({ task: 'write three lines' });
  const out = await h.done;
  assert.equal(out.state, 'awaiting_approval', out.detail ?? '');
  return h.runId;
}

export function effectLines(p: Project): string[] {
  const f = path.join(p.checkout, 'effects.log');
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
}
