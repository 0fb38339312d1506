// Trial counts of the crash/integration tier (`npm run test:int`). Each test names its default, sized
// so the whole of `npm test` fits its budget; `AW_SOAK=<factor>` multiplies every count for a longer
// run, and a test's own variable (e.g. `AW_TORTURE_TRIALS=500`) sets one count outright. The long soak
// of the store stays `npm run torture`.

/** A positive whole number from an environment variable, or a clear error naming it. */
function count(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${raw}: expected a positive number`);
  return n;
}

/** How many trials to run: `variable` if set, else `defaultCount` × AW_SOAK (at least one). */
export function trials(defaultCount: number, variable?: string): number {
  const own = variable ? process.env[variable] : undefined;
  if (variable && own) return Math.round(count(variable, own));
  const soak = process.env.AW_SOAK ? count('AW_SOAK', process.env.AW_SOAK) : 1;
  return Math.max(1, Math.round(defaultCount * soak));
}
