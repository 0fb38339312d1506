// The SDK's transports with the host's intake (intake.ts) in front of them. stdio: the SDK's read
// buffer (10 MiB, then "exceeded maximum size", the process killed, and the call reported as "the
// server process exited") is replaced by a line splitter feeding the intake. HTTP and SSE: a fetch
// in front of the SDK's reads every response body as bytes, passes small messages through as they
// came and puts the intake's stand-in in place of a large one — the SDK never decodes it.
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../../common/errors';
import { type IncomingLarge, type LineSink, LineSplitter, type MessageIntake } from './intake';

/** stdio through the intake. `failure`: why the host closed the connection, if it did. */
export class BoundedStdioTransport extends StdioClientTransport {
  failure: string | null = null;
  /** Messages are handed to the SDK in the order they came, a large one's parse included. */
  private delivering: Promise<void> = Promise.resolve();

  constructor(
    params: StdioServerParameters,
    private readonly intake: MessageIntake,
  ) {
    super(params);
    const splitter = new LineSplitter(
      intake.limits,
      (parts, size) => this.inOrder(() => intake.convert(parts, size)),
      (head, tail, size) =>
        this.inOrder(async () => {
          const refused = intake.refusal(head, tail, size);
          return refused === 'dropped' ? null : (refused ?? this.fail(intake.tooLarge(size)));
        }),
      () => {
        const large = intake.begin();
        return { add: (p) => large.add(p), drop: () => large.drop(), end: () => this.inOrder(() => large.finish()) };
      },
    );
    // The SDK calls append(chunk) for each chunk of stdout, then readMessage() until null.
    const self = this as unknown as Record<string, unknown>;
    if (!('_readBuffer' in self)) throw new Error('the MCP SDK changed: its stdio transport has no read buffer');
    self._readBuffer = {
      append: (chunk: Buffer) => splitter.push(chunk),
      readMessage: () => null,
      clear: () => splitter.clear(),
    };
  }

  override send(message: JSONRPCMessage): Promise<void> {
    this.intake.sent(message);
    return super.send(message);
  }

  /** Once the host gave up on the stream (fail()), nothing after that point is handed over. */
  private inOrder(next: () => Promise<JSONRPCMessage | null>): void {
    this.delivering = this.delivering
      .then(() => (this.failure ? null : next()))
      .then((m) => void (m && !this.failure && this.onmessage?.(m)))
      .catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(errorMessage(err))));
  }

  /** The stream cannot go on (a message over the limit no request claims): closed, saying why. */
  private fail(reason: string): null {
    this.failure = `${reason}; the host closed the connection`;
    void this.close();
    return null;
  }
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for the SDK's HTTP transports: JSON and SSE bodies go through the intake; anything else
 * (and the bodies of requests) as it is.
 */
export function boundedFetch(intake: MessageIntake, base: Fetch = fetch): Fetch {
  return async (url, init) => {
    const res = await base(url, init);
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!res.body || (type !== 'application/json' && type !== 'text/event-stream')) return res;
    const body = type === 'application/json' ? await jsonBody(res.body, intake) : sseBody(res.body, intake);
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** A JSON body: read as bytes up to the limit; a large message replaced by what the intake hands over. */
async function jsonBody(body: ReadableStream<Uint8Array>, intake: MessageIntake): Promise<BodyInit> {
  const parts: Buffer[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > intake.limits.maxBytes) {
      await reader.cancel();
      throw new Error(intake.tooLarge(size));
    }
    parts.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  if (size <= intake.limits.largeBytes) return Buffer.concat(parts, size);
  const m = await intake.convert(parts, size);
  return m ? JSON.stringify(m) : '';
}

/** An SSE body, event by event: small events pass as they came, a large one's data is replaced. */
function sseBody(body: ReadableStream<Uint8Array>, intake: MessageIntake): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const events = new SseEvents(intake);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { value, done } = await reader.read();
        const out = done
          ? await events.end()
          : await events.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
        if (out.length > 0) controller.enqueue(Buffer.concat(out));
        if (done) return controller.close();
        if (out.length > 0) return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

interface Line {
  parts: Buffer[];
  size: number;
}

/** Reads SSE lines into events; hands back the bytes to pass on for each finished event. */
class SseEvents {
  private lines: Line[] = [];
  private data: Line[] = [];
  private dataSize = 0;
  private skipped: { head: Buffer; tail: Buffer; size: number } | null = null;
  /** The event's large data line, on its way to the worker. */
  private streamed: IncomingLarge[] = [];
  private finished = 0;
  private readonly splitter: LineSplitter;

  constructor(private readonly intake: MessageIntake) {
    this.splitter = new LineSplitter(
      intake.limits,
      (parts, size) => this.line(parts, size),
      (head, tail, size) => (this.skipped = { head: head.subarray(Math.max(0, head.indexOf(0x7b))), tail, size }),
      () => this.dataSink(),
      true,
    );
  }

  async push(chunk: Buffer): Promise<Buffer[]> {
    this.splitter.push(chunk);
    return this.flush();
  }

  async end(): Promise<Buffer[]> {
    this.finished++;
    return this.flush();
  }

  private line(parts: Buffer[], size: number): void {
    const start = Buffer.concat(parts.slice(0, 2)).subarray(0, 6).toString('latin1');
    if (size === 0 || (size === 1 && start === '\r')) return void this.finished++;
    if (!start.startsWith('data:')) return void this.lines.push({ parts, size });
    // The value without `data:` and one space, without a final \r (JSON reads a \r as whitespace anyway).
    const cut = start.startsWith('data: ') ? 6 : 5;
    const value = Buffer.concat(parts.slice(0, 2)).subarray(cut);
    const rest = [value, ...parts.slice(2)];
    this.data.push({ parts: rest, size: size - cut });
    this.dataSize += size - cut + (this.data.length > 1 ? 1 : 0);
    this.lines.push({ parts, size });
  }

  /** A large line: a `data:` line's value goes to the worker as it arrives; any other line is dropped. */
  private dataSink(): LineSink {
    let prefix: Buffer | null = Buffer.alloc(0);
    let large: IncomingLarge | null = null;
    const feed = (piece: Buffer): void => {
      if (prefix === null) return void large?.add(piece);
      prefix = Buffer.concat([prefix, piece]);
      if (prefix.length < 6) return;
      const text = prefix.toString('latin1', 0, 6);
      if (text.startsWith('data:')) {
        large = this.intake.begin();
        large.add(prefix.subarray(text === 'data: ' ? 6 : 5));
      }
      prefix = null;
    };
    return {
      add: feed,
      drop: () => large?.drop(),
      end: () => void (large && this.streamed.push(large)),
    };
  }

  private async flush(): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (; this.finished > 0; this.finished--) out.push(...(await this.dispatch()));
    return out;
  }

  private async dispatch(): Promise<Buffer[]> {
    const { lines, data, dataSize, skipped, streamed, intake } = this;
    this.lines = [];
    this.data = [];
    this.dataSize = 0;
    this.skipped = null;
    this.streamed = [];
    if (lines.length === 0 && !skipped && streamed.length === 0) return [];
    const raw = (ls: Line[]) => ls.flatMap((l) => [...l.parts, NL]);
    if (!skipped && streamed.length === 0 && dataSize <= intake.limits.largeBytes) return [...raw(lines), NL];
    if (streamed.length > 0 && (data.length > 0 || streamed.length > 1)) {
      for (const l of streamed) l.drop();
      throw new Error('the server sent an event whose data is split over several lines, one of them large');
    }
    const refused = skipped ? intake.refusal(skipped.head, skipped.tail, skipped.size) : null;
    if (skipped && !refused) throw new Error(intake.tooLarge(skipped.size));
    const m =
      refused === 'dropped'
        ? null
        : (refused ?? (streamed[0] ? await streamed[0].finish() : await intake.convert(joinData(data), dataSize)));
    const kept = lines.filter((l) => !Buffer.concat(l.parts.slice(0, 2)).subarray(0, 5).equals(DATA));
    return [...raw(kept), ...(m ? [Buffer.from(`data: ${JSON.stringify(m)}`), NL] : []), NL];
  }
}

const NL = Buffer.from('\n');
const DATA = Buffer.from('data:');

/** An event's data lines as one message (joined with newlines, which JSON reads as whitespace). */
function joinData(lines: Line[]): Buffer[] {
  return lines.flatMap((l, i) => (i === 0 ? l.parts : [NL, ...l.parts]));
}
