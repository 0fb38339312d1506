// Small statistics helpers. Percentiles are nearest-rank on the sorted samples (no interpolation),
// so with 20 samples the p95 is the 19th value.
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export const median = (s: readonly number[]): number => percentile(s, 50);
export const p95 = (s: readonly number[]): number => percentile(s, 95);
export const sum = (s: readonly number[]): number => s.reduce((a, b) => a + b, 0);

/**
 * The steps measured around a point: `width` steps centred on it, shifted to stay inside 1..n
 * (at the last step the window is the last `width` steps).
 */
export function windowAround(point: number, width: number, n: number): { from: number; to: number } {
  let from = point - Math.floor(width / 2) + 1;
  let to = from + width - 1;
  if (to > n) {
    to = n;
    from = Math.max(1, n - width + 1);
  }
  if (from < 1) {
    from = 1;
    to = Math.min(n, width);
  }
  return { from, to };
}

/**
 * Two contenders' samples taken in pairs (the same step, one after the other): each one's median,
 * the median of the differences a − b, and the share of pairs in which a took less time than b.
 */
export function paired(
  a: readonly number[],
  b: readonly number[],
): { medianA: number; medianB: number; medianDiff: number; fasterShare: number } {
  if (a.length !== b.length) throw new Error(`paired samples of unequal length (${a.length}, ${b.length})`);
  return {
    medianA: median(a),
    medianB: median(b),
    medianDiff: median(a.map((x, i) => x - b[i]!)),
    fasterShare: a.length === 0 ? NaN : a.filter((x, i) => x < b[i]!).length / a.length,
  };
}
