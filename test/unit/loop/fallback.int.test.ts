// Damage that makes a run fall back to the start of a step (its step_started checkpoint), on the shared
// (PostgreSQL) store: an altered row lost step 2's response and its command, which ran to the end.
// Resuming redoes that step under its own number and asks about the command (fallback.test.ts: on disk).
import assert from 'node:assert/strict';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import type { CorruptionReport } from '../../../src/store/api/types';
import { admin, pgWorkspace } from '../store/pg/support';
import { resumeAfterFallback } from './damageSupport';
import { lines, makeRunner } from './support';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

describe('agent loop: damage that falls back to the start of a step redoes that step, asking first', function () {
  this.timeout(300_000);
  let server: ModelServer;
  before(async () => (server = await startModelServer({ scenario: 'append' })));
  after(async () => server?.close());

  it('on PostgreSQL: an altered row after step 2 began', async () => {
    const ws = pgWorkspace('fallback');
    try {
      const first = await ws.open();
      const { runner, workspace } = makeRunner({ baseURL: server.url, store: first, policy: AUTO });
      const h = await runner.start({ task: 'append three lines', budget: { max_steps: 2 } });
      assert.equal((await h.done).state, 'paused_budget');
      await first.close();
      assert.deepEqual(lines(path.join(workspace, 'log.txt')), ['step 1', 'step 2']);

      // The row holding step 2's response altered (its sha256 no longer matches): the chain ends before it.
      await admin(async (c) => {
        const rows = await c.query<{ first: number; body: string }>(
          `SELECT c.first, c.body FROM agent_waypoints.commits c JOIN agent_waypoints.runs r ON r.rid = c.rid
           WHERE r.workspace = $1 AND r.run_id = $2 ORDER BY c.first`,
          [ws.workspace, h.runId],
        );
        const hit = rows.rows.filter((x) => x.body.includes('"post_llm"'))[1]!;
        await c.query(
          `UPDATE agent_waypoints.commits c SET body = c.body || ' ' FROM agent_waypoints.runs r
           WHERE r.rid = c.rid AND r.workspace = $1 AND r.run_id = $2 AND c.first = $3`,
          [ws.workspace, h.runId, hit.first],
        );
      });

      const reports: CorruptionReport[] = [];
      const store = await ws.open({ onEvent: (e) => void (e.kind === 'corruption' && reports.push(e.report)) });
      await resumeAfterFallback(server, store, h.runId, workspace, reports, true);
    } finally {
      await ws.closeAll();
    }
  });
});
