// The webview's end of the protocol: typed requests matched to their responses by id. What the
// view sends is parsed by the host with the shared schemas (protocol.ts); what the host sends is
// built by its own typed code and checked against the same schemas by the tests, so the view takes
// it as typed and only sorts out what is not the host's (another sender's `message` event) — the
// schemas (zod, ≈ 95 KB) are not in the view's bundle, and a state is not parsed twice. The VS Code
// API object and the window are passed in (the unit tests pass a DOM's and a recorder).
import type { HostMessage, Method, Params, Result } from '../../../src/views/run/protocol';

/** What acquireVsCodeApi() returns. */
export interface VsCodeApi {
  postMessage(message: unknown): void;
  setState(state: unknown): void;
  getState(): unknown;
}

export type Notification = Exclude<HostMessage, { type: 'response' }>;

export interface Rpc {
  request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
  /** Listens to the host (responses settle their requests, everything else goes to `onNotify`), then says ready. */
  listen(onNotify: (m: Notification) => void): void;
  /** Tells the host the first state it sent has been drawn. */
  painted(): void;
}

export function createRpc(api: VsCodeApi, win: Pick<Window, 'addEventListener'>): Rpc {
  let nextId = 1;
  const pending = new Map<number, { method: Method; resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  return {
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject });
        api.postMessage({ type: 'request', id, method, params });
      });
    },
    listen(onNotify) {
      win.addEventListener('message', (event: MessageEvent<unknown>) => {
        const m = event.data;
        if (!isHostMessage(m)) return; // not the host's: ignore
        if (m.type !== 'response') return onNotify(m);
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (!m.ok) return p.reject(new Error(m.error));
        if (typeof m.result === 'object' && m.result !== null) p.resolve(m.result);
        else p.reject(new Error(`malformed ${p.method} response`));
      });
      api.postMessage({ type: 'ready' });
    },
    painted() {
      api.postMessage({ type: 'painted' });
    },
  };
}

/** Every kind of message the host sends (the type makes the list complete). */
const HOST_TYPES: Record<HostMessage['type'], true> = { state: true, delta: true, reveal: true, response: true };

function isHostMessage(m: unknown): m is HostMessage {
  if (typeof m !== 'object' || m === null) return false;
  const type = (m as { type?: unknown }).type;
  return typeof type === 'string' && Object.hasOwn(HOST_TYPES, type);
}
