// The run view's host end for the benchmark, on a thread of its own (as VS Code's extension host is
// a process apart from the window): the disk store, RunViewControllers and the runner's events,
// driven by messages from the benchmark's thread, which runs Chromium. The store's synchronous
// work cannot hold up the browser's side (creating the page, handing it messages), nor the reverse.
import { parentPort, workerData, Worker } from 'node:worker_threads';
import path from 'node:path';
import { openDiskStoreReady } from '../src/store';
import { RunViewController } from '../src/views/run/controller';
import type { HostMessage } from '../src/views/run/protocol';
import { threadRuns } from '../src/views/run/thread';
import { idleRunner, noEditor, testActions } from '../test/support/actions';
import { epochNow, type RunViewHostEnd, type RunViewHostLink } from '../test/support/runViewPage';
import { BENCH_OWNER } from './contenders/ours';

/** Benchmark thread → host thread. */
type ToHost =
  | { type: 'open'; view: number }
  | { type: 'delivered'; view: number; n: number }
  | { type: 'receive'; view: number; message: unknown }
  | { type: 'close'; view: number }
  | { type: 'items' }
  | { type: 'stream'; step: number; tokens: number; perSecond: number; token: string }
  | { type: 'shutdown' };

/** Host thread → benchmark thread. */
type FromHost =
  | { type: 'ready' }
  | { type: 'post'; view: number; n: number; message: HostMessage; sentAt: number }
  | { type: 'closed'; view: number }
  | { type: 'items'; count: number }
  | { type: 'streamed'; lastAt: number }
  | { type: 'shutdown' }
  | { type: 'error'; message: string };

export interface RunViewHostThread extends RunViewHostLink {
  /** Items in the transcript of the open view opened first (its whole outline). */
  items(): Promise<number>;
  /** Streams `tokens` text deltas at `perSecond` to every open view; resolves with when the last was sent (epoch ms). */
  stream(o: { step: number; tokens: number; perSecond: number; token: string }): Promise<number>;
  close(): Promise<void>;
}

/** Starts the host thread over the store in `dir`, for the thread of run `runId` (its store opened, no run read yet). */
export async function startRunViewHost(dir: string, runId: string): Promise<RunViewHostThread> {
  // The thread runs this file's TypeScript through tsx, as the benchmark does.
  const worker = new Worker(
    `require('tsx/cjs/api').register(); require(${JSON.stringify(path.join(__dirname, 'runViewHost.ts'))});`,
    { eval: true, workerData: { dir, runId } },
  );
  const posts = new Map<number, (m: HostMessage, sentAt: number) => Promise<void>>();
  const waiting: { type: FromHost['type']; resolve(m: FromHost): void; reject(err: Error): void }[] = [];
  const failed: Error[] = [];
  const fail = (err: Error) => {
    failed.push(err);
    for (const w of waiting.splice(0)) w.reject(err);
  };
  worker.on('error', fail);
  worker.on('message', (m: FromHost) => {
    if (m.type === 'post') {
      const post = posts.get(m.view);
      if (post) void post(m.message, m.sentAt).then(() => send({ type: 'delivered', view: m.view, n: m.n }));
      return;
    }
    if (m.type === 'error') return fail(new Error(`run view host: ${m.message}`));
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m);
  });
  const send = (m: ToHost) => worker.postMessage(m);
  const next = <T extends FromHost['type']>(type: T) =>
    new Promise<Extract<FromHost, { type: T }>>((resolve, reject) => {
      if (failed.length > 0) return reject(failed[0]!);
      waiting.push({ type, resolve: resolve as (m: FromHost) => void, reject });
    });
  await next('ready');
  let views = 0;
  return {
    open(post): RunViewHostEnd {
      const view = ++views;
      posts.set(view, post);
      send({ type: 'open', view });
      return {
        receive: (message) => send({ type: 'receive', view, message }),
        close: async () => {
          const closed = next('closed');
          send({ type: 'close', view });
          await closed;
          posts.delete(view);
        },
      };
    },
    items: async () => {
      const r = next('items');
      send({ type: 'items' });
      return (await r).count;
    },
    stream: async (o) => {
      const r = next('streamed');
      send({ type: 'stream', ...o });
      return (await r).lastAt;
    },
    close: async () => {
      const r = next('shutdown');
      send({ type: 'shutdown' });
      await r;
      await worker.terminate();
      if (failed.length > 0) throw failed[0]!;
    },
  };
}

async function hostThread(port: NonNullable<typeof parentPort>, o: { dir: string; runId: string }): Promise<void> {
  const say = (m: FromHost) => port.postMessage(m);
  const store = await openDiskStoreReady(o.dir); // a fresh window: the run's log is read on first open
  let active = false;
  const runner = idleRunner({ isActive: () => active });
  const { events } = runner;
  const deps = {
    store,
    runner,
    threadRuns: (id: string) => threadRuns(store, id),
    actions: testActions({ store, runner, workspace: o.dir, owner: BENCH_OWNER }).actions,
    editor: noEditor,
    log: { info: () => undefined, warn: (m: string) => say({ type: 'error', message: m }) },
  };
  const controllers = new Map<number, RunViewController>();
  const delivered = new Map<string, () => void>();
  port.on('message', (m: ToHost) => {
    switch (m.type) {
      case 'open': {
        let n = 0;
        const c = new RunViewController(o.runId, o.runId, deps, (message) => {
          const k = n++;
          const sentAt = epochNow();
          return new Promise<void>((resolve) => {
            delivered.set(`${m.view}:${k}`, resolve);
            say({ type: 'post', view: m.view, n: k, message, sentAt });
          });
        });
        controllers.set(m.view, c);
        void c.pushState(true).catch((err: Error) => say({ type: 'error', message: err.message }));
        return;
      }
      case 'delivered': {
        const key = `${m.view}:${m.n}`;
        delivered.get(key)?.();
        delivered.delete(key);
        return;
      }
      case 'receive':
        void controllers.get(m.view)?.receive(m.message);
        return;
      case 'close':
        controllers.get(m.view)?.dispose();
        controllers.delete(m.view);
        return say({ type: 'closed', view: m.view });
      case 'items':
        return say({ type: 'items', count: [...controllers.values()][0]?.transcript.outline().length ?? 0 });
      case 'stream':
        void (async () => {
          active = true;
          events.emit({ type: 'llm', runId: o.runId, step: m.step, status: 'start' });
          const started = performance.now();
          for (let i = 0; i < m.tokens; i++) {
            const wait = started + (i * 1000) / m.perSecond - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            events.emit({ type: 'llm-delta', runId: o.runId, step: m.step, kind: 'text', delta: m.token });
          }
          say({ type: 'streamed', lastAt: epochNow() });
        })();
        return;
      case 'shutdown':
        for (const c of controllers.values()) c.dispose();
        void store.close().then(() => say({ type: 'shutdown' }));
        return;
    }
  });
  say({ type: 'ready' });
}

if (parentPort && (workerData as { dir?: string } | undefined)?.dir) {
  const port = parentPort;
  hostThread(port, workerData as { dir: string; runId: string }).catch((err: Error) =>
    port.postMessage({ type: 'error', message: err.stack ?? err.message } satisfies FromHost),
  );
}
