// Mocha root hooks of the e2e suite (.mocharc.e2e.cjs `require`): each test's time limit — the rc's
// default or its suite's — is scaled to the machine's load when the test starts (a test that sets its
// own limit scales it too, through `scaled`). After all files, any shared workbench a filtered run left
// open is closed, and so is the process's Chromium — not in a parallel run's worker, where these
// hooks run after each file and the browser serves the worker's next files (it goes with the worker).
import type { Context } from 'mocha';
import { scaled } from '../support/timeScale';
import { closeChromium } from './harness';
import { closeSharedWorkbenches } from './shared';

export const mochaHooks = {
  beforeEach(this: Context): void {
    const test = this.currentTest;
    if (test) test.timeout(scaled(test.timeout()));
  },
  async afterAll(): Promise<void> {
    await closeSharedWorkbenches();
    if (process.env.MOCHA_WORKER_ID === undefined) await closeChromium();
  },
};
