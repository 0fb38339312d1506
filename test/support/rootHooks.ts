// Mocha root hooks and global fixtures of the plain-Node tiers (.mocharc.unit.cjs and .mocharc.int.cjs
// `require`). Every temporary folder a run makes (os.tmpdir(), read again at each call, and the child
// processes it starts) goes into one folder of the run, removed with any PostgreSQL cluster still
// running in it once every file has run: a suite of hundreds of stores and workspaces leaves nothing
// in /tmp. The main process makes it when it loads this file, before any test file loads; the workers
// of a parallel run are forked after that and inherit it (AW_RUN_TMP says it is made). One folder per
// run, not per file: a parallel worker runs file after file, and its PostgreSQL cluster
// (test/support/postgres.ts) and the helpers' built-once bundles outlive each file.
import type { Context } from 'mocha';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopClustersIn, stopSharedPostgres } from './postgres';
import { scaled } from './timeScale';

/** The run's folder if this process made it (the only one that removes it). */
const madeHere = process.env.AW_RUN_TMP ? undefined : makeRunTmp();

function makeRunTmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-unit-'));
  // Traversable by other users, as /tmp is: as root, the PostgreSQL cluster runs as `postgres`, in a folder under it.
  fs.chmodSync(dir, 0o755);
  process.env.TMPDIR = dir;
  process.env.AW_RUN_TMP = dir;
  return dir;
}

/**
 * Main process, once, after every file (and after a parallel run's workers have exited): this
 * process's cluster, any a worker left running (one killed before its exit hook finished), then the
 * folder. Cleanup, not a behaviour under test: a global fixture has no time limit to miss.
 */
export function mochaGlobalTeardown(): void {
  stopSharedPostgres();
  if (!madeHere) return;
  stopClustersIn(madeHere);
  fs.rmSync(madeHere, { recursive: true, force: true, maxRetries: 3 });
}

export const mochaHooks = {
  // Each test's time limit scales with the machine's load when it starts, as the workbench tiers' do:
  // `npm test` runs these tiers beside the workbench ones, and a limit is a hang detector, not a speed check.
  beforeEach(this: Context): void {
    const test = this.currentTest;
    if (test) test.timeout(scaled(test.timeout()));
  },
};
