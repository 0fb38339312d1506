// bench:ab compares two stores step by step: the paired differences, not the difference of the medians.
import * as assert from 'node:assert/strict';
import { paired } from '../../../bench/stats';

describe('bench:ab (paired)', () => {
  it('takes the median of the differences of each pair, and the share of pairs a won', () => {
    // The medians differ by 0 (both 2), but a is 1 ms faster in two pairs of three.
    assert.deepEqual(paired([1, 2, 5], [2, 3, 2]), { medianA: 2, medianB: 2, medianDiff: -1, fasterShare: 2 / 3 });
  });

  it('refuses samples that are not pairs', () => {
    assert.throws(() => paired([1, 2], [1]), /unequal length \(2, 1\)/);
  });
});
