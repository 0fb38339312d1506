// A child process for the condense crash test: runs (or resumes) a long run on the on-disk store
// and SIGKILLs itself right after the Nth checkpoint of phase KILL_ON is written. Bundled by
// esbuild for a fast start; prints one JSON line per event.
import { openDiskStore } from '../../../src/store';
import type { CheckpointStore } from '../../../src/store/api/types';
import { makeRunner } from '../loop/support';

const say = (event: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(event) + '\n');

function killingStore(store: CheckpointStore, phase: string | undefined, nth: number): CheckpointStore {
  let seen = 0;
  return new Proxy(store, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (typeof v !== 'function') return v;
      if (prop === 'loadResumeSnapshot')
        return async (...args: unknown[]) => {
          const r = (await v.apply(target, args)) as { omitted: unknown };
          say({ event: 'runner-resume', omitted: r.omitted });
          return r;
        };
      if (prop !== 'append' || !phase) return v.bind(target);
      return async (...args: unknown[]) => {
        const r = await v.apply(target, args);
        if ((args[1] as { phase: string }).phase === phase && ++seen === nth) {
          say({ event: 'killing', phase, seq: (r as { seq: number }).seq });
          process.kill(process.pid, 'SIGKILL');
        }
        return r;
      };
    },
  });
}

async function main(): Promise<void> {
  const env = process.env;
  // RESUME_EVERY: resume points (disk/resumePoint.ts) from the first byte on, one each time the log grows that much.
  const disk = openDiskStore(
    env.STORE_DIR!,
    env.RESUME_EVERY ? { resumePoints: { from: 0, every: Number(env.RESUME_EVERY) } } : {},
  );
  if (env.MODE === 'resume' && env.RESUME_EVERY) {
    // What the resume below starts from (read as the runner reads it).
    const r = await disk.loadResumeSnapshot(env.RUN_ID!);
    say({ event: 'resume-snapshot', omitted: r.omitted, messages: r.snapshot.messages.length });
  }
  const { runner } = makeRunner({
    baseURL: env.BASE_URL!,
    store: killingStore(disk, env.KILL_ON, Number(env.KILL_NTH ?? 1)),
    workspace: env.WORKSPACE!,
    policy: { categories: { read: 'auto', write: 'auto', command: 'auto', subagent: 'auto' } },
    deps: { defaultBudget: { max_steps: 1000, max_cost_usd: null, max_tokens: null, max_wall_ms: null } },
  });
  const handle =
    env.MODE === 'start'
      ? await runner.start({ task: 'Work through every step of the long task.' })
      : await runner.resume(env.RUN_ID!);
  say({ event: 'started', runId: handle.runId });
  const out = await handle.done;
  await disk.close();
  say({ event: 'done', state: out.state, detail: out.detail });
}

main().catch((err) => {
  say({ event: 'error', message: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
