// Hashes that make effect replay safe (product.md, "Effect replay"): a tool call's identity is its
// tool name plus its arguments in canonical form, so the same call re-sent by the model after a
// resume hashes the same no matter how the model ordered the keys or spaced the JSON.
import { createHash } from 'node:crypto';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

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

/** input_hash of a tool call whose arguments are already parsed. */
export function inputHash(toolName: string, args: unknown): string {
  return sha256(toolName + '\n' + canonicalJson(args));
}

/**
 * input_hash straight from the model's raw `arguments` string. Valid JSON is canonicalised first;
 * text that is not JSON (a model's broken output) is hashed as-is so it still has a stable identity.
 * An empty string means "no arguments" ({}), as several servers send it for argument-less calls.
 */
export function inputHashFromRaw(toolName: string, rawArguments: string): string {
  if (rawArguments.trim() === '') return inputHash(toolName, {});
  try {
    return inputHash(toolName, JSON.parse(rawArguments));
  } catch {
    return sha256(toolName + '\n' + rawArguments);
  }
}

export function outputHash(output: string): string {
  return sha256(output);
}

/** The key passed to tools so a retried side effect can recognise itself: `${run_id}/${step}/${tool_call_id}`. */
export function idempotencyKey(runId: string, step: number, toolCallId: string): string {
  return `${runId}/${step}/${toolCallId}`;
}
