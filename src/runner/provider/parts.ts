// What servers put where the answer goes: a string (OpenAI), an array of typed parts (Mistral's
// `[{type: "thinking", thinking: [...]}, {type: "text", text}]`), and the reasoning beside it
// (`reasoning_content`: DeepSeek, llama.cpp, vLLM; `reasoning`: OpenRouter, Ollama, Groq). The
// answer and the reasoning are kept apart: reasoning is shown collapsed, never taken as the answer.

export interface Split {
  /** null when the field carried no text at all (absent, null, or only non-text parts). */
  text: string | null;
  reasoning: string;
  /** Part types we did not understand (reported as warnings, never guessed at). */
  unknown: string[];
}

/** Splits a `content` field (string, null, or an array of typed parts) into answer and reasoning. */
export function splitContent(content: unknown): Split {
  if (typeof content === 'string') return { text: content, reasoning: '', unknown: [] };
  if (!Array.isArray(content)) return { text: null, reasoning: '', unknown: [] };
  let text: string | null = null;
  let reasoning = '';
  const unknown: string[] = [];
  for (const part of content as unknown[]) {
    if (typeof part === 'string') {
      text = (text ?? '') + part;
      continue;
    }
    const p = (part ?? {}) as { type?: unknown; text?: unknown; thinking?: unknown; reasoning?: unknown };
    if (p.type === 'text' && typeof p.text === 'string') text = (text ?? '') + p.text;
    else if (p.type === 'thinking' || p.type === 'reasoning') reasoning += textOf(p.thinking ?? p.reasoning ?? p.text);
    else unknown.push(String(p.type ?? typeof part));
  }
  return { text, reasoning, unknown };
}

/** Where a response's reasoning came from; decides what may be sent back (client.ts wireMessages). */
export type ReasoningFrom = 'reasoning_content' | 'reasoning' | 'thinking_parts';

/** The reasoning a server sent beside the content of a message or a stream delta. */
export function reasoningBeside(m: unknown): { text: string; from: ReasoningFrom | null } {
  if (!m || typeof m !== 'object') return { text: '', from: null };
  const r = m as { reasoning_content?: unknown; reasoning?: unknown };
  // Some servers send both with the same text (OpenRouter mirrors one into the other): take one.
  const rc = textOf(r.reasoning_content);
  if (rc) return { text: rc, from: 'reasoning_content' };
  const plain = textOf(r.reasoning);
  return plain ? { text: plain, from: 'reasoning' } : { text: '', from: null };
}

/** Text of a string, or of an array of strings / `{text}` parts (Mistral nests thinking this way). */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return '';
  return v
    .map((x) =>
      typeof x === 'string'
        ? x
        : typeof (x as { text?: unknown })?.text === 'string'
          ? (x as { text: string }).text
          : '',
    )
    .join('');
}
