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
import type { ChatMessage } from '../../store/api/schema';
import type { ToolDefinition } from '../provider/types';

/** Framing tokens per message (role, separators) and for priming the reply, as OpenAI's cookbook counts them. */
export const TOKENS_PER_MESSAGE = 4;
export const REPLY_PRIMING_TOKENS = 3;
/** Multiplier for models whose tokenizer is not o200k_base. */
export const OTHER_TOKENIZER_MARGIN = 1.15;
/** When nothing better can count (a provider's counter failed): characters per token, on the safe side. */
export const CHARS_PER_TOKEN_ESTIMATE = 3;

type Encoder = (text: string) => number;
let o200k: Encoder | null = null;

/** The tokenizer, loaded on first use (≈ 2 MB of ranks: never at activation). */
function encoder(): Encoder {
  if (!o200k) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('gpt-tokenizer/encoding/o200k_base') as { countTokens(text: string): number };
    o200k = (text) => mod.countTokens(text);
  }
  return o200k;
}

/** Tokens of one text with o200k_base. */
export function countText(text: string): number {
  return text.length === 0 ? 0 : encoder()(text);
}

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
