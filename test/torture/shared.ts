// What the torture child writes, as a pure function of (seed, step), so the parent can rebuild the
// uninterrupted transcript and check every resumed run against it. Also the ACK line format.
import crypto from 'node:crypto';
import type { ChatMessage, ToolExecutionRecord } from '../../src/store/api/schema';
import { canonicalJson } from '../../src/store/api/canonical';

export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** JSON with sorted keys: equal data → equal text, whatever the key order (the store's own). */
export const canonical = canonicalJson;

export const digest = (v: unknown): string =>
  crypto.createHash('sha256').update(canonical(v)).digest('hex').slice(0, 24);

export interface StepPlan {
  assistant: ChatMessage;
  calls: { id: string; output: string; needsApproval: boolean; blob: boolean }[];
  final: boolean;
}

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'file',
  'src',
  'test',
  'const',
  'return',
  '{',
  '}',
  '\n',
  '"quoted"',
  'é',
  '\\',
];

function text(rand: () => number, bytes: number): string {
  let s = '';
  while (s.length < bytes) s += WORDS[Math.floor(rand() * WORDS.length)] + ' ';
  return s;
}

/** Step k of run `seed` (1-based). The last step answers without tool calls. */
export function planStep(seed: number, k: number, steps: number): StepPlan {
  const rand = mulberry32(seed * 7919 + k);
  if (k >= steps)
    return { assistant: { role: 'assistant', content: `All done after ${k} steps.` }, calls: [], final: true };
  const n = 1 + Math.floor(rand() * 3);
  const calls = Array.from({ length: n }, (_, i) => {
    const big = rand() < 0.08;
    const bytes = big ? 8_000 + Math.floor(rand() * 12_000) : 300 + Math.floor(rand() * 3_000);
    return { id: `call_${k}_${i}`, output: text(rand, bytes), needsApproval: rand() < 0.2, blob: big };
  });
  const assistant: ChatMessage = {
    role: 'assistant',
    content: rand() < 0.5 ? null : `Step ${k}: ${text(rand, 80)}`,
    tool_calls: calls.map((c, i) => ({
      id: c.id,
      type: 'function',
      function: {
        name: i === 0 ? 'write_file' : 'read_file',
        arguments: JSON.stringify({ path: `src/f${k}_${i}.ts` }),
      },
    })),
  };
  return { assistant, calls, final: false };
}

export const initialMessages = (seed: number): ChatMessage[] => [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: `Torture run ${seed}: change many files.` },
];

/** The transcript an uninterrupted run ends with. */
export function expectedTranscript(seed: number, steps: number): ChatMessage[] {
  const out = initialMessages(seed);
  for (let k = 1; k <= steps; k++) {
    const p = planStep(seed, k, steps);
    out.push(p.assistant);
    for (const c of p.calls) out.push({ role: 'tool', tool_call_id: c.id, content: c.output });
  }
  return out;
}

export const toolExec = (k: number, c: StepPlan['calls'][number], replayed: boolean): ToolExecutionRecord => ({
  tool_call_id: c.id,
  tool_name: c.id.endsWith('_0') ? 'write_file' : 'read_file',
  step: k,
  input_hash: `in_${c.id}`,
  output_hash: crypto.createHash('sha256').update(c.output).digest('hex'),
  is_error: false,
  replayed,
  started_ms: 1,
  finished_ms: 2,
});

/** One line on the child's stdout. */
export type Ack =
  | { k: 'ready'; pid: number }
  | { k: 'run'; run_id: string; seed: number; steps: number }
  /** durable: on disk before append resolved; else queued (durable at the next commit / flush). */
  | { k: 'rec'; seq: number; h: string; snap: string | null; durable: boolean }
  | { k: 'flush'; upto: number }
  | { k: 'eff'; id: string; h: string }
  | { k: 'appr'; id: string; h: string; uncertain: boolean }
  | { k: 'blob'; hash: string }
  | { k: 'done' }
  /** STOP_BEFORE_WRITE: the child is about to stop itself before a write. */
  | { k: 'stopping' }
  /** The store refused a write (database away, run taken over): the run pauses here. */
  | { k: 'paused'; message: string }
  | { k: 'error'; message: string };

export const ACK = 'ACK ';
