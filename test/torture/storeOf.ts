// How a torture child opens its store: the disk store in STORE_DIR (default), or the shared store
// (STORE_KIND=pg: PG_URL, WORKSPACE, HEARTBEAT_MS, STALE_MS). MACHINE names the host the child
// says it runs on, so two children on one machine can play two machines.
import os from 'node:os';
import { RunLockedError } from '../../src/store/api/errors';
import type { CheckpointStore, OwnerInfo, RunLease } from '../../src/store/api/types';
import { openDiskStore } from '../../src/store/disk/store';
import { openPgStore } from '../../src/store/pg/store';

const env = process.env;
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

export function openChildStore(): CheckpointStore & { whenOpen(): Promise<void> } {
  const deferMs = Number(env.DEFER_MS ?? 200);
  if (env.STORE_KIND === 'pg')
    return openPgStore({
      connectionString: env.PG_URL!,
      workspace: env.WORKSPACE!,
      deferMs,
      heartbeatMs: num(env.HEARTBEAT_MS) ?? 100,
      staleMs: num(env.STALE_MS) ?? 30_000,
      settleMs: 2_000,
    });
  return openDiskStore(env.STORE_DIR!, {
    deferMs,
    ...(env.HEARTBEAT_MS ? { heartbeatMs: Number(env.HEARTBEAT_MS) } : {}),
    ...(env.STALE_MS ? { staleMs: Number(env.STALE_MS) } : {}),
  });
}

export const childHostname = (): string => env.MACHINE ?? os.hostname();

/**
 * Takes the run, waiting while a killed predecessor still holds it: on disk its lock names a dead
 * pid (taken at once); in PostgreSQL its session is gone, which counts after two heartbeats.
 */
export async function acquireWhenFree(store: CheckpointStore, runId: string, me: OwnerInfo): Promise<RunLease> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return await store.acquire(runId, me);
    } catch (err) {
      if (!(err instanceof RunLockedError) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
