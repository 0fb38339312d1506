// The scale run's write amplification (bench/summarize.ts): a step's bytes less what a background
// compaction and the room written ahead wrote during it, per step and over two consecutive steps.
import * as assert from 'node:assert/strict';
import type { RunSamples } from '../../../bench/measure';
import type { StepSample } from '../../../bench/sample';
import { contenderFigures } from '../../../bench/summarize';

function step(step: number, bytes: number, extra: Partial<StepSample> = {}): StepSample {
  return {
    step,
    ms: 1,
    bytes,
    processBytes: null,
    pageBytes: null,
    durableWrites: 1,
    leadBarriers: 0,
    sideEffects: false,
    compactionBytes: 0,
    roomBytes: 0,
    pointBytes: 0,
    ...extra,
  };
}

function samples(contentBytes: number[], steps: StepSample[]): RunSamples {
  return { steps: steps.length, contentBytes, byContender: { ours: steps }, primitive: [], startBytes: {} };
}

describe('bench: write amplification of the steps', () => {
  it('leaves out the room, the resume points and the compaction, and takes two consecutive steps together', () => {
    const f = contenderFigures(
      [
        samples(
          [1000, 8000, 2000, 2000, 1000],
          [
            // 128 KiB of room written ahead at the first step
            step(1, 1000 + 131072, { roomBytes: 131072 }),
            // a large result, its last part left for the next step's barrier
            step(2, 6000),
            // that part lands here, against this step's small content
            step(3, 2000 + 4000),
            step(4, 2200 + 50_000, { compactionBytes: 50_000 }),
            // a resume point (400 KB) written while the model answered
            step(5, 1100 + 400_000, { pointBytes: 400_000 }),
          ],
        ),
      ],
      'ours',
      [2],
    );
    // (with the room and the points: the point's step)
    assert.deepEqual(f.maxAmplificationWithoutCompaction, { value: 401.1, step: 5 });
    assert.deepEqual(f.maxAmplificationOwn, { value: 3, step: 3 });
    // steps 2 and 3: 12,000 bytes over 10,000 of content; steps 3 and 4: 8,200 over 4,000
    assert.deepEqual(f.maxAmplificationOwnPair, { value: 8200 / 4000, step: 4 });
    assert.deepEqual(f.room, { steps: 1, bytes: 131072 });
    assert.deepEqual(f.compaction, { steps: 1, bytes: 50_000 });
    assert.deepEqual(f.resumePoints, { steps: 1, bytes: 400_000 });
  });
});
