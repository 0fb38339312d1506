// A child process for the crash tests: runs (or resumes, or decides) the run on the on-disk store and
// SIGKILLs itself right after its Nth store write resolves (KILL_AT), just before the frame of its Nth
// durable barrier is written (KILL_BEFORE_BARRIER) or just after that frame's fdatasync returned
// (KILL_AFTER_BARRIER). Bundled by esbuild for a fast start. Prints one JSON line per event on stdout.
import { barrierFs, makeRunner } from './support';
import { openDiskStore, type FsLayer } from '../../../src/store';
import type { CheckpointStore } from '../../../src/store/api/types';

const WRITES = new Set([
  'append',
  'recordIntent',
  'withdrawIntent',
  'recordProcess',
  'recordResult',
  'requestApproval',
  'decideApproval',
  'setRunState',
  'createRun',
]);

function say(event: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

/** Counts resolved writes; kills the process right after write number `killAt`. */
function killingStore(store: CheckpointStore, killAt: number): CheckpointStore {
  let n = 0;
  return new Proxy(store, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (typeof v !== 'function') return v;
      if (!WRITES.has(String(prop))) return v.bind(target);
      return async (...args: unknown[]) => {
        const r = await v.apply(target, args);
        n += 1;
        const what = prop === 'append' ? `append:${(args[1] as { phase: string }).phase}` : String(prop);
        say({ event: 'write', n, what });
        if (n === killAt) process.kill(process.pid, 'SIGKILL');
        return r;
      };
    },
  });
}

/** The fs layer with the barrier kills: counts appends to segment files and their fdatasyncs. */
function killingFs(before: number, after: number): FsLayer {
  return barrierFs({
    frame: (next, carries) => {
      if (next !== before) return;
      say({ event: 'kill', before: next, carries });
      process.kill(process.pid, 'SIGKILL');
    },
    barrier: (n, _all, lastFrame) => {
      say({ event: 'barrier', n, carries: lastFrame });
      if (n === after) process.kill(process.pid, 'SIGKILL');
    },
  }).fs;
}

async function main(): Promise<void> {
  const env = process.env;
  const disk = openDiskStore(env.STORE_DIR!, {
    fs: killingFs(Number(env.KILL_BEFORE_BARRIER ?? 0), Number(env.KILL_AFTER_BARRIER ?? 0)),
  });
  const store = killingStore(disk, Number(env.KILL_AT ?? 0));
  // Commands run without asking, so the only approvals are the "may already have run" ones.
  const { runner } = makeRunner({
    baseURL: env.BASE_URL!,
    store,
    workspace: env.WORKSPACE!,
    policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
  });
  if (env.KILL_AFTER_MS) setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(env.KILL_AFTER_MS));
  runner.events.on((e) => {
    if (e.type === 'leftovers')
      say({ event: 'leftovers', status: e.status, pids: e.leftovers.flatMap((l) => l.pids), ms: Date.now() });
  });
  let handle;
  if (env.MODE === 'start') {
    handle = await runner.start({ task: 'append three lines', budget: { max_steps: 10 } });
    say({ event: 'started', runId: handle.runId });
  } else if (env.MODE === 'decide') {
    handle = await runner.decideApprovals(env.RUN_ID!, JSON.parse(env.DECISIONS!));
  } else {
    handle = await runner.resume(env.RUN_ID!);
  }
  const out = handle ? await handle.done : { state: 'awaiting_approval' };
  await disk.close();
  say({ event: 'done', state: out.state });
}

main().catch((err) => {
  say({ event: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
