// The agreement property: a backend and the memory backend given the same random operation sequence
// give the same answers and hold the same runs, also after the backend is reopened. model.int.test.ts
// runs it for disk, pg/properties.int.test.ts for PostgreSQL.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import type { CheckpointStore } from '../../../src/store/api/types';
import { CREATE_ALL, Driver, opArb } from './ops';

export interface AgreementBackend {
  /** Opens the backend under test (again: the same backing) with the shared clock. */
  open(now: () => number): Promise<CheckpointStore>;
  cleanup(): void | Promise<void>;
}

/** Runs the property; resolves to how many successful ops of each kind were compared. */
export async function agreesWithMemory(
  backend: () => AgreementBackend,
  o: { numRuns: number; seed: number; resumeChecks?: boolean },
): Promise<Record<string, number>> {
  const checks = o.resumeChecks ?? false;
  const done: Record<string, number> = {};
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 35, size: 'max' }), async (ops) => {
      const b = backend();
      let t = 1_700_000_000_000;
      const now = () => t; // advanced per op: both stores see the same time however often they ask
      const disk = new MemoryDisk();
      const mem = new Driver(await openMemoryStore({ disk, now }), () => openMemoryStore({ disk, now }), checks);
      const other = new Driver(await b.open(now), () => b.open(now), checks);
      try {
        for (const op of [...CREATE_ALL, ...ops]) {
          t += 1_000;
          const out = await other.apply(op);
          assert.deepEqual(out, await mem.apply(op), JSON.stringify(op));
          if (out.ok) done[op.t] = (done[op.t] ?? 0) + 1;
        }
        await mem.store.flush();
        await other.store.flush();
        const runs = async (s: CheckpointStore) => (await s.listRuns({ limit: 100 })).runs;
        const exports = async (s: CheckpointStore) => Promise.all((await runs(s)).map((r) => s.exportRun(r.run_id)));
        assert.deepEqual(await runs(other.store), await runs(mem.store));
        const expected = await exports(mem.store);
        assert.deepEqual(await exports(other.store), expected);
        await other.store.close();
        const reopened = await b.open(now);
        assert.deepEqual(await exports(reopened), expected);
        await reopened.close();
      } finally {
        await mem.store.close().catch(() => undefined);
        await other.store.close().catch(() => undefined);
        await b.cleanup();
      }
    }),
    { numRuns: o.numRuns, seed: o.seed },
  );
  return done;
}

export function assertExercised(done: Record<string, number>): void {
  console.log(`      successful ops compared: ${JSON.stringify(done)}`);
  for (const t of ['create', 'append', 'request', 'decide', 'intent', 'result', 'withdraw', 'acquire', 'reopen'])
    assert.ok((done[t] ?? 0) > 3, `${t} exercised`);
}
