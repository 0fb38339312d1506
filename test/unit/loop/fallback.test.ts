// Damage that makes a run fall back to the start of a step (its step_started checkpoint): the lost
// part held that step's response and a command that ran to the end. Resuming redoes that step under
// its own number, so the command the damage report names is asked about as "may already have run"
// — never run again unasked — on the disk store and on the shared (PostgreSQL) store alike.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startModelServer, type ModelServer } from '../../fixtures/modelServer/server';
import { openDiskStore } from '../../../src/store';
import type { CheckpointStore, CorruptionReport, StoreEvent } from '../../../src/store/api/types';
import { parseSegment } from '../../../src/store/disk/segment';
import { admin, pgWorkspace } from '../store/pg/support';
import { segmentOf } from '../store/helpers';
import { decideLikeAUser } from './damageSupport';
import { carried, lines, makeRunner, tmp } from './support';

const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
const ALL_LINES = ['step 1', 'step 2', 'step 3'];

/** Step 2's response, intent and result lost: what resuming must ask about, and nothing else run twice. */
async function resumeAfterDamage(
  server: ModelServer,
  store: CheckpointStore,
  runId: string,
  workspace: string,
  reports: CorruptionReport[],
  namesCall: boolean,
): Promise<void> {
  server.reset();
  const { runner } = makeRunner({ baseURL: server.url, store, workspace, policy: AUTO });
  const r = await decideLikeAUser(runner, store, runId, workspace);
  const damage = (await store.getRun(runId))?.damage;
  assert.equal(reports.length, 1, 'the damage is reported once');
  assert.equal(damage?.step_before, 2, 'the run had reached step 2');
  // (A lost result is written as its intent's difference: with the intent's frame gone too, only its row's
  // own text on PostgreSQL still shows the call.)
  if (namesCall)
    assert.ok(
      damage?.lost_calls.some((c) => c.step === 2 && c.finished),
      `the report names step 2's call as finished (${JSON.stringify(damage?.lost_calls)})`,
    );
  assert.equal(r.state, 'completed');
  assert.equal(r.asked, 1, "step 2's command is asked about");
  assert.equal(r.rejected, 1, 'and declined: it had run');
  assert.deepEqual(lines(path.join(workspace, 'log.txt')), ALL_LINES, 'each command exactly once');
}

describe('agent loop: damage that falls back to the start of a step redoes that step, asking first', function () {
  this.timeout(300_000);
  let server: ModelServer;
  before(async () => (server = await startModelServer({ scenario: 'append' })));
  after(async () => server?.close());

  it('on disk: a destroyed frame after step 2 began', async () => {
    const storeDir = tmp('fallback-store');
    const first = openDiskStore(storeDir);
    const { runner, workspace } = makeRunner({ baseURL: server.url, store: first, policy: AUTO });
    const h = await runner.start({ task: 'append three lines', budget: { max_steps: 2 } });
    assert.equal((await h.done).state, 'paused_budget');
    await first.close();
    assert.deepEqual(lines(path.join(workspace, 'log.txt')), ['step 1', 'step 2']);

    // As a crash leaves the segment (no copy frame, which would mend it), then the frame holding
    // step 2's response and intent overwritten: the chain ends at step 2's step_started.
    const seg = segmentOf(storeDir, h.runId);
    const copy = parseSegment(fs.readFileSync(seg)).copies[0];
    if (copy) fs.truncateSync(seg, copy.start);
    const buf = fs.readFileSync(seg);
    const responses = parseSegment(buf)
      .frames.slice(1)
      .filter((f) => carried(buf.subarray(f.start, f.end)).includes('post_llm'));
    const hit = responses[1]!;
    fs.writeFileSync(
      seg,
      Buffer.concat([buf.subarray(0, hit.start), Buffer.alloc(hit.end - hit.start, 0x78), buf.subarray(hit.end)]),
    );

    const reports: CorruptionReport[] = [];
    const onEvent = (e: StoreEvent) => void (e.kind === 'corruption' && reports.push(e.report));
    const store = openDiskStore(storeDir, { onEvent });
    try {
      await resumeAfterDamage(server, store, h.runId, workspace, reports, false);
    } finally {
      await store.close();
    }
  });

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
      await resumeAfterDamage(server, store, h.runId, workspace, reports, true);
    } finally {
      await ws.closeAll();
    }
  });
});
