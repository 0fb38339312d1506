// ripgrep's output split into records without holding more than a bound of any one: a matching line
// of a repository file can be 100 MB long, and its JSON record with it. Each chunk is searched for
// separators once (never the whole pending record again), and a record past the bound keeps only its
// head, enough to say which file it came from.

/** Longest record handed on whole, in characters; a matching line about this long is not shown. */
export const MAX_RECORD_CHARS = 1024 * 1024;

/** A whole record, or the head of one that was longer than the bound. */
export type RgRecord = { text: string; cut: false } | { text: string; cut: true };

export class RecordSplitter {
  private parts: string[] = [];
  private length = 0;
  private cut = false;

  constructor(
    private readonly sep: string,
    private readonly max = MAX_RECORD_CHARS,
  ) {}

  /** The records this chunk completes, in order. */
  push(chunk: string): RgRecord[] {
    const out: RgRecord[] = [];
    for (let at = 0; ;) {
      const i = chunk.indexOf(this.sep, at);
      this.add(chunk, at, i < 0 ? chunk.length : i);
      if (i < 0) return out;
      out.push(this.take());
      at = i + this.sep.length;
    }
  }

  /** The last record when the output did not end with a separator, else null. */
  end(): RgRecord | null {
    return this.length > 0 || this.cut ? this.take() : null;
  }

  private add(chunk: string, from: number, to: number): void {
    if (this.cut || to === from) return;
    const room = this.max - this.length;
    if (to - from > room) {
      this.parts.push(chunk.slice(from, from + room));
      this.length = this.max;
      this.cut = true;
      return;
    }
    this.parts.push(chunk.slice(from, to));
    this.length += to - from;
  }

  private take(): RgRecord {
    const record = { text: this.parts.join(''), cut: this.cut } as RgRecord;
    this.parts = [];
    this.length = 0;
    this.cut = false;
    return record;
  }
}

/** The file a match record (whole or cut) names, from its head: `{"type":"match","data":{"path":{"text":…}`. */
export function matchPath(head: string): string | null {
  const m = /^\{"type":"match","data":\{"path":\{"(text|bytes)":"((?:[^"\\]|\\.)*)"/.exec(head);
  if (!m) return null;
  const value = JSON.parse(`"${m[2]!}"`) as string;
  return m[1] === 'text' ? value : Buffer.from(value, 'base64').toString('utf8');
}
