// The fetch the openai client uses, with two rules no server can bend. A request follows a redirect
// only within the origin it was made for: fetch itself drops `Authorization` on a cross-origin hop
// but carries any other header, Azure's `api-key` included, wherever the server points. And no
// response is read past its bound: the host never holds more of one answer than it can use.

/** Same-origin redirects followed per request (fetch's own limit is 20). */
export const MAX_REDIRECTS = 5;
/**
 * One response body, or one event of a stream. The longest answer a model writes (≈ 128k tokens,
 * ≈ 0.5 MB of text) fits many times over, JSON escaping included; more is runaway or hostile output.
 */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** A whole stream: ≈ 250 bytes of framing per token, so twice the longest answer's. */
export const MAX_STREAM_BYTES = 64 * 1024 * 1024;

/** A request, or a redirect, to another origin than the configured one: not made. */
export class RefusedRedirect extends Error {
  override readonly name = 'RefusedRedirect';
  constructor(
    /** The redirect's HTTP status; null: the request itself named another origin. */
    readonly status: number | null,
    readonly from: string,
    readonly to: string,
  ) {
    super(
      status === null
        ? `a request for ${to} is not for ${from}; not made`
        : `HTTP ${status} redirected a request for ${from} to ${to}; not followed`,
    );
  }
}

/** A response larger than its bound: reading stopped there. */
export class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
  constructor(
    readonly what: 'response' | 'stream event' | 'stream',
    readonly limit: number,
  ) {
    super(`the ${what} was larger than ${limit / (1024 * 1024)} MiB; reading stopped there`);
  }
}

type Fetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `origin`: where requests (and the key) may go. `stream`: this client's successful responses are
 * read as a stream (bounded per event and in all); anything else is bounded as one body.
 */
export function guardedFetch(o: { origin: string; stream: boolean; fetch?: Fetch }): Fetch {
  const inner: Fetch = o.fetch ?? ((url, init) => globalThis.fetch(url, init));
  return async (input, init = {}) => {
    let url = new URL(input instanceof Request ? input.url : input);
    let req: RequestInit = { ...init, redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      if (url.origin !== o.origin) throw new RefusedRedirect(null, o.origin, url.origin);
      const res = await inner(url.href, req);
      const location = isRedirect(res.status) ? res.headers.get('location') : null;
      if (location === null) return bounded(res, o.stream && res.ok);
      await res.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== o.origin) throw new RefusedRedirect(res.status, o.origin, next.origin);
      if (hop >= MAX_REDIRECTS) throw new TypeError(`more than ${MAX_REDIRECTS} redirects`);
      req = redirected(req, res.status);
      url = next;
    }
  };
}

const isRedirect = (s: number): boolean => s === 301 || s === 302 || s === 303 || s === 307 || s === 308;

/** The next hop's request as fetch makes it: 303 (and 301/302 after a POST) become a GET without a body. */
function redirected(req: RequestInit, status: number): RequestInit {
  const method = (req.method ?? 'GET').toUpperCase();
  const toGet = (status === 303 && method !== 'GET' && method !== 'HEAD') || (status <= 302 && method === 'POST');
  if (!toGet) return req;
  const headers = new Headers(req.headers);
  for (const h of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'])
    headers.delete(h);
  const { body: _body, ...rest } = req;
  return { ...rest, method: 'GET', headers };
}

/** The response with a body that errors (and stops the download) once past its bound. */
function bounded(res: Response, stream: boolean): Response {
  if (!res.body) return res;
  const total = stream ? MAX_STREAM_BYTES : MAX_RESPONSE_BYTES;
  const declared = Number(res.headers.get('content-length'));
  if (!stream && declared > total) {
    void res.body.cancel();
    throw new ResponseTooLarge('response', total);
  }
  let read = 0;
  const events = stream ? new EventSplitter() : null;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      read += chunk.byteLength;
      if (read > total) throw new ResponseTooLarge(stream ? 'stream' : 'response', total);
      if (!events) return out.enqueue(chunk);
      for (const event of events.push(chunk)) out.enqueue(event);
    },
    flush(out) {
      const rest = events?.rest();
      if (rest) out.enqueue(rest);
    },
  });
  return new Response(res.body.pipeThrough(limit), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * Passes a stream on one whole server-sent event at a time, each at most MAX_RESPONSE_BYTES. The
 * SDK's parser copies what it holds at every network chunk and again after every event in it
 * (quadratic in an event's size, and in the events a chunk holds); handed single events, it copies
 * each byte a fixed number of times.
 */
class EventSplitter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineStart = true;

  /** The events the chunk completes (the first one with what was held before it). */
  push(chunk: Uint8Array): Uint8Array[] {
    const events: Uint8Array[] = [];
    let from = 0; // where the chunk's next event starts
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (b !== 0x0a) {
        if (b !== 0x0d) this.lineStart = false;
        continue;
      }
      if (this.lineStart) {
        // A blank line: the event ends here.
        const part = chunk.subarray(from, i + 1);
        this.check(this.pendingBytes + part.length);
        events.push(this.pending.length === 0 ? part : join([...this.pending, part]));
        this.pending = [];
        this.pendingBytes = 0;
        from = i + 1;
      }
      this.lineStart = true;
    }
    if (from < chunk.length) {
      this.pending.push(chunk.subarray(from));
      this.pendingBytes += chunk.length - from;
      this.check(this.pendingBytes);
    }
    return events;
  }

  /** What is left at the end of the stream (an event without its blank line). */
  rest(): Uint8Array | null {
    return this.pending.length === 0 ? null : join(this.pending);
  }

  private check(eventBytes: number): void {
    if (eventBytes > MAX_RESPONSE_BYTES) throw new ResponseTooLarge('stream event', MAX_RESPONSE_BYTES);
  }
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
