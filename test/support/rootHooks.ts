// Mocha root hooks of the unit suite (.mocharc.unit.json `require`): the shared PostgreSQL cluster
// starts on first use (test/support/postgres.ts) and stops here, once, after every test.
import { stopSharedPostgres } from './postgres';

export const mochaHooks = {
  afterAll(): void {
    stopSharedPostgres();
  },
};
