// How much of a run the host sends the run view, and how model-controlled JSON is printed for it
// (vscode-free; the webview bundles it too). The store keeps everything; the view gets enough to
// read and judge, with a note saying what was cut, so no one item can make the host's page read or
// the webview's render of it slow, however large or deep the model's output.
import { count } from '../../common/format';
import type { TranscriptItem } from './items';

/** Model text of one item sent whole up to this (an answer, its reasoning, a message, a summary). */
export const TEXT_MAX_CHARS = 100_000;
/** Any other string of an item: an argument, a title, a path, a reason, a diff line's worth. */
export const FIELD_MAX_CHARS = 20_000;
/** Arguments longer than this are shown, not offered for editing (the editor would hold a cut copy). */
export const EDIT_MAX_CHARS = 100_000;
/** Arguments longer than this are not parsed for the card: shown as their raw text's head. */
export const PARSE_MAX_CHARS = 1_000_000;
/** JSON nested deeper is printed as its raw text: indented, each level would add its width to every line below. */
export const JSON_MAX_DEPTH = 64;
/** Most arguments or parts listed one by one; the rest are in the raw text. */
export const LIST_MAX = 100;

/** Room kept for a note within a bound, so a cut text is cut again to itself. */
const NOTE_ROOM = 60;

/** `s` in at most `max` characters: its start, and a note of how many more there are (on a line of its own, or after `sep`). */
export function cut(s: string, max: number, sep = '\n'): string {
  if (s.length <= max) return s;
  const h = head(s, max - NOTE_ROOM);
  return `${h}${sep}… (${count(s.length - h.length)} more characters not shown)`;
}

/** The first `max` characters of `s`, not ending between the two halves of a surrogate pair. */
export function head(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.charCodeAt(max - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/** Every string of `item` cut to its bound: the long text fields to TEXT_MAX_CHARS, the rest to FIELD_MAX_CHARS. */
export function boundItem<T extends TranscriptItem>(item: T): T {
  return boundValue(item, FIELD_MAX_CHARS) as T;
}

const LONG_FIELDS = new Set(['text', 'reasoning', 'summary', 'argumentsJson']);

function boundValue(v: unknown, max: number): unknown {
  if (typeof v === 'string') return cut(v, max);
  if (Array.isArray(v)) return v.map((x) => boundValue(x, max));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = boundValue(x, LONG_FIELDS.has(k) ? TEXT_MAX_CHARS : max);
  return out;
}

class TooDeep extends Error {}
class TooLong extends Error {}

/**
 * `JSON.stringify(v, null, 2)` of parsed JSON, or null when it nests deeper than `maxDepth`
 * (V8's own printer recurses and overflows on deep input, and indentation makes the text grow
 * with the square of the depth). Stops once the text passes `maxChars`: its start, with a note (not whole).
 */
export function prettyJson(
  v: unknown,
  o: { maxDepth?: number; maxChars?: number } = {},
): { text: string; whole: boolean } | null {
  const maxDepth = o.maxDepth ?? JSON_MAX_DEPTH;
  const maxChars = o.maxChars ?? Infinity;
  const parts: string[] = [];
  let length = 0;
  const put = (s: string) => {
    parts.push(s);
    length += s.length;
    if (length > maxChars) throw new TooLong();
  };
  const write = (x: unknown, depth: number, indent: string): void => {
    if (typeof x !== 'object' || x === null) return put(JSON.stringify(x) ?? 'null');
    if (depth >= maxDepth) throw new TooDeep();
    const inner = `${indent}  `;
    const array = Array.isArray(x);
    const entries = array ? x.map((e, i) => [i, e] as const) : Object.entries(x);
    if (entries.length === 0) return put(array ? '[]' : '{}');
    put(array ? '[\n' : '{\n');
    entries.forEach(([k, e], i) => {
      put(array ? inner : `${inner}${JSON.stringify(k)}: `);
      write(e, depth + 1, inner);
      put(i < entries.length - 1 ? ',\n' : '\n');
    });
    put(`${indent}${array ? ']' : '}'}`);
  };
  try {
    write(v, 0, '');
    return { text: parts.join(''), whole: true };
  } catch (err) {
    if (err instanceof TooDeep) return null;
    if (!(err instanceof TooLong)) throw err;
    const text = `${head(parts.join(''), maxChars - NOTE_ROOM)}\n… (cut at ${count(maxChars - NOTE_ROOM)} characters)`;
    return { text, whole: false };
  }
}

/** `JSON.stringify(v)`, or null where V8's recursion cannot print it (nested too deep). */
export function compactJson(v: unknown): string | null {
  try {
    return JSON.stringify(v) ?? null;
  } catch {
    return null;
  }
}

/** What the view is sent of an answer as it streams: up to TEXT_MAX_CHARS of its text, and of its reasoning. */
export class StreamBound {
  private key = '';
  private sent = { text: 0, reasoning: 0 };

  /** The answer streamed so far (as a state carries it, in place of the deltas before it), cut. */
  whole(s: { runId: string; step: number }, kind: 'text' | 'reasoning', text: string): string {
    this.of(s)[kind] = text.length;
    return cut(text, TEXT_MAX_CHARS);
  }

  /** What of a delta is sent: all of it, up to the bound and a note, or nothing past the bound. */
  delta<D extends { runId: string; step: number; kind: 'text' | 'reasoning'; text: string }>(d: D): D | undefined {
    const sent = this.of(d);
    const before = sent[d.kind];
    sent[d.kind] += d.text.length;
    if (before >= TEXT_MAX_CHARS) return undefined;
    if (sent[d.kind] <= TEXT_MAX_CHARS) return d;
    return { ...d, text: `${head(d.text, TEXT_MAX_CHARS - before)}\n… (the rest is not shown while it streams)` };
  }

  private of(s: { runId: string; step: number }): { text: number; reasoning: number } {
    const key = `${s.runId}/${s.step}`;
    if (this.key !== key) [this.key, this.sent] = [key, { text: 0, reasoning: 0 }];
    return this.sent;
  }
}
