// What the model sees: the run's messages (which keep everything) rendered through its
// ModelContext. Pure and deterministic, so a checkpoint's snapshot (messages + model_context) is
// the exact context of the next request — after a resume, in a fork, after an undo.
import type { ChatMessage, ModelContext, ToolExecutionRecord } from '../../store/api/schema';

/** The tool that reads an elided output back (context/readOutput.ts). */
export const READ_OUTPUT_TOOL = 'read_output';
/** Characters of an elided output kept in its stub, so the model still sees what it was. */
const STUB_PREVIEW_CHARS = 240;

export const EMPTY_CONTEXT: ModelContext = {
  stub_before: 0,
  stub_chars: 2048,
  condense: null,
  learned_window: null,
  hold: false,
};

/** Stubs are built once per message object: the token counter's cache then hits them too. */
const stubs = new WeakMap<object, { chars: number; step: number; stub: ChatMessage }>();

/** Where each tool call ran: the step whose checkpoints hold its output. */
export type StepOf = (toolCallId: string) => number | undefined;

export function stepLookup(executions: readonly ToolExecutionRecord[]): StepOf {
  let map: Map<string, number> | null = null;
  const build = () => {
    const m = new Map<string, number>();
    executions.forEach((e) => m.set(e.tool_call_id, e.step)); // (passes over holes a resume left)
    return m;
  };
  return (id) => (map ??= build()).get(id);
}

export function stubText(m: Extract<ChatMessage, { role: 'tool' }>, step: number | undefined): string {
  const where = step === undefined ? 'in the run' : `in the checkpoints of step ${step}`;
  const preview = m.content.slice(0, STUB_PREVIEW_CHARS).replace(/\s+$/, '');
  return (
    `[Output elided from the context to save space: ${m.content.length.toLocaleString('en-US')} characters, kept ${where}. ` +
    `Call ${READ_OUTPUT_TOOL} with {"tool_call_id": "${m.tool_call_id}"} to read it again, in pages. It began:]\n${preview}…`
  );
}

function stubbed(m: ChatMessage, chars: number, stepOf: StepOf): ChatMessage {
  if (m.role !== 'tool' || m.content.length <= chars) return m;
  const step = stepOf(m.tool_call_id) ?? -1;
  const hit = stubs.get(m);
  if (hit && hit.chars === chars && hit.step === step) return hit.stub;
  const stub: ChatMessage = { ...m, content: stubText(m, step < 0 ? undefined : step) };
  stubs.set(m, { chars, step, stub });
  return stub;
}

const summaries = new WeakMap<object, ChatMessage>();

/** The summary as the model reads it: a user message that says what it stands for. */
export function summaryMessage(c: NonNullable<ModelContext['condense']>): ChatMessage {
  const hit = summaries.get(c);
  if (hit) return hit;
  const m: ChatMessage = {
    role: 'user',
    content:
      `[Summary of the earlier conversation (messages ${c.head + 1}–${c.through} condensed at step ${c.step} to fit the context window; ` +
      `the full history is kept in the run). Continue the task from here.]\n\n${c.summary}`,
  };
  summaries.set(c, m);
  return m;
}

/** The messages of the next request. */
export function modelMessages(
  messages: readonly ChatMessage[],
  mc: ModelContext | null | undefined,
  stepOf: StepOf = () => undefined,
): ChatMessage[] {
  if (!mc || (mc.stub_before === 0 && !mc.condense)) return messages.slice();
  const out: ChatMessage[] = [];
  const c = mc.condense;
  const render = (i: number) => (i < mc.stub_before ? stubbed(messages[i]!, mc.stub_chars, stepOf) : messages[i]!);
  const head = c ? Math.min(c.head, messages.length) : messages.length;
  for (let i = 0; i < head; i++) out.push(render(i));
  if (c) {
    out.push(summaryMessage(c));
    for (let i = c.through; i < messages.length; i++) out.push(render(i));
  }
  return out;
}

/**
 * Index of the first message of the last `n` steps (a step begins with an assistant message; user
 * messages just before it go with it), never before `floor`. n = 0: the end.
 */
export function startOfLastSteps(messages: readonly ChatMessage[], n: number, floor: number): number {
  if (n <= 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= floor; i--) {
    if (messages[i]!.role !== 'assistant') continue;
    seen += 1;
    if (seen === n) {
      let start = i;
      while (start - 1 >= floor && messages[start - 1]!.role === 'user') start -= 1;
      return start;
    }
  }
  return floor;
}

/** Index just after the first user message (the task): what a condense always keeps. */
export function headLength(messages: readonly ChatMessage[]): number {
  const firstUser = messages.findIndex((m) => m.role === 'user');
  return firstUser < 0 ? Math.min(1, messages.length) : firstUser + 1;
}
