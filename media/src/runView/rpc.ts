// The webview's end of the protocol: typed requests matched to their responses by id, every
// response and notification parsed with the shared schemas before it is used.
import { HostMessage, type Method, type Params, Requests, type Result } from '../../../src/views/run/protocol';

declare function acquireVsCodeApi(): {
  postMessage(message: unknown): void;
  setState(state: unknown): void;
  getState(): unknown;
};
export const vscode = acquireVsCodeApi();

let nextId = 1;
const pending = new Map<number, { method: Method; resolve: (r: unknown) => void; reject: (e: Error) => void }>();

export function request<M extends Method>(method: M, params: Params<M>): Promise<Result<M>> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { method, resolve: resolve as (r: unknown) => void, reject });
    vscode.postMessage({ type: 'request', id, method, params });
  });
}

export type Notification = Exclude<HostMessage, { type: 'response' }>;

/** Listens to the host: responses settle their requests, everything else goes to `onNotify`. */
export function listen(onNotify: (m: Notification) => void): void {
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
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
  vscode.postMessage({ type: 'ready' });
}
