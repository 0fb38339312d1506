// Property tests: the memory backend against a simple model (fast-check model-based commands), and
// disk against memory: the same random operation sequence gives the same answers and the same runs
// (agreement.ts; pg/properties.int.test.ts runs the same property for PostgreSQL).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fc from 'fast-check';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import type { CheckpointStore } from '../../../src/store/api/types';
import { CheckpointNotFoundError } from '../../../src/store/api/errors';
import { CREATE_ALL, Driver, Model, opArb, runIdOf, type Op } from './ops';
import { agreesWithMemory, assertExercised } from './agreement';
import * as h from './helpers';

/** The store holds exactly what the model says: seqs, state, snapshots, approvals, effects. */
async function matches(m: Model, s: CheckpointStore): Promise<void> {
  for (const [i, r] of m.runs) {
    const id = runIdOf(i);
    const sum = await s.getRun(id);
    assert.equal(sum?.last_seq, r.seqs, `${id} last_seq`);
    assert.equal(sum?.state, r.state, `${id} state`);
    if (r.seqs === 0) await h.rejects(s.latest(id), CheckpointNotFoundError);
    else assert.equal((await s.latest(id)).seq, r.seqs);
    for (const [seq, count] of r.snapshots) {
      const snap = await s.loadSnapshot(id, seq);
      assert.equal(snap.record.seq, seq);
      assert.equal(snap.snapshot.messages.length, count, `${id} snapshot ${seq}`);
    }
    const approvals = Object.fromEntries(
      (await s.listApprovals(id)).map((a) => [a.tool_call_id, a.decision?.kind ?? 'pending']),
    );
    assert.deepEqual(approvals, Object.fromEntries([...r.approvals].map(([c, v]) => [`c${c}`, v])));
    assert.equal(sum?.pending_approvals, [...r.approvals.values()].filter((v) => v === 'pending').length);
    const effects = Object.fromEntries(
      (await s.listEffects(id)).map((e) => [e.tool_call_id, e.result?.output ?? 'intent']),
    );
    assert.deepEqual(effects, Object.fromEntries([...r.effects].map(([c, v]) => [`c${c}`, v])));
  }
}

class OpCommand implements fc.AsyncCommand<Model, Driver> {
  constructor(readonly op: Op) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, d: Driver): Promise<void> {
    const expected = m.apply(this.op);
    const got = await d.apply(this.op);
    assert.deepEqual(got, expected, `${JSON.stringify(this.op)}`);
    await matches(m, d.store);
  }
  toString(): string {
    return JSON.stringify(this.op);
  }
}

describe('store: properties', function () {
  this.timeout(120_000);

  it('memory backend follows the model for any command sequence (fc.commands)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.commands([opArb.map((op) => new OpCommand(op))], { maxCommands: 40, size: 'max' }),
        async (cmds) => {
          const disk = new MemoryDisk();
          const d = new Driver(await openMemoryStore({ disk }), () => openMemoryStore({ disk }));
          const model = new Model();
          for (const op of CREATE_ALL) assert.deepEqual(await d.apply(op), model.apply(op));
          await fc.asyncModelRun(() => ({ model, real: d }), cmds);
          await d.store.close();
        },
      ),
      { numRuns: 150, seed: 20240601 },
    );
  });

  it('disk and memory agree after the same random sequence, and disk still agrees after a reopen', async () => {
    const done = await agreesWithMemory(
      () => {
        const dir = h.tmpDir('aw-prop-');
        return {
          open: (now) => openDiskStoreReady(dir, { now }),
          cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
        };
      },
      { numRuns: 40, seed: 7 },
    );
    assertExercised(done);
  });

  it('disk with a resume point after every commit agrees with memory: a run acquired again goes on from its point, its resume snapshot holds what was written (holes where it says), and what needs the rest reads the run whole', async () => {
    const done = await agreesWithMemory(
      () => {
        const dir = h.tmpDir('aw-prop-points-');
        return {
          open: (now) => openDiskStoreReady(dir, { now, resumePoints: { from: 0, every: 0 } }),
          cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
        };
      },
      { numRuns: 40, seed: 11, resumeChecks: true },
    );
    assertExercised(done);
  });
});
