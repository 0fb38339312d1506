// What the segment tests share: a step as they write it (start, response with a call, the call's intent
// and result), and a run folder's segment file.
import fs from 'node:fs';
import path from 'node:path';
import type { DiskStore } from '../../../src/store/disk/store';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

export async function stepWithEffect(
  s: DiskStore,
  id: string,
  step: number,
  msgs: ChatMessage[],
): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(step, msgs)));
  const a = h.assistantWithCall(step);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(step, msgs, { pending_llm_response: h.pendingResponse(a, step) })));
  await s.recordIntent(id, {
    tool_call_id: `call_${step}`,
    step,
    tool_name: 'run_command',
    input_hash: `ih${step}`,
    side_effecting: true,
  });
  await s.recordResult(id, `call_${step}`, {
    output: `ran ${step}`,
    output_hash: `oh${step}`,
    is_error: false,
    blob: null,
  });
  return [...msgs, { role: 'tool', tool_call_id: `call_${step}`, content: `ran ${step}` }];
}

export const segmentIn = (runDir: string): string =>
  path.join(
    runDir,
    fs.readdirSync(runDir).find((n) => n.startsWith('segment-'))!,
  );
