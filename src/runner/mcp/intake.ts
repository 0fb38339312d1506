// What the host accepts from an MCP server, one JSON-RPC message at a time, whatever the transport
// (stdio lines, HTTP bodies, SSE events): a message is read as bytes and never grows past
// MAX_MESSAGE_BYTES; a small one is parsed here; a large one (a tool result of megabytes) on a
// worker (largeWorker.ts), and a tool's large result is kept aside as bytes — the SDK gets a small
// stand-in that names it, and the tool takes it (connection.ts) to store it as blobs. Nothing large
// is decoded, parsed or validated on the host's main thread.
import { randomUUID } from 'node:crypto';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Parsed, streamLarge } from './largeWorker';

/** Messages above this are parsed on the worker. */
export const LARGE_MESSAGE_BYTES = 1024 * 1024;
/** The largest message the host reads; above it the message is skipped and its request fails. */
export const MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
/** A large answer to anything but a tool call (a listing) is handed to the SDK whole up to this. */
const MAX_OTHER_BYTES = 16 * 1024 * 1024;
/** `_meta` key of the stand-in result: the token of a large result kept aside. */
export const LARGE_RESULT = 'agent-waypoints/large-result';
/** `data` key of an error the host made (not the server's own). */
export const HOST_ERROR = 'agent-waypoints/host-error';

export interface LargeResult {
  /** The text the model reads, as UTF-8 (all of it: the tool caps it). */
  text: Buffer;
  /** The result exactly as the server sent it (JSON). */
  raw: Buffer;
  isError: boolean;
  /** sha256 of each (the store's blob names), taken off the main thread. */
  textHash: string;
  rawHash: string;
}

/** A large message on its way to the worker; finish() when all of it came. */
export interface IncomingLarge {
  add(piece: Uint8Array): void;
  finish(): Promise<JSONRPCMessage | null>;
  drop(): void;
}

export interface IntakeLimits {
  maxBytes: number;
  largeBytes: number;
}

export const DEFAULT_LIMITS: IntakeLimits = { maxBytes: MAX_MESSAGE_BYTES, largeBytes: LARGE_MESSAGE_BYTES };
const KEEP_UNCLAIMED_MS = 60_000;

export class MessageIntake {
  /** Requests we sent that wait for an answer: what each asked. */
  private readonly asked = new Map<string | number, string>();
  private readonly kept = new Map<string, LargeResult>();

  constructor(
    readonly limits: IntakeLimits,
    private readonly log: (message: string) => void,
  ) {}

  /** Every message we send passes here: a request's method, a cancellation forgets its request. */
  sent(m: JSONRPCMessage): void {
    if ('method' in m && 'id' in m) this.asked.set(m.id, m.method);
    else if ('method' in m && m.method === 'notifications/cancelled') {
      const id = (m.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) this.asked.delete(id);
    }
  }

  /** A large result the SDK was given a stand-in for (once; unclaimed ones are dropped after a minute). */
  take(token: string): LargeResult | undefined {
    const r = this.kept.get(token);
    this.kept.delete(token);
    return r;
  }

  /** One message's bytes → the message for the SDK (null: nothing to hand over). */
  async convert(parts: readonly Buffer[], size: number): Promise<JSONRPCMessage | null> {
    if (size <= this.limits.largeBytes)
      return this.answered(JSONRPCMessageSchema.parse(JSON.parse(Buffer.concat(parts, size).toString('utf8'))));
    const large = this.begin();
    for (const p of parts) large.add(p);
    return large.finish();
  }

  /** A large message, given to the worker as it arrives. */
  begin(): IncomingLarge {
    const stream = streamLarge(this.limits.maxBytes);
    let size = 0;
    return {
      add: (piece) => {
        size += piece.length;
        stream.add(piece);
      },
      drop: () => stream.drop(),
      finish: async () => this.settle(await stream.end([...this.asked], MAX_OTHER_BYTES), size),
    };
  }

  private settle(out: Parsed, size: number): JSONRPCMessage | null {
    switch (out.kind) {
      case 'invalid':
        throw new Error(`a message of ${mb(size)} could not be read: ${out.reason}`);
      case 'ignored':
        this.log(`a message of ${mb(size)} was ignored (${out.what})`);
        return null;
      case 'message':
        return this.answered(JSONRPCMessageSchema.parse(out.message));
      case 'error':
        this.asked.delete(out.id);
        return { jsonrpc: '2.0', id: out.id, error: { code: out.code, message: out.message, data: out.data } };
      case 'call': {
        if (!this.asked.delete(out.id)) return null; // an answer nobody waits for any more
        const token = randomUUID();
        const bytes = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
        const { isError, textHash, rawHash } = out;
        this.kept.set(token, { text: bytes(out.text), raw: bytes(out.raw), isError, textHash, rawHash });
        setTimeout(() => this.kept.delete(token), KEEP_UNCLAIMED_MS).unref();
        return { jsonrpc: '2.0', id: out.id, result: { content: [], _meta: { [LARGE_RESULT]: token } } };
      }
    }
  }

  /**
   * A message over the limit was skipped (only its first and last bytes kept): the error its
   * request gets, when the request can be told from those bytes; 'dropped' for a notification
   * (nothing waits for it); else null — it may have been an answer, and the caller closes.
   */
  refusal(head: Buffer, tail: Buffer, size: number): JSONRPCMessage | 'dropped' | null {
    const id = skippedId(head, tail);
    if (id === undefined && METHOD_FIRST.test(head.toString('latin1'))) {
      this.log(`a message of ${mb(size)} without an id (a notification) was over the limit and dropped`);
      return 'dropped';
    }
    if (id === undefined || !this.asked.has(id)) return null;
    this.asked.delete(id);
    return {
      jsonrpc: '2.0',
      id,
      error: {
        code: -32603,
        message: `its answer was more than ${mb(this.limits.maxBytes)} (the most the host reads); it was skipped, not read (${mb(size)})`,
        data: { [HOST_ERROR]: true },
      },
    };
  }

  /** What a message over the limit that belongs to no request we can name is reported as. */
  tooLarge(size: number): string {
    return `the server sent a message of more than ${mb(this.limits.maxBytes)} (the most the host reads; ${mb(size)} seen), which was not read`;
  }

  private answered(m: JSONRPCMessage): JSONRPCMessage {
    if ('id' in m && m.id !== undefined && !('method' in m)) this.asked.delete(m.id);
    return m;
  }
}

const ID = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
/** Where servers write a message's id: last (`…,"id":3}`) or first (`{"jsonrpc":"2.0","id":3,…`). */
const ID_LAST = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);

/** A notification or request as the SDK writes one: its method first. */
const METHOD_FIRST = /^\s*\{\s*"method"\s*:/;

/** The id of a skipped message, read from its first or last bytes only. */
function skippedId(head: Buffer, tail: Buffer): string | number | undefined {
  const m = ID_LAST.exec(tail.toString('latin1')) ?? ID_FIRST.exec(head.toString('latin1'));
  if (!m) return undefined;
  return m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : Number(m[1]);
}

function mb(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}

/** Where a line goes once it is large: to the worker, piece by piece (IncomingLarge). */
export interface LineSink {
  add(piece: Buffer): void;
  end(): void;
  drop(): void;
}

/**
 * Splits a byte stream into lines (`\n`; a `\r` before it is JSON whitespace) without copying: a
 * line past `large` bytes goes on to a sink piece by piece as it arrives, and a line past `max`
 * is skipped, keeping its first and last bytes.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private head: Buffer | null = null;
  private sink: LineSink | null = null;
  private skipping: { tail: Buffer } | null = null;

  /** `empty`: empty lines are reported too (they end an SSE event). */
  constructor(
    private readonly limits: IntakeLimits,
    private readonly onLine: (parts: Buffer[], size: number) => void,
    private readonly onSkipped: (head: Buffer, tail: Buffer, size: number) => void,
    private readonly openSink: () => LineSink,
    private readonly empty = false,
  ) {}

  push(chunk: Buffer): void {
    for (let from = 0; ;) {
      const nl = chunk.indexOf(0x0a, from);
      this.add(chunk.subarray(from, nl === -1 ? chunk.length : nl));
      if (nl === -1) return;
      this.end();
      from = nl + 1;
    }
  }

  clear(): void {
    this.sink?.drop();
    this.reset();
  }

  private reset(): void {
    this.parts = [];
    this.size = 0;
    this.head = null;
    this.sink = null;
    this.skipping = null;
  }

  private add(piece: Buffer): void {
    if (piece.length === 0) return;
    this.size += piece.length;
    if (this.skipping) {
      this.skipping.tail = Buffer.concat([this.skipping.tail, piece]).subarray(-256);
      return;
    }
    if (this.size > this.limits.maxBytes) {
      this.head ??= firstBytes(this.parts, 256);
      this.sink?.drop();
      this.sink = null;
      this.parts = [];
      this.skipping = { tail: Buffer.from(piece.subarray(-256)) };
      return;
    }
    if (this.sink) return this.sink.add(piece);
    this.parts.push(piece);
    if (this.size <= this.limits.largeBytes) return;
    this.head = firstBytes(this.parts, 256);
    this.sink = this.openSink();
    for (const p of this.parts) this.sink.add(p);
    this.parts = [];
  }

  private end(): void {
    const { parts, size, head, sink, skipping } = this;
    this.reset();
    if (skipping) this.onSkipped(head ?? Buffer.alloc(0), skipping.tail, size);
    else if (sink) sink.end();
    else if (size > 0 || this.empty) this.onLine(parts, size);
  }
}

function firstBytes(parts: readonly Buffer[], n: number): Buffer {
  const head: Buffer[] = [];
  for (let got = 0, i = 0; got < n && i < parts.length; got += parts[i]!.length, i++) head.push(parts[i]!);
  return Buffer.from(Buffer.concat(head).subarray(0, n));
}
