// Pages for the listing and search tools. No silent caps: a page is sized so that its notes (what
// was shown, what is missing, how to get the next page) always fit in the output the model sees —
// the page shrinks, never the notes.
import { count } from '../../common/format';
import { sliceBytes } from './output';

/** Room kept for the notes under a page. */
const NOTE_ROOM = 1024;

export interface Page {
  /** The lines that fit, joined with '\n'. */
  text: string;
  /** How many of the lines are in `text`. */
  shown: number;
}

/** Takes lines from the front while they fit in `outputCap` minus room for notes (at least one line, cut if it must be). */
export function fitPage(lines: readonly string[], outputCap: number): Page {
  const budget = Math.max(128, outputCap - NOTE_ROOM);
  let used = 0;
  let shown = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line, 'utf8') + (shown > 0 ? 1 : 0);
    if (used + bytes > budget) break;
    used += bytes;
    shown++;
  }
  if (shown === 0 && lines.length > 0) return { text: `${sliceBytes(lines[0] as string, budget - 1)}…`, shown: 1 };
  return { text: lines.slice(0, shown).join('\n'), shown };
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
