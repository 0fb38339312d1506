// Mocha root hooks of the unit suite (.mocharc.unit.json `require`): the shared PostgreSQL cluster
// starts on first use (test/support/postgres.ts) and stops here, once, after every test. Every
// temporary folder the suite makes (os.tmpdir(), read again at each call, and the child processes
// it starts) goes into one folder of this run, removed at the end: a suite of hundreds of stores and
// workspaces leaves nothing in /tmp.
import type { Context } from 'mocha';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopSharedPostgres } from './postgres';
import { scaled } from './timeScale';

const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-unit-'));
// Traversable by other users, as /tmp is: as root, the PostgreSQL cluster runs as `postgres`, in a folder under it.
fs.chmodSync(runTmp, 0o755);
process.env.TMPDIR = runTmp;

export const mochaHooks = {
  // Each test's time limit scales with the machine's load when it starts, as the workbench tiers' do:
  // `npm test` runs these tiers beside the workbench ones, and a limit is a hang detector, not a speed check.
  beforeEach(this: Context): void {
    const test = this.currentTest;
    if (test) test.timeout(scaled(test.timeout()));
  },
  afterAll(this: Context): void {
    // Stopping the cluster and removing a suite's worth of stores is cleanup, not a behaviour under
    // test: on a loaded machine it took longer than a test's limit (mocha fails a slow sync hook too).
    this.timeout(300_000);
    stopSharedPostgres();
    fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  },
};
