// snapshot.json, version 5 (disk/snapshotFile.ts): the run's end in front, then a deflated spare copy and
// the plain copy of its frames. One damage anywhere — a bit flip, a zeroed or overwritten 4 KB block, a
// block cut out, the file cut short after its spare copy — loses nothing and is reported, and the end
// read alone is either whole or refused; damage to the same chunk in both copies is refused naming the
// file and the chunk; a reader of version 2 refuses the file as newer instead of taking it for damage.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../../../src/store/api/errors';
import type { RawCommit } from '../../../src/store/disk/commit';
import { decodeEnvelope } from '../../../src/store/disk/durableFile';
import { encodeFrame, scanFrames } from '../../../src/store/disk/segment';
import {
  decodeSnapshot,
  encodeSnapshot,
  endFrameBytes,
  isFramedSnapshot,
  readEndFrame,
  SNAPSHOT_VERSION,
} from '../../../src/store/disk/snapshotFile';
import * as h from './helpers';

const FILE = 'runs/r1/snapshot.json';
const meta = h.runMeta({ thread_id: 't1', continued_from: null });

/** (fast-check's records have no prototype: what is compared is what JSON holds) */
function commit(ops: unknown[]): RawCommit {
  return { run_id: 'r1', first: 1, last: ops.length, meta, witnessed: true, ops: JSON.parse(JSON.stringify(ops)) };
}

/** Ops of varied sizes (some non-ASCII), so chunks split at different places. */
const opsArb = fc.array(
  fc.record({ op: fc.constant('inbox'), n: fc.nat(), text: fc.string({ unit: 'grapheme', maxLength: 600 }) }),
  { minLength: 1, maxLength: 60 },
);

/** The run's end kept in front (any JSON; undefined: none written). */
const endArb = fc.option(
  fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown),
  { nil: undefined },
);

type Damage = { how: 'flip' | 'zero' | 'garbage' | 'cut' | 'truncate'; at: number; bit: number; bytes: number[] };

/** Where the spare copy ends (the gap between the copies begins). */
const spareEnd = (buf: Buffer) => buf.indexOf(' '.repeat(4095));

function damage(buf: Buffer, d: Damage): Buffer {
  const b = Buffer.from(buf);
  const gap = spareEnd(b);
  const at = d.how === 'truncate' ? gap + (d.at % (b.length - gap)) : d.at % b.length;
  const end = Math.min(b.length, at + 4096);
  switch (d.how) {
    case 'flip':
      b[at] = b[at]! ^ (1 << d.bit);
      return b;
    case 'zero':
      return b.fill(0, at, end);
    case 'garbage':
      for (let i = at; i < end; i++) b[i] = d.bytes[i % d.bytes.length]!;
      return b;
    case 'cut':
      return Buffer.concat([b.subarray(0, at), b.subarray(end)]);
    case 'truncate':
      return b.subarray(0, at);
  }
}

const damageArb: fc.Arbitrary<Damage> = fc.record({
  how: fc.constantFrom('flip', 'zero', 'garbage', 'cut', 'truncate'),
  at: fc.nat(),
  bit: fc.integer({ min: 0, max: 7 }),
  bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 64 }),
});

describe('store: the snapshot file (a deflated spare copy and the plain copy)', () => {
  it('reads back exactly what was written, from the plain copy, with nothing to report', async () => {
    await fc.assert(
      fc.asyncProperty(opsArb, fc.integer({ min: 64, max: 4096 }), endArb, async (ops, chunk, end) => {
        const raw = commit(ops);
        const buf = await encodeSnapshot(raw, chunk, end);
        assert.ok(isFramedSnapshot(buf));
        const r = decodeSnapshot(buf, FILE, 'r1');
        assert.equal(r.damaged, null);
        assert.deepEqual(r.raw, raw);
        // The end, from the file's first bytes alone: as many as its first 512 say.
        const need = endFrameBytes(buf.subarray(0, 512));
        if (end === undefined) assert.equal(need, null);
        else {
          assert.ok(need !== null && need < buf.length);
          assert.deepEqual(readEndFrame(buf.subarray(0, need), 'r1'), { last: raw.last, value: end });
          assert.equal(readEndFrame(buf.subarray(0, need - 1), 'r1'), null, 'cut short: none');
          assert.equal(readEndFrame(buf.subarray(0, need), 'r2'), null, "another run's: none");
        }
      }),
      { numRuns: 100 },
    );
  });

  it('one damage anywhere (bit flip, 4 KB zeroed, overwritten or cut out, cut short after the spare copy) loses nothing and is said; the end alone is whole or refused', async () => {
    await fc.assert(
      fc.asyncProperty(opsArb, fc.integer({ min: 64, max: 4096 }), endArb, damageArb, async (ops, chunk, end, d) => {
        const raw = commit(ops);
        const good = await encodeSnapshot(raw, chunk, end);
        const bad = damage(good, d);
        fc.pre(!bad.equals(good)); // garbage can rewrite the same bytes
        const r = decodeSnapshot(bad, FILE, 'r1');
        assert.deepEqual(r.raw, raw);
        assert.ok(r.damaged, `the damage is reported (${d.how} at ${d.at})`);
        const need = endFrameBytes(bad.subarray(0, 512));
        const got = need === null ? null : readEndFrame(bad.subarray(0, need), 'r1');
        if (got !== null) assert.deepEqual(got, { last: raw.last, value: end }, 'never a damaged end');
      }),
      { numRuns: 500 },
    );
  });

  it('a chunk damaged in both copies is refused, naming the file and the chunk — never read as fewer records', async () => {
    const ops = Array.from({ length: 40 }, (_, n) => ({ op: 'inbox', n, text: 'x'.repeat(200) }));
    const buf = await encodeSnapshot(commit(ops), 1024);
    const chunk3 = scanFrames(buf, 0).filter((f) => (f.value as { i?: number }).i === 3);
    assert.equal(chunk3.length, 2, 'chunk 3 is in the spare copy and in the plain one');
    const bad = Buffer.from(buf);
    for (const f of chunk3) bad[f.start + 20] = 0x21;
    assert.throws(
      () => decodeSnapshot(bad, FILE, 'r1'),
      (err: unknown) =>
        err instanceof AgentCheckpointCorruptionError &&
        err.file === FILE &&
        /chunk 3 of \d+ is damaged in both copies/.test(err.message),
    );
    // one of the two alone: nothing lost
    const one = Buffer.from(buf);
    one[chunk3[1]!.start + 20] = 0x21;
    assert.deepEqual(decodeSnapshot(one, FILE, 'r1').raw, commit(ops));
  });

  it('the spare copy costs a fraction of the plain one', async () => {
    const ops = Array.from({ length: 400 }, (_, n) => ({
      op: 'record',
      record: {
        seq: n + 1,
        phase: 'post_llm',
        payload: { text: `step ${n}: ${'the model said something '.repeat(8)}` },
      },
    }));
    const buf = await encodeSnapshot(commit(ops));
    const frames = scanFrames(buf, 0);
    const spare = frames
      .filter((f) => (f.value as { z?: string }).z !== undefined)
      .reduce((n, f) => n + f.end - f.start, 0);
    const plain = frames
      .filter((f) => Array.isArray((f.value as { ops?: unknown }).ops))
      .reduce((n, f) => n + f.end - f.start, 0);
    assert.ok(spare < plain / 3, `spare ${spare} B, plain ${plain} B`);
  });

  it('a file of another run, or one made of frames that are no snapshot, is corruption', async () => {
    const buf = await encodeSnapshot(commit([{ op: 'inbox' }]));
    assert.throws(() => decodeSnapshot(buf, FILE, 'r2'), AgentCheckpointCorruptionError);
    assert.throws(
      () => decodeSnapshot(Buffer.concat([encodeFrame({ hello: 1 }), encodeFrame({ i: 0, ops: [] })]), FILE, 'r1'),
      /no copy of its header frame checks out/,
    );
  });

  it('a newer version is refused as newer; a reader of version 2 refuses this one as newer, not as damage', async () => {
    const buf = await encodeSnapshot(commit([{ op: 'inbox' }]));
    const header = encodeFrame({
      ...JSON.parse('{}'),
      snapshot: SNAPSHOT_VERSION + 1,
      run_id: 'r1',
      first: 1,
      last: 1,
      meta,
      chunks: 0,
      ops: 0,
    });
    assert.throws(() => decodeSnapshot(Buffer.concat([Buffer.from('x\n'), header]), FILE, 'r1'), SchemaVersionError);
    // what version 2's reader does with the first bytes of the file (disk/durableFile.ts, at version 2)
    assert.throws(() => decodeEnvelope(buf, FILE, 'commit', 'r1'), SchemaVersionError);
  });
});
