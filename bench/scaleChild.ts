// A writer in a process of its own, for the scale run's crash (bench/scaleStores.ts, killedWriter): it
// writes the seeded run through the public API as a caller loops over it (openDiskStore with its
// default options, no wait for the store's background work), says when its last step's calls have
// returned, and waits — the parent then kills it with SIGKILL: what a crash at that step leaves.
import { openDiskStore } from '../src/store';
import { BENCH_OWNER } from './contenders/ours';
import { applyOp, Workload } from './workload';

async function main(): Promise<void> {
  const [dir, steps, seed, every, runId] = process.argv.slice(2);
  const workload = new Workload(Number(seed), runId!, { condenseEvery: Number(every) });
  const store = openDiskStore(dir!);
  await store.createRun(workload.runInput, { ...BENCH_OWNER, pid: process.pid });
  await store.append(runId!, workload.runStarted);
  for (let s = 1; s <= Number(steps); s++)
    for (const op of workload.nextStep().ops) if (op.kind !== 'model') await applyOp(store, runId!, op);
  process.send!({ messages: workload.lastSnapshotMessages, contentBytes: workload.totalContentBytes });
  setInterval(() => undefined, 60_000); // held until killed
}

main().catch((err: unknown) => {
  process.stderr.write(`scale writer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
