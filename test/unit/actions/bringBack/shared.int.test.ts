// The hand-off as it is meant: a worker runs the run in its own checkout on the shared PostgreSQL
// store (the throwaway cluster), and the user's checkout — another store connection, as another
// machine — brings its work back: the files arrive exactly, the record is visible to the worker's
// connection, and the worker's checkout is left alone (its own restore still sees only its journal).
import assert from 'node:assert/strict';
import { pgWorkspace } from '../../store/pg/support';
import { read, same } from '../../runner/files/journalSupport';
import { checkoutActions, PATHS, ranElsewhere } from './support';

describe('bring back over the shared store (postgres)', function () {
  this.timeout(120_000);
  const pg = pgWorkspace('bring-back');
  after(() => pg.closeAll());

  it("a worker's run is brought into another machine's checkout exactly", async () => {
    const worker = await pg.open();
    const { a, b, runId } = await ranElsewhere(worker);
    const laptop = await pg.open();
    const record = (await checkoutActions(laptop, b).actions.bringBack.run(runId))!;
    const [inA, inB] = [read(a, PATHS), read(b, PATHS)];
    for (const p of PATHS) assert.ok(same(inA.get(p), inB.get(p)), `${p} as the worker left it`);
    assert.deepEqual(
      (await worker.listRestores(runId)).map((r) => r.id),
      [record.id],
      "the worker's connection sees the record",
    );
    const restoreInA = await checkoutActions(worker, a).actions.restore.plan(runId, 1);
    assert.deepEqual(new Set(restoreInA.files.map((f) => f.action)), new Set(['revert']));
  });
});
