// Bounded execution: a hit limit pauses the run with a checkpoint; it can be
// resumed with a raised budget. Zero/absent limits mean "no limit".
import { z } from 'zod';
import type { SnapshotHeader } from '../store/api/schema';

export const Budget = z.object({
  max_steps: z.number().int().positive().nullable(),
  max_cost_usd: z.number().positive().nullable(),
  max_tokens: z.number().int().positive().nullable(),
  max_wall_ms: z.number().int().positive().nullable(),
});
export type Budget = z.infer<typeof Budget>;

export const DEFAULT_BUDGET: Budget = { max_steps: 25, max_cost_usd: null, max_tokens: null, max_wall_ms: null };

type Usage = Pick<SnapshotHeader, 'step' | 'total_cost_usd' | 'usage'>;

/**
 * The first exceeded limit as a sentence for the user, or null when within budget.
 * `activeMs` is time spent running, not time paused (a run may wait days for an approval).
 */
export function budgetExceeded(b: Budget, s: Usage, activeMs: number): string | null {
  if (b.max_steps !== null && s.step > b.max_steps) return `step budget reached (${b.max_steps} steps)`;
  if (b.max_cost_usd !== null && s.total_cost_usd !== null && s.total_cost_usd >= b.max_cost_usd) {
    return `cost budget reached ($${s.total_cost_usd.toFixed(4)} of $${b.max_cost_usd})`;
  }
  if (b.max_tokens !== null && s.usage.total_tokens >= b.max_tokens) {
    return `token budget reached (${s.usage.total_tokens} of ${b.max_tokens} tokens)`;
  }
  if (b.max_wall_ms !== null && activeMs >= b.max_wall_ms) {
    return `time budget reached (${Math.round(activeMs / 1000)} s of ${Math.round(b.max_wall_ms / 1000)} s)`;
  }
  return null;
}

/**
 * Checked before each request with its counted prompt size, so a limit is not found out only after
 * the request that passes it was paid for. null when the request fits the budget.
 */
export function budgetBeforeRequest(
  b: Budget,
  s: Usage,
  next: { promptTokens: number; promptCostUsd: number | null },
): string | null {
  if (b.max_tokens !== null && s.usage.total_tokens + next.promptTokens > b.max_tokens) {
    return `token budget: the next request (≈ ${next.promptTokens} prompt tokens) would pass it (${s.usage.total_tokens} of ${b.max_tokens} tokens used)`;
  }
  if (b.max_cost_usd !== null && s.total_cost_usd !== null && next.promptCostUsd !== null) {
    if (s.total_cost_usd + next.promptCostUsd > b.max_cost_usd)
      return `cost budget: the next request (≈ $${next.promptCostUsd.toFixed(4)} for its prompt) would pass it ($${s.total_cost_usd.toFixed(4)} of $${b.max_cost_usd} spent)`;
  }
  return null;
}
