// edit_file's search and replace, on the file's UTF-8 bytes rather than on a decoded string: a file
// at the read limit is searched natively (Buffer.indexOf), its line numbers counted in one pass, and
// the edited file built in one buffer — never a string of it, never a split into pieces. UTF-8 is
// self-synchronizing, so text found among the bytes is found exactly where the string search would
// find it, occurrence for occurrence. Long loops give the event loop a turn (Breather).
import { Breather } from '../../common/breather';

export interface EditArgs {
  old_text: string;
  new_text: string;
  replace_all: boolean;
}

export type EditPlan =
  | { kind: 'edit'; updated: Buffer; count: number; firstLine: number }
  | { kind: 'not_unique'; count: number; lines: number[] }
  /** `squashed`: old_text matches once whitespace is ignored; `applied`: new_text is there already. */
  | { kind: 'not_found'; squashed: boolean; applied: boolean };

/** Bytes a plain loop walks between two looks at the clock. */
const TURN_BYTES = 64 * 1024;
/** How many match lines a "not unique" answer names. */
const MAX_LINES = 20;

/** A lone surrogate has no UTF-8 form: text holding one is never in a UTF-8 file. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const utf8 = (text: string): Buffer | null => (LONE_SURROGATE.test(text) ? null : Buffer.from(text, 'utf8'));

export async function planEdit(file: Buffer, args: EditArgs): Promise<EditPlan> {
  const breather = new Breather();
  let oldText = args.old_text;
  let newText = args.new_text;
  let matches = await find(file, utf8(oldText), breather);
  if (matches.count === 0 && file.includes('\r\n') && !oldText.includes('\r\n')) {
    // The model saw LF lines; the file has CRLF. Match and write in the file's own line endings.
    oldText = oldText.replace(/\n/g, '\r\n');
    newText = newText.replace(/\r?\n/g, '\r\n');
    matches = await find(file, utf8(oldText), breather);
  }
  if (matches.count === 0) {
    const written = utf8(args.new_text);
    return {
      kind: 'not_found',
      squashed: await matchesSquashed(file, args.old_text, breather),
      applied: written !== null && written.length > 0 && file.includes(written),
    };
  }
  const lines = await lineNumbers(file, matches.first, breather);
  if (matches.count > 1 && !args.replace_all) return { kind: 'not_unique', count: matches.count, lines };
  const to = Buffer.from(newText, 'utf8');
  const updated = await replace(
    file,
    { from: utf8(oldText)!, to, all: args.replace_all, count: matches.count },
    breather,
  );
  return { kind: 'edit', updated, count: matches.count, firstLine: lines[0] ?? 1 };
}

/** Non-overlapping occurrences (as split/replace_all count them), and where the first few start. */
async function find(
  file: Buffer,
  needle: Buffer | null,
  breather: Breather,
): Promise<{ count: number; first: number[] }> {
  const first: number[] = [];
  if (needle === null || needle.length === 0) return { count: 0, first };
  let count = 0;
  for (let i = file.indexOf(needle); i !== -1; i = file.indexOf(needle, i + needle.length)) {
    if (count++ < MAX_LINES) first.push(i);
    if (breather.due) await breather.tick();
  }
  return { count, first };
}

/** The 1-based line of each offset (ascending), counting newlines once from the start. */
async function lineNumbers(file: Buffer, offsets: readonly number[], breather: Breather): Promise<number[]> {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    for (; at < offset; at++) {
      if (file[at] === 0x0a) line++;
      if ((at & 0xffff) === 0xffff) await breather.tick();
    }
    lines.push(line);
  }
  return lines;
}

/** The file with the first occurrence, or all `count` of them, of `from` replaced by `to`, built in one buffer. */
async function replace(
  file: Buffer,
  edit: { from: Buffer; to: Buffer; all: boolean; count: number },
  breather: Breather,
): Promise<Buffer> {
  const { from, to } = edit;
  const first = file.indexOf(from);
  if (!edit.all) return Buffer.concat([file.subarray(0, first), to, file.subarray(first + from.length)]);
  const out = Buffer.allocUnsafe(file.length + edit.count * (to.length - from.length));
  let o = 0;
  let at = 0;
  for (let i = first; i !== -1; i = file.indexOf(from, at)) {
    o += file.copy(out, o, at, i);
    o += to.copy(out, o);
    at = i + from.length;
    if (breather.due) await breather.tick();
  }
  file.copy(out, o, at);
  return out;
}

/** Whether old_text is in the file once runs of whitespace count as one space (and the ends are trimmed). */
async function matchesSquashed(file: Buffer, oldText: string, breather: Breather): Promise<boolean> {
  const needle = utf8(oldText);
  if (needle === null) return false;
  const squashedNeedle = await squash(needle, breather);
  return squashedNeedle.length > 0 && (await squash(file, breather)).includes(squashedNeedle);
}

/** `text.replace(/\s+/g, ' ').trim()` on UTF-8 bytes. */
async function squash(buf: Buffer, breather: Breather): Promise<Buffer> {
  const out = Buffer.allocUnsafe(buf.length);
  let o = 0;
  let space = false;
  for (let i = 0, turn = TURN_BYTES; i < buf.length;) {
    const n = spaceAt(buf, i);
    if (n > 0) {
      space = o > 0;
      i += n;
    } else {
      if (space) out[o++] = 0x20;
      space = false;
      out[o++] = buf[i++] as number;
    }
    if (i >= turn) {
      turn = i + TURN_BYTES;
      await breather.tick();
    }
  }
  return out.subarray(0, o);
}

/** The byte length of the JavaScript whitespace character (`\s`) starting at `i`, or 0. */
function spaceAt(b: Buffer, i: number): number {
  const c = b[i] as number;
  if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return 1;
  if (c < 0xc2) return 0;
  const c1 = b[i + 1];
  const c2 = b[i + 2];
  if (c === 0xc2) return c1 === 0xa0 ? 2 : 0; // U+00A0
  if (c === 0xe1) return c1 === 0x9a && c2 === 0x80 ? 3 : 0; // U+1680
  if (c === 0xe2 && c1 === 0x80 && c2 !== undefined) {
    const u2000 = c2 >= 0x80 && c2 <= 0x8a; // U+2000–200A
    return u2000 || c2 === 0xa8 || c2 === 0xa9 || c2 === 0xaf ? 3 : 0; // U+2028, 2029, 202F
  }
  if (c === 0xe2) return c1 === 0x81 && c2 === 0x9f ? 3 : 0; // U+205F
  if (c === 0xe3) return c1 === 0x80 && c2 === 0x80 ? 3 : 0; // U+3000
  if (c === 0xef) return c1 === 0xbb && c2 === 0xbf ? 3 : 0; // U+FEFF
  return 0;
}
