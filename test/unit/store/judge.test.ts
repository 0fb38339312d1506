// Recovery's judgement (disk/damage.ts, pure): over every shape of what reading a run's files can find,
// acknowledged data that is gone is always reported — never taken for a run being created or a crash —
// and no byte is cut, rewritten or removed before it is kept in quarantine, but for the two that are
// not data (a torn tail a valid witness never counted, a segment a checked snapshot covers).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { judge, type Findings, type RepairOp } from '../../../src/store/disk/damage';
import type { WitnessRead } from '../../../src/store/disk/witness';

const W = 'runs/r/witness';
const SNAP = 'runs/r/snapshot.json';

const witnessRead: fc.Arbitrary<WitnessRead> = fc.oneof(
  fc.constant<WitnessRead>({ kind: 'missing' }),
  fc.constant<WitnessRead>({ kind: 'missing', empty: true }),
  fc.constant<WitnessRead>({ kind: 'bad', reason: 'no slot passes its checksum' }),
  fc
    .record({
      commits: fc.integer({ min: 0, max: 30 }),
      intents: fc.integer({ min: 0, max: 5 }),
      damaged: fc.option(fc.constant('slot 1 fails its checksum'), { nil: null }),
    })
    .map(({ commits, intents, damaged }): WitnessRead => ({
      kind: 'ok',
      witness: { commits, seq: commits * 2, step: commits, state: 'running', intents, results: intents, ms: 1 },
      damaged,
    })),
);

const findings: fc.Arbitrary<Findings> = fc
  .record({
    segments: fc.array(
      fc.record({
        headerBad: fc.option(fc.constantFrom('it has no header frame', 'it belongs to run q'), { nil: null }),
        mended: fc.option(fc.constant({ reason: 'a bit flipped', kept: 'corrected' }), { nil: null }),
        covered: fc.boolean(),
        used: fc.boolean(),
      }),
      { maxLength: 3 },
    ),
    snapshot: fc.record({
      present: fc.boolean(),
      bad: fc.option(fc.constant('unreadable'), { nil: null }),
      mended: fc.option(fc.constant('one copy bad'), { nil: null }),
    }),
    next: fc.integer({ min: 1, max: 25 }),
    stop: fc.option(
      fc.record({
        at: fc.integer({ min: -1, max: 2 }),
        frameAt: fc.integer({ min: 0, max: 9999 }),
        torn: fc.boolean(),
        headless: fc.boolean(),
        copy: fc.boolean(),
      }),
      { nil: null },
    ),
    file: witnessRead,
    area: fc.option(witnessRead, { nil: null }),
    indexCommits: fc.integer({ min: 0, max: 30 }),
    repair: fc.boolean(),
  })
  .map((x): Findings => {
    const segments = x.segments.map((s, i) => ({ ...s, file: `runs/r/segment-${i + 1}.log` }));
    const inSeg = x.stop && x.stop.at >= 0 && x.stop.at < segments.length ? x.stop.at : null;
    const stop = x.stop && {
      file: inSeg === null ? SNAP : segments[inSeg]!.file,
      reason: 'what was wrong',
      segment: inSeg,
      frameAt: x.stop.frameAt,
      torn: x.stop.torn,
      // (only a segment can lack its header)
      headless: inSeg !== null && x.stop.headless,
      copy: x.stop.copy,
    };
    if (stop?.headless) segments[stop.segment!]!.headerBad ??= 'it has no header frame';
    return {
      runId: 'r',
      segments,
      snapshot: { file: SNAP, ...x.snapshot, bad: x.snapshot.present ? x.snapshot.bad : null },
      next: x.next,
      stop,
      witnessFile: { file: W, read: x.file },
      witnessArea: x.area && segments.length > 0 ? { file: segments.at(-1)!.file, read: x.area } : null,
      indexCommits: x.indexCommits,
      repair: x.repair,
    };
  });

/** The commits any witness (the file, the segment's area, the index) says were acknowledged. */
function acknowledged(f: Findings): number {
  const ok = (w: WitnessRead | undefined) => (w?.kind === 'ok' ? w.witness.commits : 0);
  return Math.max(f.indexCommits, ok(f.witnessFile.read), ok(f.witnessArea?.read));
}

const destroys = (op: RepairOp) => op.op === 'truncate' || op.op === 'rewrite' || op.op === 'retire';

describe('store: judging damage (what is lost, what to keep, what to do)', () => {
  it('acknowledged commits that are gone are always reported as lost, never as a crash or a run being created', () =>
    fc.assert(
      fc.property(findings, (f) => {
        const v = judge(f);
        const stopIsCrash = f.stop?.torn === true && acknowledged(f) < f.next;
        if (acknowledged(f) >= f.next || (f.stop && !f.stop.torn)) assert.notEqual(v.lost, null, 'reported as lost');
        if (stopIsCrash) assert.equal(v.lost, null, 'a crash is not damage');
        if (v.lost !== null) {
          assert.equal(v.reports[v.lost]!.kept, null);
          assert.equal(v.rewriteWitness, true, 'the witness is made to match what the log now holds');
        }
      }),
      { numRuns: 3000 },
    ));

  it('nothing is cut, rewritten or removed before it is kept in quarantine, but for what is not data', () =>
    fc.assert(
      fc.property(findings, (f) => {
        const v = judge(f);
        v.plan.forEach((op, i) => {
          const kept = v.plan.slice(0, i).some((o) => (o.op === 'copy' || o.op === 'move') && o.file === op.file);
          const movedBefore = v.plan.slice(0, i).some((o) => o.op === 'move' && o.file === op.file);
          assert.ok(!movedBefore, `nothing is done to ${op.file} once it is moved away`);
          if (!destroys(op) || kept) return;
          if (op.op === 'retire')
            assert.ok(
              f.segments.find((s) => s.file === op.file)?.covered,
              'only a segment the snapshot covers is retired',
            );
          else
            assert.ok(
              op.op === 'truncate' && v.lost === null && v.witness !== null && f.stop?.torn,
              `${op.op} of ${op.file} without a copy: only a torn tail a valid witness never counted`,
            );
        });
        for (const op of v.plan)
          if (op.op === 'copy' || op.op === 'move') assert.ok(op.report === null || op.report < v.reports.length);
      }),
      { numRuns: 3000 },
    ));

  it('a damaged or missing witness is written again, from the log or the other witness', () =>
    fc.assert(
      fc.property(findings, (f) => {
        const v = judge(f);
        const w = f.witnessFile.read;
        if (w.kind !== 'ok' || w.damaged || (f.witnessArea?.read.kind === 'ok' && f.witnessArea.read.damaged))
          assert.equal(v.rewriteWitness, true);
        if (w.kind === 'bad')
          assert.ok(
            v.plan.some((o) => o.op === 'move' && o.file === W),
            'a bad witness file is kept',
          );
      }),
      { numRuns: 2000 },
    ));
});
