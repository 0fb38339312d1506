import assert from 'node:assert/strict';
import { formatBytes, relativeTime } from '../../../src/views/runs/format';

describe('views: formatting', () => {
  it('formats byte counts the way the file explorer does', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.5 KB');
    assert.equal(formatBytes(200 * 1024), '200 KB');
    assert.equal(formatBytes(12.7 * 1024 * 1024), '12.7 MB');
    assert.equal(formatBytes(3 * 1024 ** 4), '3.0 TB');
  });

  it('says how long ago, briefly', () => {
    const now = 1_800_000_000_000;
    assert.equal(relativeTime(now - 5_000, now), 'just now');
    assert.equal(relativeTime(now - 3 * 60_000, now), '3m ago');
    assert.equal(relativeTime(now - 5 * 3_600_000, now), '5h ago');
    assert.equal(relativeTime(now - 3 * 86_400_000, now), '3d ago');
    assert.equal(relativeTime(now + 60_000, now), 'just now', 'a clock running behind is not "in the future"');
  });
});
