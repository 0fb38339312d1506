/** A JSON object (not null, not an array): what a parsed `{…}` is. */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether two JSON values would serialise alike (`JSON.stringify(a) === JSON.stringify(b)`: key
 * order counts), without serialising them — the store compares a list's boundary item and a
 * checkpoint's fields with their previous ones at every step, and a long message's two strings cost
 * more than walking it. Anything that is not plain JSON data is compared by serialising it.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // Two different strings, or two different finite numbers (most of what a step compares): unlike.
    if ((typeof a === 'string' && typeof b === 'string') || (Number.isFinite(a) && Number.isFinite(b))) return false;
    // null and a plain object or array (a header's pending response, once it is answered): "null" is
    // never "{…}" or "[…]" — without serialising the object to find that out.
    const other = a === null ? b : b === null ? a : undefined;
    if (typeof other === 'object' && other !== null && (Array.isArray(other) || isPlain(other))) return false;
    return primitivesAlike(a, b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return JSON.stringify(a) === JSON.stringify(b);
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return JSON.stringify(a) === JSON.stringify(b); // (undefined members are left out)
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    const x = (a as Record<string, unknown>)[k];
    const y = (b as Record<string, unknown>)[k];
    if (x === undefined || y === undefined) return JSON.stringify(a) === JSON.stringify(b);
    if (!jsonEqual(x, y)) return false;
  }
  return true;
}

/**
 * Whether `input` (anything a caller passed) is exactly `stored` (JSON data the store checked and
 * keeps): plain objects with the same keys in the same order, arrays of the same length, the same
 * strings, finite numbers, booleans and nulls, nothing more. Then a copy of `input` checked by the
 * same schema (one with no transforms) gives `stored` again, so neither needs to be made. Anything
 * else (a hole, an undefined member, a class instance, a getter's changing value) is simply "not
 * sure": false.
 */
export function isExactly(input: unknown, stored: unknown): boolean {
  if (input === stored) return true;
  if (typeof input !== 'object' || typeof stored !== 'object' || input === null || stored === null) return false;
  if (Array.isArray(stored)) {
    if (!Array.isArray(input) || input.length !== stored.length) return false;
    for (let i = 0; i < stored.length; i++) if (!isExactly(input[i], stored[i])) return false;
    return true;
  }
  if (Array.isArray(input)) return false;
  const p = Object.getPrototypeOf(input);
  if (p !== Object.prototype && p !== null) return false;
  const ki = Object.keys(input);
  const ks = Object.keys(stored);
  if (ki.length !== ks.length) return false;
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i]!;
    if (ki[i] !== k) return false;
    if (!isExactly((input as Record<string, unknown>)[k], (stored as Record<string, unknown>)[k])) return false;
  }
  return true;
}

const isPlain = (o: object) => {
  const p = Object.getPrototypeOf(o);
  return (p === Object.prototype || p === null) && !('toJSON' in o);
};

/** Two values, not both objects, not identical: alike only as serialised (NaN and null, a Date and its string, …). */
function primitivesAlike(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return !Number.isFinite(a) && !Number.isFinite(b); // (each "null")
  const plain = (v: unknown) =>
    typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (plain(a) && plain(b)) return false;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false; // (a bigint: not JSON at all)
  }
}
