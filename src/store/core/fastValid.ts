// A fast path in front of a zod schema, for data the store reads back in bulk (a run's log at load):
// a plain predicate built once from the schema's own definition, that says "zod accepts this value
// and its parse would return an equal value" — or "not sure", and then zod decides. The schema stays
// the one source of truth: the predicate only ever answers yes for values zod accepts unchanged
// (property-tested against zod in test/unit/store/fastValid.test.ts), and answers "not sure" for
// anything it does not model (a transform, a default, an object with keys zod would strip, …).
//
// Why: zod runs code it generates per schema; cold (the first run of a window) that costs more
// than the data is worth — most of a long run's cold load was its validation.
// The predicate is a handful of small shared functions that warm up at once, and copies nothing.
import type { z } from 'zod';

export type FastValid = (v: unknown) => boolean;

/** The parts of a zod definition read here (zod v4's `_zod.def`). */
interface Def {
  type: string;
  coerce?: boolean;
  checks?: { _zod: { def: CheckDef } }[];
  shape?: Record<string, Schema>;
  catchall?: Schema;
  element?: Schema;
  innerType?: Schema;
  options?: Schema[];
  discriminator?: string;
  values?: unknown[];
  entries?: Record<string, unknown>;
  keyType?: Schema;
  valueType?: Schema;
  fn?: (v: unknown) => unknown;
}

interface CheckDef {
  check: string;
  format?: string;
  pattern?: RegExp;
  minimum?: number;
  maximum?: number;
  length?: number;
  value?: number;
  inclusive?: boolean;
  when?: unknown;
}

type Schema = { _zod: { def: Def } };

const NO: FastValid = () => false;
const YES: FastValid = () => true;

const compiled = new WeakMap<object, FastValid>();

/** The fast path of a schema (built once per schema). */
export function fastValid(schema: z.ZodType): FastValid {
  return compileNode(schema as unknown as Schema);
}

/**
 * zod's safeParse with the fast path in front: where the fast path vouches, `v` itself is the result
 * (zod's would be an equal copy), so `v` must be the caller's own — fresh from JSON.parse, or built for
 * this check. zod runs only for what the fast path is not sure of, and says what is wrong.
 */
export function parseFast<T>(schema: z.ZodType<T>, v: unknown): z.ZodSafeParseResult<T> {
  return fastValid(schema)(v) ? { success: true, data: v as T } : schema.safeParse(v);
}

/** Whether the fast path models the whole schema (it can say yes to some value). For tests. */
export function fastValidModels(schema: z.ZodType): boolean {
  return fastValid(schema) !== NO && !hasNo(schema as unknown as Schema, new Set());
}

function hasNo(s: Schema, seen: Set<Schema>): boolean {
  if (seen.has(s)) return false;
  seen.add(s);
  const d = s._zod.def;
  if (compileNode(s) === NO) return true;
  const children = [
    ...Object.values(d.shape ?? {}),
    ...(d.options ?? []),
    ...[d.catchall, d.element, d.innerType, d.keyType, d.valueType].filter((c): c is Schema => c !== undefined),
  ];
  return children.some((c) => hasNo(c, seen));
}

function compileNode(s: Schema): FastValid {
  const cached = compiled.get(s);
  if (cached) return cached;
  const d = s._zod.def;
  let f: FastValid;
  switch (d.coerce ? 'coerced' : d.type) {
    case 'string':
      f = withChecks((v) => typeof v === 'string', d.checks, 'string');
      break;
    case 'number':
      f = withChecks((v) => typeof v === 'number' && Number.isFinite(v), d.checks, 'number');
      break;
    case 'boolean':
      f = d.checks?.length ? NO : (v) => typeof v === 'boolean';
      break;
    case 'unknown':
    case 'any':
      f = YES;
      break;
    case 'literal': {
      const values = d.values ?? [];
      f = (v) => values.includes(v);
      break;
    }
    case 'enum': {
      const values = Object.values(d.entries ?? {});
      f = (v) => values.includes(v);
      break;
    }
    case 'nullable': {
      const inner = compileNode(d.innerType!);
      f = inner === NO ? NO : (v) => v === null || inner(v);
      break;
    }
    case 'optional': {
      const inner = compileNode(d.innerType!);
      f = inner === NO ? NO : (v) => v === undefined || inner(v);
      break;
    }
    case 'array': {
      const item = compileNode(d.element!);
      f =
        item === NO
          ? NO
          : withChecks(
              (v) => {
                if (!Array.isArray(v)) return false;
                for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
                return true;
              },
              d.checks,
              'array',
            );
      break;
    }
    case 'object':
      f = objectOf(d);
      break;
    case 'record':
      f = recordOf(d);
      break;
    case 'union':
      f = discriminated(d);
      break;
    case 'custom': {
      const fn = d.fn;
      f = fn && !d.checks?.length ? (v) => Boolean(fn(v)) : NO;
      break;
    }
    default:
      f = NO; // pipe, transform, default, lazy, …: zod decides
  }
  compiled.set(s, f);
  return f;
}

/** An object as JSON.parse makes them (zod's output of any other would not be equal to it). */
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

function objectOf(d: Def): FastValid {
  if (d.checks?.length) return NO;
  const fields = Object.entries(d.shape ?? {}).map(([key, schema]) => ({
    key,
    check: compileNode(schema),
    optional: schema._zod.def.type === 'optional',
  }));
  if (fields.some((f) => f.check === NO)) return NO;
  const known = new Set(fields.map((f) => f.key));
  // No catchall: zod strips unknown keys (its output would differ): "not sure". `unknown`: kept
  // (looseObject). `never`: refused (strictObject). Anything else: not modelled.
  const rest = d.catchall?._zod.def.type;
  if (rest !== undefined && rest !== 'unknown' && rest !== 'never') return NO;
  return (v) => {
    if (!isPlainObject(v)) return false;
    for (const f of fields) {
      const x = v[f.key];
      // A required key must be there (zod's output would gain or lose it otherwise).
      if (x === undefined ? !f.optional || Object.hasOwn(v, f.key) : !f.check(x)) return false;
    }
    for (const key in v) {
      if (!Object.hasOwn(v, key)) return false; // inherited enumerable keys: not JSON data
      if (key === '__proto__') return false;
      if (!known.has(key) && rest !== 'unknown') return false;
    }
    return true;
  };
}

function recordOf(d: Def): FastValid {
  const keyDef = d.keyType?._zod.def;
  if (d.checks?.length || !keyDef || keyDef.type !== 'string') return NO;
  const key = compileNode(d.keyType!);
  const value = compileNode(d.valueType!);
  if (key === NO || value === NO) return NO;
  return (v) => {
    if (!isPlainObject(v)) return false;
    for (const k in v) {
      if (!Object.hasOwn(v, k) || k === '__proto__' || !key(k)) return false;
      const x = v[k];
      if (x === undefined || !value(x)) return false;
    }
    return true;
  };
}

/** A discriminated union (zod picks the option by the discriminator's value); a plain union is not modelled. */
function discriminated(d: Def): FastValid {
  const disc = d.discriminator;
  if (!disc || d.checks?.length) return NO;
  const byValue = new Map<unknown, FastValid>();
  for (const option of d.options ?? []) {
    const od = option._zod.def;
    const lit = od.type === 'object' ? od.shape?.[disc]?._zod.def : undefined;
    if (!lit || lit.type !== 'literal') return NO;
    const check = compileNode(option);
    for (const value of lit.values ?? []) {
      if (byValue.has(value)) return NO;
      byValue.set(value, check);
    }
  }
  return (v) => {
    if (!isPlainObject(v)) return false;
    const check = byValue.get(v[disc]);
    return check !== undefined && check !== NO && check(v);
  };
}

function withChecks(base: FastValid, checks: Def['checks'], kind: 'string' | 'number' | 'array'): FastValid {
  const tests: FastValid[] = [];
  for (const c of checks ?? []) {
    const t = checkOf(c._zod.def, kind);
    if (!t) return NO;
    tests.push(t);
  }
  if (tests.length === 0) return base;
  return (v) => {
    if (!base(v)) return false;
    for (const t of tests) if (!t(v)) return false;
    return true;
  };
}

function checkOf(c: CheckDef, kind: 'string' | 'number' | 'array'): FastValid | undefined {
  // zod's length checks run `when` the value has a length: here it is a string or an array by then.
  if (c.when !== undefined && !['min_length', 'max_length', 'length_equals'].includes(c.check)) return undefined;
  const len = (v: unknown) => (v as string | unknown[]).length;
  switch (c.check) {
    case 'min_length':
      return kind === 'number' || c.minimum === undefined ? undefined : (v) => len(v) >= c.minimum!;
    case 'max_length':
      return kind === 'number' || c.maximum === undefined ? undefined : (v) => len(v) <= c.maximum!;
    case 'length_equals':
      return kind === 'number' || c.length === undefined ? undefined : (v) => len(v) === c.length;
    case 'string_format': {
      const p = c.pattern;
      if (kind !== 'string' || c.format !== 'regex' || !(p instanceof RegExp) || p.global || p.sticky) return undefined;
      return (v) => p.test(v as string);
    }
    case 'number_format':
      return kind === 'number' && c.format === 'safeint' ? (v) => Number.isSafeInteger(v) : undefined;
    case 'greater_than': {
      const { value, inclusive } = c;
      if (kind !== 'number' || typeof value !== 'number') return undefined;
      return inclusive ? (v) => (v as number) >= value : (v) => (v as number) > value;
    }
    case 'less_than': {
      const { value, inclusive } = c;
      if (kind !== 'number' || typeof value !== 'number') return undefined;
      return inclusive ? (v) => (v as number) <= value : (v) => (v as number) < value;
    }
    default:
      return undefined;
  }
}
