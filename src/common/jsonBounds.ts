// Bounds on JSON text that comes from outside (a model's tool-call arguments, a user's edit of
// them), checked before anything parses or walks it: parsing is iterative, but hashing, copying,
// validating and rendering a value recurse once per level, so a deep enough value overflows the
// stack wherever it goes next.

/** Deepest nesting of objects and arrays accepted; real tool arguments nest a handful of levels. */
export const MAX_JSON_DEPTH = 64;
/**
 * Largest tool-call arguments accepted, in characters: a quarter of a million tokens, more than any
 * model writes in one answer, so only runaway or hostile output is refused.
 */
export const MAX_TOOL_ARGS_CHARS = 1024 * 1024;

/** Nesting depth of a JSON text, by a scan of its brackets outside strings; stops once past `limit`. */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Why tool-call arguments are refused before they are parsed (too long, too deep), or null. */
export function argumentsProblem(raw: string): string | null {
  if (raw.length > MAX_TOOL_ARGS_CHARS)
    return `The arguments are ${raw.length.toLocaleString('en-US')} characters long; at most ${MAX_TOOL_ARGS_CHARS.toLocaleString('en-US')} are accepted.`;
  if (jsonDepth(raw, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    return `The arguments nest more than ${MAX_JSON_DEPTH} levels deep; at most ${MAX_JSON_DEPTH} are accepted.`;
  return null;
}
