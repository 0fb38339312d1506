// JSON Schemas from outside (an MCP server's, another extension's) are compiled and run on the
// host's main thread, before any approval: a backtracking `pattern` there would freeze the host for good.
// Their patterns run on RE2 (re2js: pure JS, no backtracking, time linear in the input) under a
// work budget per validation, and a schema has a size and depth bound before it is compiled.
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/** Nodes (values) and characters a schema may hold; far beyond any real tool's. */
export const SCHEMA_MAX_NODES = 20_000;
export const SCHEMA_MAX_CHARS = 512 * 1024;
export const SCHEMA_MAX_DEPTH = 64;

/**
 * Work one validation may spend on patterns: RE2 program size × characters tested. RE2 is linear
 * in the input but its constant is the program's size (a long Unicode class over a megabyte takes
 * seconds); the budget keeps the slowest kind of pattern to a pause no one notices.
 */
const PATTERN_BUDGET = 1_000_000;
let budget = PATTERN_BUDGET;

/** Runs one validation with a fresh pattern budget. */
export function withPatternBudget<T>(validate: () => T): T {
  budget = PATTERN_BUDGET;
  try {
    return validate();
  } finally {
    budget = PATTERN_BUDGET;
  }
}

/**
 * A schema's pattern on RE2. Left unchecked here — the server still checks its own input — when
 * RE2 cannot run it (lookaround, backreferences) or when checking would exceed the budget.
 */
class LinearPattern implements RegExpLike {
  constructor(
    private readonly source: string,
    private readonly re: RE2JS | null,
    private readonly cost: number,
  ) {}

  test(s: string): boolean {
    if (!this.re) return true;
    const work = (s.length + 1) * this.cost;
    if (work > budget) return true;
    budget -= work;
    return this.re.matcher(s).find();
  }

  /** ajv keys compiled patterns by this: one per source. */
  toString(): string {
    return `re2:${this.source}`;
  }
}

/** ajv's `code.regExp`: patterns compiled with RE2 instead of the backtracking RegExp. */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): RegExpLike => {
    try {
      const re = RE2JS.compile(re2Syntax(pattern));
      const size = (re as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input?.prog?.inst?.length;
      return new LinearPattern(pattern, re, Math.max(1, size ?? pattern.length));
    } catch {
      return new LinearPattern(pattern, null, 1);
    }
  },
  { code: 're2js' },
);

/** ECMAScript's `\uXXXX` and `\u{X…}` as RE2 spells them (`\x{…}`); everything else as written. */
function re2Syntax(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const m = /^u(?:\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4}))/.exec(pattern.slice(i + 1, i + 10));
    if (m) {
      out += `\\x{${m[1] ?? m[2]}}`;
      i += m[0].length;
    } else {
      out += c + (pattern[i + 1] ?? '');
      i++;
    }
  }
  return out;
}

/** Why a schema is too large or too deep to compile, or null. Walks it without recursion. */
export function schemaTooBig(schema: unknown): string | null {
  const stack: [unknown, number][] = [[schema, 1]];
  let nodes = 0;
  let chars = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++nodes > SCHEMA_MAX_NODES) return `its input schema has more than ${SCHEMA_MAX_NODES} values`;
    if (depth > SCHEMA_MAX_DEPTH) return `its input schema is nested deeper than ${SCHEMA_MAX_DEPTH} levels`;
    if (typeof v === 'string') chars += v.length;
    else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        chars += k.length;
        stack.push([child, depth + 1]);
      }
    }
    if (chars > SCHEMA_MAX_CHARS) return `its input schema is larger than ${SCHEMA_MAX_CHARS / 1024} KB`;
  }
  return null;
}
