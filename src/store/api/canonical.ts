// JSON with object keys sorted at every level: the same data gives the same text whatever order its
// keys were built or parsed in (zod output follows the schema's order; code builds its own). The one
// implementation for the store's export checksums, the runner's input/output hashes and the tests.
/**
 * JSON with object keys sorted (by UTF-16 code unit, like Array.prototype.sort) and no whitespace.
 * Follows JSON.stringify for everything else: `undefined`/functions in objects are dropped, in arrays
 * they become null, non-finite numbers become null, toJSON() is honoured.
 */
export function canonicalJson(value: unknown): string {
  const out = canonical(value, new Set());
  return out === undefined ? 'null' : out;
}

function canonical(value: unknown, seen: Set<object>): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonical((value as { toJSON(): unknown }).toJSON(), seen);
  }
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return JSON.stringify(value);
  }
  if (typeof value === 'bigint') throw new TypeError('canonicalJson: BigInt is not JSON');
  if (typeof value !== 'object') return undefined; // undefined, function, symbol
  if (seen.has(value)) throw new TypeError('canonicalJson: circular structure');
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return '[' + value.map((v) => canonical(v, seen) ?? 'null').join(',') + ']';
    }
    const parts: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const v = canonical((value as Record<string, unknown>)[key], seen);
      if (v !== undefined) parts.push(JSON.stringify(key) + ':' + v);
    }
    return '{' + parts.join(',') + '}';
  } finally {
    seen.delete(value);
  }
}
