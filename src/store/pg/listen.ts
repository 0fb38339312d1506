// What changed in the shared store, pushed: one connection LISTENing on the schema's channel, where
// the schema's triggers NOTIFY every new commit of a run, every lease taken or given back, every
// hand-off and every posted or settled decision (schema.ts, version 2). The Runs view and the
// workers wait on it instead of polling. A notification is a hint — "look at this run again" — never
// the data; while the connection is down nothing arrives, so a reconnect is announced (`resync`) and
// listeners look at everything again.
import pgLib from 'pg';
import type pg from 'pg';
import type { Disposable } from '../api/types';
import { clientConfig, type PgConnectOptions } from './conn';
import { quoteIdent } from './schema';

export type SharedChange =
  | {
      /** run: created or deleted; commit: new records; lease: taken, given back or taken over. */
      kind: 'run' | 'commit' | 'lease' | 'handoffs' | 'decisions';
      op: 'insert' | 'update' | 'delete';
      workspace: string;
      runId: string;
    }
  /** The listener (re)connected: changes may have been missed meanwhile; look again. */
  | { kind: 'resync' };

export class SharedListener {
  private client: pg.Client | null = null;
  private readonly listeners = new Set<(c: SharedChange) => void>();
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private connected: Promise<void>;
  private markConnected: () => void = () => undefined;

  constructor(
    private readonly conn: PgConnectOptions,
    private readonly schema: string,
    /** Only changes of these projects (all when absent). */
    private readonly workspaces?: ReadonlySet<string>,
    private readonly retryMs = 1_000,
  ) {
    this.connected = new Promise((resolve) => (this.markConnected = resolve));
    void this.connect();
  }

  /** Resolves once the LISTEN is in place (a change committed after it is seen). */
  ready(): Promise<void> {
    return this.connected;
  }

  on(listener: (c: SharedChange) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  private emit(c: SharedChange): void {
    for (const l of [...this.listeners]) {
      try {
        l(c);
      } catch {
        // a listener's bug must not stop the others
      }
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const c = new pgLib.Client(clientConfig(this.conn));
    c.on('error', () => undefined); // followed by `end`
    c.on('end', () => {
      if (this.client !== c) return;
      this.client = null;
      this.scheduleRetry();
    });
    c.on('notification', (n) => {
      if (n.channel !== this.schema || !n.payload) return;
      const change = parse(n.payload);
      if (change && change.kind !== 'resync' && (!this.workspaces || this.workspaces.has(change.workspace)))
        this.emit(change);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${quoteIdent(this.schema)}`);
    } catch {
      void c.end().catch(() => undefined);
      this.scheduleRetry();
      return;
    }
    if (this.closed) return void c.end().catch(() => undefined);
    this.client = c;
    this.markConnected();
    this.emit({ kind: 'resync' });
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, this.retryMs);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const c = this.client;
    this.client = null;
    this.listeners.clear();
    await c?.end().catch(() => undefined);
  }
}

function parse(payload: string): SharedChange | undefined {
  try {
    const v = JSON.parse(payload) as { kind?: unknown; op?: unknown; workspace?: unknown; run_id?: unknown };
    const kinds = ['run', 'commit', 'lease', 'handoffs', 'decisions'];
    const ops = ['insert', 'update', 'delete'];
    if (typeof v.kind !== 'string' || !kinds.includes(v.kind)) return undefined;
    if (typeof v.op !== 'string' || !ops.includes(v.op)) return undefined;
    if (typeof v.workspace !== 'string' || typeof v.run_id !== 'string') return undefined;
    return {
      kind: v.kind as 'run',
      op: v.op as 'insert',
      workspace: v.workspace,
      runId: v.run_id,
    };
  } catch {
    return undefined;
  }
}

/**
 * Resolves with `check()`'s first defined answer: asked now, again on every change of `runId`
 * (any run when absent) and at every resync, and every `recheckMs` as a safety net for what no
 * notification announces (a lease that went stale by time alone). Rejects after `timeoutMs`.
 */
export function waitUntil<T>(
  listener: SharedListener,
  o: { runId?: string; recheckMs: number; timeoutMs: number; what: string },
  check: () => Promise<T | undefined>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let asking = false;
    let again = false;
    const finish = (fn: () => void) => {
      done = true;
      sub.dispose();
      clearInterval(tick);
      clearTimeout(limit);
      fn();
    };
    const ask = async (): Promise<void> => {
      if (done) return;
      if (asking) return void (again = true);
      asking = true;
      try {
        const v = await check();
        if (v !== undefined) finish(() => resolve(v));
      } catch (err) {
        finish(() => reject(err as Error));
      } finally {
        asking = false;
      }
      if (again && !done) {
        again = false;
        await ask();
      }
    };
    const sub = listener.on((c) => {
      if (c.kind === 'resync' || !o.runId || c.runId === o.runId) void ask();
    });
    const tick = setInterval(() => void ask(), o.recheckMs);
    const limit = setTimeout(
      () => finish(() => reject(new Error(`timed out after ${o.timeoutMs} ms waiting for ${o.what}`))),
      o.timeoutMs,
    );
    void listener.ready().then(ask);
  });
}
