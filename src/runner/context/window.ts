// The model's context window, in tokens, from the best source there is:
//   1. what a "context length exceeded" error taught this run (the server's own word),
//   2. the user's setting for this model (agentWaypoints.context.windows),
//   3. the server: GET /models (vLLM max_model_len, OpenRouter/Together context_length, Groq
//      context_window, LM Studio loaded/max_context_length, llama.cpp meta.n_ctx / n_ctx_train) or
//      vscode.lm's maxInputTokens,
//   4. a default per known model family, else FALLBACK_WINDOW.

export interface ContextWindow {
  tokens: number;
  source: 'error' | 'setting' | 'server' | 'vscode-lm' | 'default';
}

/** For a model nothing is known about: small enough for most local models' default configuration. */
export const FALLBACK_WINDOW = 32_768;

/** Input windows of known model families (prefix of the normalized name → tokens), longest prefix wins. */
export const FAMILY_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-5': 272_000,
  'gpt-4.1': 1_047_576,
  'gpt-4o': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
  o1: 200_000,
  o3: 200_000,
  'o4-mini': 200_000,
  'gpt-oss': 131_072,
  claude: 200_000,
  gemini: 1_048_576,
  'deepseek-chat': 128_000,
  'deepseek-reasoner': 128_000,
  'llama3.1': 131_072,
  'llama3.2': 131_072,
  'llama3.3': 131_072,
  'qwen2.5-coder': 32_768,
  qwen3: 40_960,
  mistral: 32_768,
  codestral: 256_000,
};

/** The family default for a model name (`openai/` and other routing prefixes ignored), or null. */
export function familyWindow(model: string, table: Readonly<Record<string, number>> = FAMILY_WINDOWS): number | null {
  const name = model.trim().toLowerCase();
  const bare = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  let best: [string, number] | null = null;
  for (const [prefix, tokens] of Object.entries(table)) {
    const p = prefix.toLowerCase();
    if ((bare.startsWith(p) || name.startsWith(p)) && (!best || p.length > best[0].length)) best = [p, tokens];
  }
  return best ? best[1] : null;
}

const positiveInt = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : null;

/**
 * The window one GET /models entry states, in the fields servers use. The loaded context (what the
 * server will accept now) before the model's maximum.
 */
export function windowFromModelEntry(entry: unknown): number | null {
  if (!entry || typeof entry !== 'object') return null;
  const e = entry as Record<string, unknown>;
  const meta = (e.meta && typeof e.meta === 'object' ? e.meta : {}) as Record<string, unknown>;
  const top = (e.top_provider && typeof e.top_provider === 'object' ? e.top_provider : {}) as Record<string, unknown>;
  return (
    positiveInt(e.max_model_len) ?? // vLLM
    positiveInt(e.loaded_context_length) ?? // LM Studio (the loaded instance)
    positiveInt(meta.n_ctx) ?? // llama.cpp builds that report the slot context
    positiveInt(e.context_length) ?? // OpenRouter, Together
    positiveInt(top.context_length) ?? // OpenRouter's serving provider
    positiveInt(e.context_window) ?? // Groq
    positiveInt(e.max_context_length) ?? // LM Studio (the model's maximum)
    positiveInt(meta.n_ctx_train) ?? // llama.cpp (the training context; the server may run less)
    null
  );
}

/**
 * The window a "context length exceeded" error states: OpenAI/vLLM/DeepSeek "maximum context length
 * is N tokens", OpenRouter "This endpoint's maximum context length is N", llama.cpp
 * `n_ctx` / "available context size (N tokens)", Anthropic-style "… > N".
 */
export function windowFromOverflowMessage(message: string, body?: Record<string, unknown>): number | null {
  const nCtx = positiveInt(body?.n_ctx);
  if (nCtx) return nCtx;
  const patterns = [
    /maximum context length is (\d+)/i,
    /context size \((\d+) tokens\)/i,
    /context (?:window|limit)(?: of| is)? (\d+)/i,
    /> (\d+), decrease input length/i,
  ];
  for (const p of patterns) {
    const m = p.exec(message);
    if (m) return positiveInt(Number(m[1]));
  }
  return null;
}

export interface WindowSources {
  learned: number | null;
  setting: number | null;
  provider: ContextWindow | null;
  family: number | null;
}

export function resolveWindow(s: WindowSources): ContextWindow {
  // A learned window only ever lowers what we assumed (the server refused more than it).
  const assumed: ContextWindow =
    s.setting !== null
      ? { tokens: s.setting, source: 'setting' }
      : (s.provider ?? { tokens: s.family ?? FALLBACK_WINDOW, source: 'default' });
  if (s.learned !== null && s.learned < assumed.tokens) return { tokens: s.learned, source: 'error' };
  return assumed;
}

/** "128k", "16k", "1M": the window as the header shows it. */
export function formatWindow(tokens: number): string {
  if (tokens >= 1_000_000) return `${+(tokens / 1_000_000).toFixed(1)}M`;
  // Powers of two are named in binary thousands (16384 → "16k"), round figures in decimal (128000 → "128k").
  return tokens % 1024 === 0 ? `${tokens / 1024}k` : `${Math.round(tokens / 1000)}k`;
}
