// Copies at the store's edge. Stored data is JSON data, so a copy only needs fresh objects and
// arrays: strings are immutable and can be shared. For a long conversation that is far less work
// than structuredClone, which copies every string's bytes.
import { InvalidInputError } from '../api/errors';

/**
 * `o[k] = v` for a key that comes from data: a `__proto__` key (JSON.parse makes it an own property)
 * is defined as an own property — assigned, it would set `o`'s prototype instead.
 */
export function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * A fresh object tree of stored (already JSON) data. A `__proto__` key (a model's tool arguments can
 * hold one) stays a key (setOwn): assigned, it would drop the key and lend its members to the copy.
 */
export function copyJson<T>(v: T): T {
  return typeof v === 'object' && v !== null ? (copyNode(v) as T) : v;
}

/**
 * copyJson of an object or array. A leaf (most members) is taken as it is, without a call of its
 * own, and a key is set directly unless it is `__proto__`: on a step's path (the copies handed back
 * and taken in) the calls per member were most of the copy's cost.
 */
function copyNode(v: object): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      out.push(typeof x === 'object' && x !== null ? copyNode(x) : x);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = (v as Record<string, unknown>)[k];
    const c = typeof x === 'object' && x !== null ? copyNode(x) : x;
    if (k === '__proto__') setOwn(out, k, c);
    else out[k] = c;
  }
  return out;
}

/**
 * `{ ...a, ...b, … }` for the store's hot paths, built from an empty object. Node 20's V8 clones a
 * spread's source with a hidden class of its own, and every key added after the spread then makes a
 * new one, which costs far more than building the object key by key (a step builds several run
 * summaries). Same keys, order and values as the spread; a `__proto__` key (JSON
 * data can hold one) is defined as an own property, as a spread does, never set as the prototype.
 */
export function merged<T extends object>(...parts: readonly (object | null | undefined)[]): T {
  const out: Record<string, unknown> = {};
  for (const p of parts) {
    if (p == null) continue;
    for (const k of Object.keys(p)) setOwn(out, k, (p as Record<string, unknown>)[k]);
  }
  return out as T;
}

/**
 * A copy of caller input as strict JSON data, so both backends store exactly what the disk can
 * hold: functions, symbols, bigints, Dates, Maps, NaN/Infinity and cycles are refused (naming
 * where), `undefined` object members are dropped (as JSON does).
 */
export function toJsonData(v: unknown, where: string): unknown {
  // Every append copies its input: first without building a path per key or keeping a set of the
  // objects on the way down (most of the cost), giving up at anything it would refuse; then, only
  // for such input, again with both, to say where (or to find it was a deep tree, not a cycle).
  try {
    return jsonCopy(v, 0);
  } catch (err) {
    if (err !== NOT_JSON) throw err;
  }
  return toJsonDataAt(v, where, new Set());
}

const NOT_JSON = new Error('not JSON data');
/** Deeper than this, the copy is left to the path that tells a deep tree from a cycle. */
const MAX_FAST_DEPTH = 256;

function jsonCopy(v: unknown, depth: number): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw NOT_JSON;
    return v;
  }
  if (typeof v !== 'object' || depth > MAX_FAST_DEPTH) throw NOT_JSON;
  // (a string, boolean or null member is taken here, without a call of its own: most members are)
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      out.push(
        x === undefined
          ? null
          : typeof x === 'string' || typeof x === 'boolean' || x === null
            ? x
            : jsonCopy(x, depth + 1),
      );
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw NOT_JSON;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined) continue;
    const c = typeof x === 'string' || typeof x === 'boolean' || x === null ? x : jsonCopy(x, depth + 1);
    if (k === '__proto__') setOwn(out, k, c);
    else out[k] = c;
  }
  return out;
}

function toJsonDataAt(v: unknown, where: string, seen: Set<object>): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new InvalidInputError(`${where} is not a finite number`);
    return v;
  }
  if (typeof v !== 'object') throw new InvalidInputError(`${where} is not JSON data (a ${typeof v})`);
  if (seen.has(v)) throw new InvalidInputError(`${where} refers to itself (a cycle)`);
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((x, i) => (x === undefined ? null : toJsonDataAt(x, `${where}[${i}]`, seen)));
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null)
      throw new InvalidInputError(`${where} is not JSON data (a ${proto?.constructor?.name ?? 'class instance'})`);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) setOwn(out, k, toJsonDataAt(x, `${where}.${k}`, seen));
    }
    return out;
  } finally {
    seen.delete(v);
  }
}
