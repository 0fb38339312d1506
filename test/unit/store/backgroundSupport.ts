// A run's steps as the runner writes them while compaction runs in the background
// (backgroundCompaction*.test.ts), and the files that hold its log.
import fs from 'node:fs';
import type { CheckpointStore } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

/** What a run reads as through the API: its records, effects and newest snapshot, canonical. */
export async function reading(s: CheckpointStore, id: string): Promise<string> {
  const records = await s.list(id, { limit: 1000 });
  return h.canonical({ records, effects: await s.listEffects(id), latest: await s.loadSnapshot(id) });
}

export const logFiles = (runDir: string) =>
  fs
    .readdirSync(runDir)
    .filter((n) => n === 'snapshot.json' || n.startsWith('segment-'))
    .sort();

/** One step as the runner writes it: start, barrier, response + intent together, result with the next start. */
export async function step(
  s: CheckpointStore,
  id: string,
  k: number,
  msgs: ChatMessage[],
  intentAcked = () => {},
  barrier: { toolsNext?: boolean } = {},
): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
  await s.makeDurable(id, barrier);
  // Handed over at once after the barrier, while a background compaction may be running.
  await s.append(id, h.preLlm(k, msgs.length));
  const a = h.assistantWithCall(k);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(k, msgs, { pending_llm_response: h.pendingResponse(a, k) })), {
    durability: 'next-barrier',
  });
  await s.recordIntent(id, {
    tool_call_id: `call_${k}`,
    step: k,
    tool_name: 'w',
    input_hash: `i${k}`,
    side_effecting: true,
  });
  intentAcked();
  const out = `output of step ${k} `.repeat(20);
  await s.recordResult(
    id,
    `call_${k}`,
    { output: out, output_hash: `o${k}`, is_error: false, blob: null },
    { durability: 'next-barrier' },
  );
  await s.append(id, h.postTools(k));
  return [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
}
