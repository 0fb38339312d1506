// A process running the store as the extension's bundle does (bundled by esbuild, the worker's bundle
// beside it): a run whose compactions go to the worker thread (compactOffThread.test.ts).
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { offThreadCounts } from '../../../src/store/disk/snapshotOffThread';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';
import { step } from './backgroundSupport';

async function main(): Promise<void> {
  const [root, id] = process.argv.slice(2) as [string, string];
  const s = await openDiskStoreReady(root, { compactAfterCommits: 8, compactOffThreadFrom: 0 });
  const { lease } = await s.createRun({ ...h.newRun('bundled'), run_id: id }, h.owner('child'));
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let k = 1; k <= 20; k++) {
    msgs = await step(s, id, k, msgs);
    await s.whenIdle(id);
  }
  const records = (await s.list(id, { limit: 1000 })).length;
  await lease.release();
  await s.close();
  process.stdout.write(JSON.stringify({ snapshots: offThreadCounts.snapshots, records }));
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack ?? err));
  process.exit(1);
});
