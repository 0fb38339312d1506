// Ours: the disk store (src/store) through its public CheckpointStore interface, used the way the
// runner uses it. Durable phases are durable when their promise resolves; the deferred ones are
// queued and coalesced into the next durable commit or a 200 ms timer. Because the contenders are
// interleaved, that timer would fire while a peer is on the clock and hide our cost, so every step
// ends with flush(): the step pays for everything it handed over. In the extension the same commit
// happens on the timer during the next LLM call, so this adds no commit the product does not make.
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointStore, NewRunInput, OwnerInfo, RunLease } from '../../src/store/types';
import type { Op } from '../workload';
import type { Contender } from './types';

export type OpenStore = (dir: string) => CheckpointStore | Promise<CheckpointStore>;

export const BENCH_OWNER: OwnerInfo = { owner_id: 'bench-owner', label: 'benchmark', pid: process.pid, hostname: 'bench' };

export class OursContender implements Contender {
  readonly name = 'ours' as const;
  private store: CheckpointStore | undefined;
  private lease: RunLease | undefined;
  private readonly runId: string;

  constructor(
    readonly dir: string,
    private readonly open: OpenStore,
    private readonly run: NewRunInput,
    private readonly runStarted: Op,
  ) {
    this.runId = run.run_id!;
  }

  async start(): Promise<void> {
    this.store = await this.open(this.dir);
    const { lease } = await this.store.createRun(this.run, BENCH_OWNER);
    this.lease = lease;
    await this.apply(this.runStarted);
    await this.store.flush();
  }

  async apply(op: Op): Promise<void> {
    const store = this.store!;
    if (op.kind === 'append') await store.append(this.runId, op.input);
    else if (op.kind === 'intent') await store.recordIntent(this.runId, op.intent);
    else await store.recordResult(this.runId, op.toolCallId, op.result);
  }

  async endStep(): Promise<void> {
    await this.store!.flush();
  }

  /** Files of the run's folder: each durable commit (and blob) is one new write-once file. */
  async durableWrites(): Promise<number> {
    return countFiles(path.join(this.dir, 'runs', this.runId));
  }

  async close(): Promise<void> {
    await this.lease?.release();
    await this.store?.close();
    this.store = undefined;
    this.lease = undefined;
  }

  async resume(): Promise<number> {
    const store = await this.open(this.dir);
    try {
      // Opens the run's log, verifies every file's checksum and schema, replays the lists.
      const loaded = await store.loadSnapshot(this.runId);
      return loaded.snapshot.messages.length;
    } finally {
      await store.close();
    }
  }

  notes(): Record<string, string> {
    return { ours: 'openDiskStore through CheckpointStore; flush() at the end of every step' };
  }
}

/** Write-once files under a folder (temp files start with '.'; the owner lock is rewritten, not a commit). */
function countFiles(dir: string): number {
  let n = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'owner.lock') continue;
    if (e.isDirectory()) n += countFiles(path.join(dir, e.name));
    else n += 1;
  }
  return n;
}
