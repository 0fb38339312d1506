// Test helpers for JSON data.

/** Same value with its keys inserted in reverse order, recursively. */
export function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = Object.create(null); // so a "__proto__" key stays an own key
    for (const k of Object.keys(v).reverse()) out[k] = reverseKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
