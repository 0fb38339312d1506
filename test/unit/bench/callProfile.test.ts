// bench:calls --profile: only the samples inside the calls' spans count, by where the time was spent.
import * as assert from 'node:assert/strict';
import { selfTimeIn, type Profile, type Span } from '../../../bench/callProfile';

const ROOT = '/repo';
const frame = (id: number, functionName: string, url: string) => ({
  id,
  callFrame: { functionName, scriptId: String(id), url, lineNumber: 0, columnNumber: 0 },
});

/** Samples at 100, 200, …, 800 µs: node 1 (root), 2 encode (codec.ts), 3 stat (native), 4 an anonymous function (writer.ts). */
const profile: Profile = {
  nodes: [
    { ...frame(1, '(root)', ''), children: [2, 3, 4] },
    frame(2, 'encodeOps', 'file:///repo/src/store/disk/codec.ts'),
    frame(3, 'stat', ''),
    frame(4, '', 'file:///repo/src/store/core/writer.ts'),
  ],
  startTime: 0,
  endTime: 900,
  samples: [2, 2, 3, 4, 2, 3, 3, 4],
  timeDeltas: [100, 100, 100, 100, 100, 100, 100, 100],
};

const span = (from: number, to: number): Span => [from, to];

describe('bench:calls --profile (selfTimeIn)', () => {
  it('counts only the samples inside the spans, as shares by file and by function', () => {
    // 150–450 µs holds the samples at 200, 300, 400 (encode, stat, anonymous); 700–800 holds 700, 800 (stat, anonymous).
    assert.deepEqual(selfTimeIn(profile, [span(700, 800), span(150, 450)], ROOT), {
      samples: 5,
      byFile: [
        ['(native)', 2 / 5],
        ['src/store/core/writer.ts', 2 / 5],
        ['src/store/disk/codec.ts', 1 / 5],
      ],
      byFunction: [
        ['stat ((native))', 2 / 5],
        ['(anonymous) (src/store/core/writer.ts)', 2 / 5],
        ['encodeOps (src/store/disk/codec.ts)', 1 / 5],
      ],
    });
  });

  it('counts a sample stamped before the one ahead of it (a negative delta) in its own span', () => {
    // Samples at 100, 400, 250 (the delta −150), 500: encode, stat, anonymous, encode.
    const outOfOrder: Profile = { ...profile, samples: [2, 3, 4, 2], timeDeltas: [100, 300, -150, 250] };
    const t = selfTimeIn(outOfOrder, [span(200, 300), span(350, 450)], ROOT);
    assert.deepEqual(t.byFunction, [
      ['stat ((native))', 1 / 2],
      ['(anonymous) (src/store/core/writer.ts)', 1 / 2],
    ]);
  });

  it('gives nothing, not a division by zero, when no sample falls inside a span', () => {
    assert.deepEqual(selfTimeIn(profile, [span(810, 890)], ROOT), { samples: 0, byFile: [], byFunction: [] });
  });
});
