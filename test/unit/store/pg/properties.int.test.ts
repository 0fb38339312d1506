// The store's agreement property, unchanged, for PostgreSQL: the same random operation sequences as
// disk (agreement.ts), each in a workspace of its own on the shared throwaway cluster.
import { openPgStoreReady } from '../../../../src/store/pg/store';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import { agreesWithMemory, assertExercised } from '../agreement';

describe('store: properties (postgres)', function () {
  this.timeout(180_000);

  it('postgres and memory agree after the same random sequence, and postgres still agrees after a reopen', async () => {
    const url = sharedPostgres().url();
    const done = await agreesWithMemory(
      () => {
        const workspace = freshWorkspace('prop');
        return { open: (now) => openPgStoreReady({ connectionString: url, workspace, now }), cleanup: () => undefined };
      },
      { numRuns: 25, seed: 7 },
    );
    assertExercised(done);
  });
});
