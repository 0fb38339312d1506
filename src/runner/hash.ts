// Hashes that make effect replay safe (docs/design.md, resume semantics 6): a tool call's identity is its
// tool name plus its arguments in canonical form, so the same call re-sent by the model after a
// resume hashes the same no matter how the model ordered the keys or spaced the JSON.
import { sha256 } from '../common/hash';
import { argumentsProblem } from '../common/jsonBounds';
import { canonicalJson } from '../store/api/canonical';

export { canonicalJson };

export { sha256 };

/** input_hash of a tool call whose arguments are already parsed. */
export function inputHash(toolName: string, args: unknown): string {
  return sha256(toolName + '\n' + canonicalJson(args));
}

/**
 * input_hash straight from the model's raw `arguments` string. Valid JSON is canonicalised first;
 * text that is not JSON (a model's broken output) is hashed as-is so it still has a stable identity,
 * and so is text too long or too deep to be parsed at all (jsonBounds.ts).
 * An empty string means "no arguments" ({}), as several servers send it for argument-less calls.
 */
export function inputHashFromRaw(toolName: string, rawArguments: string): string {
  if (rawArguments.trim() === '') return inputHash(toolName, {});
  if (argumentsProblem(rawArguments)) return sha256(toolName + '\n' + rawArguments);
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
