// What the full-disk tests share (diskFull.test.ts with an injected ENOSPC, diskFull.int.test.ts on a real
// small disk): commands whose large output goes to a blob, a check that no result claims a failure the
// disk caused, and a user who resumes to the end declining the commands whose effect is visible.
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEMO_MODEL_ID, type Scenario } from '../../fixtures/modelServer/scenario';
import type { CheckpointStore } from '../../../src/store/api/types';
import { lines, type makeRunner } from './support';

export const COMMANDS = 4;
/** Each command prints 300 KB of its own (over the 32 KB cap: the full output goes to a blob) and records that it ran. */
const command = (n: number) => `yes x${n} | head -c 300000; echo ${n} >> effects.txt`;
export const bigOutputs: Scenario = {
  name: 'big-outputs',
  description: 'offline demo model: commands with 300 KB of output',
  model: DEMO_MODEL_ID,
  turns: [
    ...Array.from({ length: COMMANDS }, (_, i) => ({
      reply: {
        content: `command ${i + 1}`,
        tool_calls: [{ name: 'run_command', arguments: { command: command(i + 1) } }],
      },
    })),
    { reply: { content: 'done' } },
  ],
  subconversations: [],
};
export const AUTO = { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } } as const;

/** Every tool message and effect result: none may claim that a command failed because of the disk. */
export async function assertNoFalseFailures(store: CheckpointStore, runId: string, label: string): Promise<void> {
  const texts = [
    ...(await store.loadSnapshot(runId)).snapshot.messages
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content)),
    ...(await store.listEffects(runId)).map((e) => e.result?.output ?? ''),
  ];
  for (const t of texts) {
    assert.doesNotMatch(
      t,
      /failed|no space left|ENOSPC: /i,
      `${label}: a tool result claims a failure: ${t.slice(0, 200)}`,
    );
    // Either what the command did, or the user's own "do not run it again" for a call that may have run.
    if (t)
      assert.match(
        t,
        /^(exit code: 0|Not run again \(it may already have run)/,
        `${label}: the command's real status is recorded: ${t.slice(0, 120)}`,
      );
  }
}

/** Resumes (declining "may already have run" calls whose effect is visible) until the run completes. */
export async function resumeToEnd(
  runner: ReturnType<typeof makeRunner>['runner'],
  store: CheckpointStore,
  runId: string,
  workspace: string,
): Promise<void> {
  let out = await (await runner.resume(runId)).done;
  for (let i = 0; i < 20 && out.state !== 'completed'; i++) {
    if (out.state === 'awaiting_approval') {
      const seen = lines(path.join(workspace, 'effects.txt'));
      const pending = await store.listApprovals(runId, { pendingOnly: true });
      const decisions = pending.map((a) => {
        const n = String((a.arguments as { command: string }).command).match(/echo (\d)/)![1]!;
        return seen.includes(n)
          ? ({ kind: 'reject', toolCallId: a.tool_call_id, inputHash: a.input_hash, reason: 'it already ran' } as const)
          : ({ kind: 'approve', toolCallId: a.tool_call_id, inputHash: a.input_hash } as const);
      });
      out = (await (await runner.decideApprovals(runId, decisions))?.done) ?? out;
    } else out = await (await runner.resume(runId)).done;
  }
  assert.equal(out.state, 'completed', out.detail ?? '');
}
