// A store of many runs for the listing tests (disk and PostgreSQL alike): runs r0 (oldest) … r{n-1},
// every fifth paused (unfinished), the rest completed; and every page of its listing.
import type { RunSummary } from '../../../src/store/api/schema';
import type { CheckpointStore } from '../../../src/store/api/types';
import * as h from './helpers';

export async function fillRuns(s: CheckpointStore, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { run, lease } = await s.createRun(h.newRun(`r${i}`), h.owner('w'));
    await s.setRunState(run.run_id, i % 5 === 0 ? 'paused_error' : 'completed', null);
    await lease.release();
    ids.push(run.run_id);
  }
  await s.close();
  return ids;
}

export async function everyPage(s: CheckpointStore, limit: number): Promise<RunSummary[][]> {
  const pages: RunSummary[][] = [];
  let cursor: string | undefined;
  do {
    const page = await s.listRuns({ limit, ...(cursor ? { cursor } : {}) });
    pages.push(page.runs);
    cursor = page.cursor;
  } while (cursor);
  return pages;
}
