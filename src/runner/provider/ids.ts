// Tool-call ids must be unique within a run: results are matched to calls, journaled and replayed
// by id. Servers do not all guarantee that: Gemini sends `id: ""` (we assign one per response),
// Kimi's `functions.add:0` counts from 0 again in every response. A repeated id gets a suffix
// derived from the step and position, so it is the same whenever the same response is assembled,
// and it is stored with the response (post_llm), so a resumed run sees exactly the same ids.
import type { AssistantMessage, ChatMessage } from '../../store/api/schema';

/** Renames, in place, tool calls of `message` whose id an earlier message (or an earlier call of it) used. Returns what it renamed, for the log. */
export function makeToolCallIdsUnique(
  message: AssistantMessage,
  earlier: readonly ChatMessage[],
  step: number,
  /** Ids used in messages `earlier` does not hold (a run resumed from its resume point: holes). */
  taken: ReadonlySet<string> = new Set(),
): string[] {
  const used = new Set<string>(taken);
  // (forEach passes over holes)
  earlier.forEach((m) => {
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) used.add(c.id);
  });
  const renamed: string[] = [];
  (message.tool_calls ?? []).forEach((call, i) => {
    if (!used.has(call.id)) {
      used.add(call.id);
      return;
    }
    let id = `${call.id}~s${step}.${i}`;
    for (let n = 2; used.has(id); n++) id = `${call.id}~s${step}.${i}.${n}`;
    renamed.push(`tool call id ${call.id} was already used in this run; renamed ${id}`);
    call.id = id;
    used.add(id);
  });
  return renamed;
}
