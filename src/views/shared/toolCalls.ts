// A tool call as both views name it: "edit_file src/slugify.js", "run_command npm test". vscode-free.
import { isJsonObject } from '../../common/json';
import { argumentsProblem } from '../../common/jsonBounds';

/**
 * The call's arguments as an object, or null when they are not a JSON object (the model's text is
 * untrusted) — or too long or too deep to parse and show (the runner refused them the same way).
 */
export function parseToolArgs(json: string): Record<string, unknown> | null {
  if (argumentsProblem(json)) return null;
  try {
    return asRecord(JSON.parse(json));
  } catch {
    return null;
  }
}

export function asRecord(v: unknown): Record<string, unknown> | null {
  return isJsonObject(v) ? v : null;
}

/** "edit_file src/slugify.js", "run_command npm test": the name and its main argument, cut to `maxChars`. */
export function toolTitle(name: string, args: Record<string, unknown> | null, maxChars = 80): string {
  const main = args?.path ?? args?.command ?? args?.pattern ?? args?.task;
  if (typeof main !== 'string') return name;
  const short = main.slice(0, maxChars + 1).split('\n')[0]!;
  return `${name} ${short.length > maxChars ? `${short.slice(0, maxChars - 3)}…` : short}`;
}
