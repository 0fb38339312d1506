// The torture against the shared store: the same child and checks, its rows in a workspace of its
// own on a PostgreSQL cluster. A killed child's lease is taken over by the next child once the
// server has seen its session close (two heartbeats of 100 ms); quarantine is the quarantine table.
import pg from 'pg';
import { openPgStoreReady } from '../../src/store/pg/store';
import type { TortureBackend } from './backend';

export function pgBackend(url: string, workspace: string): () => TortureBackend {
  return () => ({
    env: { STORE_KIND: 'pg', PG_URL: url, WORKSPACE: workspace, HEARTBEAT_MS: '100' },
    open: (onEvent) => openPgStoreReady({ connectionString: url, workspace, onEvent }),
    quarantined: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query(`SELECT what, reason FROM agent_waypoints.quarantine WHERE workspace = $1`, [
          workspace,
        ]);
        return r.rows.map((x: { what: string; reason: string }) => `${x.what}: ${x.reason}`);
      } catch (err) {
        if ((err as { code?: string }).code === '42P01') return []; // no schema yet
        throw err;
      } finally {
        await c.end();
      }
    },
    lostTails: false,
  });
}
