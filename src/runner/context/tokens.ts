// Counting a request's tokens before it is sent. Messages are immutable once in the conversation,
// so each message is counted once (a WeakMap on the object) and a request costs a sum plus the
// messages that are new since the last one, instead of a full re-encode of the conversation.
//
// Which count:
//  - a provider that counts itself (vscode.lm's countTokens) → its count, the model's own tokenizer;
//  - otherwise o200k_base (gpt-tokenizer; the GPT-4o/4.1/5/o-series tokenizer): exact for those
//    models; for any other model on an OpenAI-compatible server an estimate, raised by
//    OTHER_TOKENIZER_MARGIN because Llama/Qwen/Mistral tokenizers cut code into up to ≈ 15 % more
//    pieces. Per message OpenAI adds a few framing tokens (the cookbook's 3 per message, 3 for the
//    reply), counted here too; tool definitions are counted as their JSON.
import { Breather } from '../../common/breather';
import type { ChatMessage } from '../../store/api/schema';
import type { ToolDefinition } from '../provider/types';

/** Framing tokens per message (role, separators) and for priming the reply, as OpenAI's cookbook counts them. */
export const TOKENS_PER_MESSAGE = 4;
export const REPLY_PRIMING_TOKENS = 3;
/** Multiplier for models whose tokenizer is not o200k_base. */
export const OTHER_TOKENIZER_MARGIN = 1.15;
/** When nothing better can count (a provider's counter failed): characters per token, on the safe side. */
export const CHARS_PER_TOKEN_ESTIMATE = 3;

/** A run of characters the BPE sees whole up to this length; its merge is quadratic in it, so a longer run is counted in slices of this length. */
export const MAX_RUN_CHARS = 256;
/** Characters of one text counted exactly, which bounds the time one text takes; the rest is estimated. */
export const EXACT_CHARS = 128 * 1024;
/** Whole pre-tokens handed to the tokenizer per call: a call costs at most a few ms, whatever the text. */
const SLICE_CHARS = 1024;

interface O200k {
  count(text: string): number;
  /** o200k's pre-tokenizer: the BPE never merges across its matches. */
  split: RegExp;
}
let o200k: O200k | null = null;

/** The tokenizer, loaded on first use (≈ 2 MB of ranks: never at activation). */
function encoder(): O200k {
  if (!o200k) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const mod = require('gpt-tokenizer/encoding/o200k_base') as {
      countTokens(text: string, o: { disallowedSpecial: Set<string> }): number;
    };
    const params = require('gpt-tokenizer/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp };
    /* eslint-enable @typescript-eslint/no-require-imports */
    // "<|endoftext|>" in a file or a model's answer is text (as the API counts it), not a reason to throw.
    const plain = { disallowedSpecial: new Set<string>() };
    o200k = {
      count: (text) => (text ? mod.countTokens(text, plain) : 0),
      split: new RegExp(params.O200K_TOKEN_SPLIT_REGEX),
    };
  }
  return o200k;
}

/**
 * Tokens of one text with o200k_base: exact for a text of at most EXACT_CHARS characters whose runs
 * are at most MAX_RUN_CHARS (every ordinary text), and bounded in time for any other. The text is
 * cut only between o200k's own pre-tokens, where counts add up; a longer run (one long "word") is
 * counted in slices, and beyond EXACT_CHARS the rest is estimated at the ratio counted so far, never
 * below 1 token per CHARS_PER_TOKEN_ESTIMATE characters, so the window check errs high.
 */
export async function countText(text: string): Promise<number> {
  if (text.length <= MAX_RUN_CHARS) return text.length === 0 ? 0 : encoder().count(text);
  const { count, split } = encoder();
  const cut = text.length > EXACT_CHARS;
  const scan = cut ? text.slice(0, EXACT_CHARS) : text;
  // In a cut scan, a pre-token near the cut may differ from the text's own: those are estimated.
  const exactEnd = cut ? EXACT_CHARS - MAX_RUN_CHARS : scan.length;
  const breather = new Breather();
  let tokens = 0;
  let from = 0; // start of the whole pre-tokens not yet counted
  let counted = 0; // end of the pre-tokens taken so far
  for (const m of scan.matchAll(split)) {
    const start = m.index;
    const end = start + m[0].length;
    const long = m[0].length > MAX_RUN_CHARS;
    if (end > exactEnd && !(long && start < exactEnd)) break;
    if (!long) {
      counted = end;
      if (end - from < SLICE_CHARS) continue;
      tokens += count(scan.slice(from, end));
      from = end;
      await breather.tick();
      continue;
    }
    tokens += count(scan.slice(from, start));
    from = counted = Math.min(end, exactEnd);
    tokens += await countRun(scan.slice(start, from), count, breather);
    if (end > exactEnd) break;
  }
  if (counted > from) tokens += count(scan.slice(from, counted));
  if (counted === text.length) return tokens;
  const perChar = Math.max(counted > 0 ? tokens / counted : 0, 1 / CHARS_PER_TOKEN_ESTIMATE);
  return tokens + Math.ceil((text.length - counted) * perChar);
}

/** A run longer than MAX_RUN_CHARS, in slices of that length (a surrogate pair kept whole). */
async function countRun(run: string, count: (text: string) => number, breather: Breather): Promise<number> {
  let tokens = 0;
  for (let i = 0; i < run.length;) {
    let end = Math.min(run.length, i + MAX_RUN_CHARS);
    if (end < run.length && isHighSurrogate(run.charCodeAt(end - 1))) end++;
    tokens += count(run.slice(i, end));
    i = end;
    await breather.tick();
  }
  return tokens;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/** The text of a message as the model reads it: content, reasoning sent back, tool calls. */
export function messageText(m: ChatMessage): string {
  let text = m.content ?? '';
  if (m.role === 'assistant') {
    for (const c of m.tool_calls ?? []) text += `\n${c.function.name}(${c.function.arguments})`;
  }
  return text;
}

/** Models whose tokenizer is o200k_base (or close enough to count exactly). */
export function isO200kModel(model: string): boolean {
  return /^(openai\/)?(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss)/i.test(model.trim());
}

export interface TokenCounter {
  /** Whether the count is the model's own (false: an estimate within a margin). */
  readonly exact: boolean;
  /** The request's prompt tokens: every message, the tool definitions, the reply priming. */
  count(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): Promise<number>;
}

/** A counter with a per-message cache over a text counter (sync or async). */
export class CachedCounter implements TokenCounter {
  private readonly perMessage = new WeakMap<object, number>();
  private toolsKey = '';
  private toolsTokens = 0;

  constructor(
    private readonly countOne: (text: string) => number | Promise<number>,
    readonly exact: boolean,
    private readonly margin = 1,
  ) {}

  async count(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): Promise<number> {
    let sum = REPLY_PRIMING_TOKENS;
    for (const m of messages) {
      let n = this.perMessage.get(m);
      if (n === undefined) {
        n = TOKENS_PER_MESSAGE + (await this.countOne(messageText(m)));
        this.perMessage.set(m, n);
      }
      sum += n;
    }
    const key = tools.length === 0 ? '' : JSON.stringify(tools);
    if (key !== this.toolsKey) {
      this.toolsKey = key;
      this.toolsTokens = key ? await this.countOne(key) : 0;
    }
    return Math.ceil((sum + this.toolsTokens) * this.margin);
  }
}

/** The counter for a model: its provider's own when it has one, else o200k_base (with a margin off OpenAI models). */
export function counterFor(model: string, own?: (text: string) => Promise<number>): TokenCounter {
  if (own) {
    // The model's own tokenizer; if it fails, a character estimate rather than no count at all.
    return new CachedCounter((text) => own(text).catch(() => Math.ceil(text.length / CHARS_PER_TOKEN_ESTIMATE)), true);
  }
  return isO200kModel(model)
    ? new CachedCounter(countText, true)
    : new CachedCounter(countText, false, OTHER_TOKENIZER_MARGIN);
}
