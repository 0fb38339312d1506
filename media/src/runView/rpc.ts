// The webview's end of the protocol: typed requests matched to their responses by id, every
// response and notification parsed with the shared schemas before it is used. The VS Code API
// object and the window are passed in (the unit tests pass a DOM's and a recorder).
import { HostMessage, type Method, type Params, Requests, type Result } from '../../../src/views/run/protocol';

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
        const parsed = HostMessage.safeParse(event.data);
        if (!parsed.success) return; // not ours (or malformed): ignore
        const m = parsed.data;
        if (m.type !== 'response') return onNotify(m);
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (!m.ok) return p.reject(new Error(m.error));
        const r = Requests[p.method].result.safeParse(m.result);
        if (r.success) p.resolve(r.data);
        else p.reject(new Error(`malformed ${p.method} response`));
      });
      api.postMessage({ type: 'ready' });
    },
  };
}
