// Helpers of the PostgreSQL store tests: stores on the shared throwaway cluster, a superuser client
// to look at (and age) rows, and a run with a first step.
import pg from 'pg';
import type { OwnerInfo } from '../../../../src/store/api/types';
import { openPgStoreReady, type PgStore, type PgStoreOptions } from '../../../../src/store/pg/store';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import * as h from '../helpers';

export type PgOpen = (o?: Partial<PgStoreOptions>) => Promise<PgStore>;

/** A workspace of its own, and a way to open stores on it; every store opened is closed by `closeAll`. */
export function pgWorkspace(label: string): {
  workspace: string;
  url: string;
  open: PgOpen;
  closeAll(): Promise<void>;
} {
  const url = sharedPostgres().url();
  const workspace = freshWorkspace(label);
  const opened: PgStore[] = [];
  return {
    workspace,
    url,
    open: async (o = {}) => {
      const s = await openPgStoreReady({ connectionString: url, workspace, ...o });
      opened.push(s);
      return s;
    },
    closeAll: async () => {
      for (const s of opened.splice(0)) await s.close().catch(() => undefined);
    },
  };
}

/** A plain client to the shared cluster (superuser), for looking at rows and changing them. */
export async function admin<T>(fn: (c: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const c = new pg.Client({ connectionString: sharedPostgres().url(database) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export const machine = (label: string, hostname: string): OwnerInfo => ({
  owner_id: `${label}@${hostname}`,
  label,
  pid: process.pid,
  hostname,
});

/** run_started and one step with a pending response (durable). */
export async function startRun(s: PgStore, who: OwnerInfo, title = 'shared run') {
  const { run, lease } = await s.createRun(h.newRun(title), who);
  await s.append(run.run_id, h.runStarted());
  const msgs = [
    { role: 'system' as const, content: 'sys' },
    { role: 'user' as const, content: 'do it' },
  ];
  await s.append(run.run_id, h.stepStarted(h.snapshot(1, msgs)));
  const a = h.assistantWithCall(1);
  await s.append(run.run_id, h.postLlm(h.snapshot(1, [...msgs, a], { pending_llm_response: h.pendingResponse(a, 1) })));
  return { runId: run.run_id, lease };
}

/** Makes the run's lease look as if its holder stopped heartbeating an hour ago. */
export const ageLease = (workspace: string, runId: string) =>
  admin((c) =>
    c.query(
      `UPDATE agent_waypoints.runs SET lease_heartbeat = now() - interval '1 hour' WHERE workspace = $1 AND run_id = $2`,
      [workspace, runId],
    ),
  );
