// Copies at the store's edge. Stored data is JSON data, so a copy only needs fresh objects and
// arrays: strings are immutable and can be shared. For a 10 MB conversation that is ~1000× less work
// than structuredClone, which copies every string's bytes.
import { InvalidInputError } from '../api/errors';

/** A fresh object tree of stored (already JSON) data. */
export function copyJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map(copyJson) as T;
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = copyJson((v as Record<string, unknown>)[k]);
    return out as T;
  }
  return v;
}

/**
 * A copy of caller input as strict JSON data, so both backends store exactly what the disk can
 * hold: functions, symbols, bigints, Dates, Maps, NaN/Infinity and cycles are refused (naming
 * where), `undefined` object members are dropped (as JSON does).
 */
export function toJsonData(v: unknown, where: string, seen: Set<object> = new Set()): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidInputError(`${where} is not a finite number`);
    return v;
  }
  if (typeof v !== 'object') throw new InvalidInputError(`${where} is not JSON data (a ${typeof v})`);
  if (seen.has(v)) throw new InvalidInputError(`${where} refers to itself (a cycle)`);
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((x, i) => (x === undefined ? null : toJsonData(x, `${where}[${i}]`, seen)));
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null)
      throw new InvalidInputError(`${where} is not JSON data (a ${proto?.constructor?.name ?? 'class instance'})`);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = toJsonData(x, `${where}.${k}`, seen);
    }
    return out;
  } finally {
    seen.delete(v);
  }
}
