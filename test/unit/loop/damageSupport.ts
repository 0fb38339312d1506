// What the damage tests share: a user who resumes a damaged run and decides each "may already have
// run" question by looking at the file the commands append to, and a store's quarantine as bytes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentRunner } from '../../../src/runner/runner';
import type { CheckpointStore } from '../../../src/store/api/types';
import { lines } from './support';

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
