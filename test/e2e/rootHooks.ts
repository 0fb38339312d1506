// Mocha root hooks of the e2e suite (.mocharc.e2e.cjs `require`): each test's time limit — the rc's
// default or its suite's — is scaled to the machine's load when the test starts (a test that sets its
// own limit scales it too, through `scaled`). After all files, any shared workbench a filtered run left
// open is closed.
import type { Context } from 'mocha';
import { scaled } from '../support/timeScale';
import { closeSharedWorkbenches } from './shared';

export const mochaHooks = {
  beforeEach(this: Context): void {
    const test = this.currentTest;
    if (test) test.timeout(scaled(test.timeout()));
  },
  async afterAll(): Promise<void> {
    await closeSharedWorkbenches();
  },
};
