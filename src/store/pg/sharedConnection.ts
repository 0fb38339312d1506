// The shared store's connection, for CombinedStore: opens it, and reopens it in the background
// while it cannot be reached; its state (connecting / connected / unreachable / refused) is what
// the Runs view shows. Reachability comes from the store's own statements (PgStatus).
import type { Store } from '../core/store';
import type { Disposable } from '../api/types';
import { errorMessage } from '../../common/errors';
import { isConnectionError, type PgStatus } from './conn';

export type SharedState =
  | { kind: 'connecting' }
  | { kind: 'connected' }
  /** Away; retried every `retryMs`. */
  | { kind: 'unreachable'; error: string; retryMs: number }
  /** Reached, but it cannot be used as it is (a newer schema, no privileges): not retried until reconnected. */
  | { kind: 'refused'; error: string };

export class SharedConnection {
  private current: Store | null = null;
  private stateNow: SharedState = { kind: 'connecting' };
  private readonly listeners = new Set<(s: SharedState) => void>();
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly open: (onStatus: (s: PgStatus) => void) => Promise<Store>,
    private readonly retryMs: number,
    private readonly opened: (s: Store) => void,
  ) {
    this.connect();
  }

  get state(): SharedState {
    return this.stateNow;
  }

  /** The shared store (null while it has never opened). */
  get store(): Store | null {
    return this.current;
  }

  onState(listener: (s: SharedState) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  private setState(s: SharedState): void {
    if (this.closed || JSON.stringify(s) === JSON.stringify(this.stateNow)) return;
    this.stateNow = s;
    for (const l of [...this.listeners]) l(s);
    if (s.kind === 'unreachable') this.scheduleRetry();
  }

  private connect(): void {
    this.setState({ kind: 'connecting' });
    let store: Store | undefined;
    const onStatus = (st: PgStatus) => {
      if (!store || this.current !== store) return;
      if (st.reachable) this.setState({ kind: 'connected' });
      else this.setState({ kind: 'unreachable', error: st.error ?? 'unreachable', retryMs: this.retryMs });
    };
    this.open(onStatus)
      .then(async (s) => {
        store = s;
        await s.whenOpen();
        if (this.closed) return void s.close().catch(() => undefined);
        this.current = s;
        this.opened(s);
        this.setState({ kind: 'connected' });
      })
      .catch((err: unknown) => {
        void store?.close().catch(() => undefined);
        const error = errorMessage(err);
        // A newer schema, missing privileges, nothing configured: retrying would not help.
        this.setState(
          isConnectionError(err) ? { kind: 'unreachable', error, retryMs: this.retryMs } : { kind: 'refused', error },
        );
      });
  }

  /** Tries again now (the Runs view's Refresh), or on the retry timer. */
  async reconnect(): Promise<void> {
    if (this.closed) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (!this.current) return this.connect();
    // It opened before: any statement tells whether it is back (the engine reports reachability).
    await this.current.rescan().catch(() => undefined);
    if (this.stateNow.kind === 'unreachable') this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retry || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.reconnect();
    }, this.retryMs);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }
}
