// What the damage tests share: a user who resumes a damaged run and decides each "may already have
// run" question by looking at the file the commands append to, and a store's quarantine as bytes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { ModelServer } from '../../fixtures/modelServer/server';
import type { AgentRunner } from '../../../src/runner/runner';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import { lines, makeRunner } from './support';

export interface Decided {
  state: string;
  /** Calls the user was asked about, and how many of them were declined because they had run. */
  asked: number;
  rejected: number;
}

/**
 * Resumes `runId` and answers every approval the way a user who reads log.txt would: a call whose
 * line is there already ran (declined), any other is approved. Every question must be a "may
 * already have run" one, and at the moment of asking no command may have run twice.
 */
export async function decideLikeAUser(
  runner: AgentRunner,
  store: CheckpointStore,
  runId: string,
  workspace: string,
): Promise<Decided> {
  let out = await (await runner.resume(runId, { budget: { max_steps: 20 } })).done;
  let rejected = 0;
  let asked = 0;
  for (let i = 0; i < 10 && out.state === 'awaiting_approval'; i++) {
    const pending = await store.listApprovals(runId, { pendingOnly: true });
    assert.ok(
      pending.length > 0 && pending.every((a) => a.uncertain),
      `only "may already have run" calls come back to the user (${JSON.stringify(pending.map((a) => a.reason))})`,
    );
    const seen = lines(path.join(workspace, 'log.txt'));
    assert.equal(new Set(seen).size, seen.length, `no command ran twice before the user decided: ${seen.join(', ')}`);
    asked += pending.length;
    const decisions = pending.map((a) => {
      const line = String((a.arguments as { command: string }).command).match(/step \d/)![0];
      if (!seen.includes(line))
        return { kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash } as const;
      rejected++;
      return { kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' } as const;
    });
    const next = await runner.decideApprovals(runId, decisions);
    out = next ? await next.done : out;
    // The raised budget lives in the snapshot the resume restored; a pause before the next snapshot
    // leaves the old one stored, so the user raises it once more.
    if (out.state === 'paused_budget') out = await (await runner.resume(runId, { budget: { max_steps: 20 } })).done;
  }
  return { state: out.state, asked, rejected };
}

/** The files a disk store moved or copied to quarantine (their notes left out), as bytes. */
export function quarantined(storeDir: string): Buffer[] {
  const dir = path.join(storeDir, 'quarantine');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => !n.endsWith('.why.json'))
    .map((n) => fs.readFileSync(path.join(dir, n)));
}

/**
 * A run of the append scenario fallen back to step 2's start (its response, intent and result lost):
 * resuming asks about step 2's command only, and runs nothing twice (loop/fallback*.test.ts).
 */
export async function resumeAfterFallback(
  server: ModelServer,
  store: CheckpointStore,
  runId: string,
  workspace: string,
  reports: CorruptionReport[],
  namesCall: boolean,
): Promise<void> {
  server.reset();
  const policy = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;
  const { runner } = makeRunner({ baseURL: server.url, store, workspace, policy });
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
  assert.deepEqual(lines(path.join(workspace, 'log.txt')), ['step 1', 'step 2', 'step 3'], 'each command exactly once');
}
