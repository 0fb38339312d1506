// The model writes the summary a condense puts in place of older turns. The part to summarize is
// sent as a plain-text transcript (tool outputs clipped), in chunks that fit the window when it is
// long, each chunk folded into the summary so far (a rolling summary): a condense never needs more
// window than the model has.
import type { ChatMessage, Usage } from '../../store/api/schema';
import type { ChatProvider } from '../provider/types';
import { countText } from './tokens';

/** The first words of every summary request (the scripted test server recognises it by them). */
export const CONDENSE_REQUEST_MARKER = "Condense this part of a coding agent's conversation";

export const CONDENSE_SYSTEM_PROMPT = [
  'You condense the conversation of a coding agent so that it can continue its task with less context.',
  'Write the summary for the agent itself. Keep: the task and every request of the user; decisions made and why; files read and changed (paths, what changed); commands run and their outcomes; errors and open problems; what remains to do.',
  'Be specific (names, paths, numbers, exact errors). No preamble, no closing remarks.',
].join('\n');

/** Characters of one tool output kept in the transcript the summarizer reads. */
const OUTPUT_CLIP_CHARS = 1200;

export interface SummaryResult {
  summary: string;
  usage: Usage | null;
  cost_usd: number | null;
  calls: number;
}

export interface SummarizeOptions {
  provider: ChatProvider;
  previous: string | null;
  /** The messages to fold into the summary, oldest first. */
  messages: readonly ChatMessage[];
  /** Tokens one summary request may take (its transcript part). */
  chunkTokens: number;
  /** Longest summary, in tokens (asked for, and cut to it if the model writes more). */
  summaryTokens: number;
  signal?: AbortSignal;
}

export function transcriptLines(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
        return `## System\n${m.content}`;
      case 'user':
        return `## User\n${m.content}`;
      case 'assistant': {
        const calls = (m.tool_calls ?? []).map((c) => `→ ${c.function.name} ${c.function.arguments}`);
        return `## Agent\n${[m.content ?? '', ...calls].filter(Boolean).join('\n')}`;
      }
      case 'tool': {
        const clip = m.content.length > OUTPUT_CLIP_CHARS;
        const text = clip
          ? `${m.content.slice(0, OUTPUT_CLIP_CHARS)}\n… (${m.content.length - OUTPUT_CLIP_CHARS} more characters)`
          : m.content;
        return `## Tool result (${m.tool_call_id})\n${text}`;
      }
    }
  });
}

/** Transcript lines grouped so each group stays within `tokens` (a single longer line is cut). */
export async function chunkLines(lines: readonly string[], tokens: number): Promise<string[]> {
  const chunks: string[] = [];
  let cur: string[] = [];
  let size = 0;
  for (const line of lines) {
    let n = await countText(line);
    let text = line;
    if (n > tokens) {
      text = line.slice(0, tokens * 3);
      n = await countText(text);
    }
    if (size + n > tokens && cur.length > 0) {
      chunks.push(cur.join('\n\n'));
      cur = [];
      size = 0;
    }
    cur.push(text);
    size += n;
  }
  if (cur.length > 0) chunks.push(cur.join('\n\n'));
  return chunks;
}

export async function summarize(o: SummarizeOptions): Promise<SummaryResult> {
  let summary = o.previous;
  let usage: Usage | null = null;
  let cost: number | null = 0;
  let calls = 0;
  const words = Math.max(100, Math.floor(o.summaryTokens * 0.7));
  for (const chunk of await chunkLines(transcriptLines(o.messages), o.chunkTokens)) {
    const content = [
      `${CONDENSE_REQUEST_MARKER}: write a summary of at most ${words} words.`,
      summary ? `The summary so far:\n\n${summary}\n\nThe conversation since then:` : 'The conversation:',
      chunk,
    ].join('\n\n');
    const r = await o.provider.complete({
      messages: [
        { role: 'system', content: CONDENSE_SYSTEM_PROMPT },
        { role: 'user', content },
      ],
      signal: o.signal,
    });
    calls += 1;
    usage = addUsage(usage, r.response.usage);
    cost = cost === null || r.cost_usd === null ? null : cost + r.cost_usd;
    const text = (r.response.message.content ?? '').trim();
    if (!text) throw new Error('the model returned an empty summary');
    summary = text.length > o.summaryTokens * 4 ? `${text.slice(0, o.summaryTokens * 4)}…` : text;
  }
  return { summary: summary ?? '', usage, cost_usd: calls === 0 ? 0 : cost, calls };
}

/** Sums two ledger entries (null = nothing reported). Estimated if either part was. */
export function addUsage(a: Usage | null, b: Usage | null | undefined): Usage | null {
  if (!b) return a;
  if (!a) return { ...b };
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: Usage = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
  const cached = sum(a.cached_tokens, b.cached_tokens);
  const reasoning = sum(a.reasoning_tokens, b.reasoning_tokens);
  if (cached !== undefined) out.cached_tokens = cached;
  if (reasoning !== undefined) out.reasoning_tokens = reasoning;
  if (a.estimated || b.estimated) out.estimated = true;
  return out;
}
