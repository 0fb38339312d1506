// Cost is an estimate from a per-model price table. A model we have no price for costs `null`
// (unknown), never 0: a made-up zero would silently defeat the run's cost budget.
import type { Usage } from '../../store/api/schema';

export interface ModelPrice {
  /** USD per million input (prompt) tokens. */
  input_per_mtok: number;
  /** USD per million output (completion) tokens. */
  output_per_mtok: number;
}
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * Only prices we are sure of (OpenAI list prices, standard tier). Users override or extend this in
 * settings; local servers (Ollama, LM Studio, vLLM, llama.cpp) have no entry unless configured.
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10 },
  'gpt-4o-mini': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
  'gpt-4.1': { input_per_mtok: 2, output_per_mtok: 8 },
  'gpt-4.1-mini': { input_per_mtok: 0.4, output_per_mtok: 1.6 },
  'gpt-4.1-nano': { input_per_mtok: 0.1, output_per_mtok: 0.4 },
  // The scripted offline server of the tests and the demo: it really is free.
  'waypoints-demo-model': { input_per_mtok: 0, output_per_mtok: 0 },
};

/**
 * The key used for price lookups and recorded as `normalized_model`: trimmed, lower-cased, without
 * an `openai/` routing prefix (as some proxies spell it). Local names such as `llama3.1:8b` stay as they are.
 */
export function normalizeModel(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^openai\//, '');
}

/** Exact match first, then a dated snapshot of a priced model (`gpt-4o-2024-08-06` → `gpt-4o`). */
export function priceFor(model: string, table: PriceTable): ModelPrice | null {
  const m = normalizeModel(model);
  const normalizedTable = new Map(Object.entries(table).map(([k, v]) => [normalizeModel(k), v]));
  const exact = normalizedTable.get(m);
  if (exact) return exact;
  const dated = /^(.*)-\d{4}-\d{2}-\d{2}$/.exec(m);
  return (dated && normalizedTable.get(dated[1] ?? '')) || null;
}

/** USD for one call; null when the model has no price or the server reported no usage. */
export function costUsd(model: string, usage: Usage | null, table: PriceTable): number | null {
  if (!usage) return null;
  const price = priceFor(model, table);
  if (!price) return null;
  return (usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok) / 1_000_000;
}
