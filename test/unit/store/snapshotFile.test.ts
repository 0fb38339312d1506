// snapshot.json (disk/snapshotFile.ts): the run's end in front, then a deflated spare copy and the plain
// copy of its frames, its long strings in raw frames after it. One damage anywhere — a bit flip, a
// zeroed or overwritten 4 KB block, a block cut out, the file cut short after its spare copy — loses
// nothing and is reported, and the end read alone is either whole or refused; damage to the same chunk
// in both copies is refused naming the file and the chunk; another version is refused, not damage.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AgentCheckpointCorruptionError, SchemaVersionError } from '../../../src/store/api/errors';
import type { RawCommit } from '../../../src/store/disk/commit';
import { encodeFrame, RawBody, readFrame, scanFrames } from '../../../src/store/disk/frame';
import {
  decodeSnapshot,
  encodeSnapshot,
  endFrameBytes,
  RAW_MIN,
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

/**
 * Long strings (written raw): mostly latin1 characters — quotes, backslashes, newlines,
 * é, ÿ, NUL, `~`, digits, what a frame header is made of — some ending in a tab or a character above
 * U+00FF (those stay in the JSON).
 */
const longArb = fc
  .tuple(
    fc.array(fc.constantFrom('a', ' ', '\n', '\r', '"', '\\', '\u00e9', '\u00ff', '\u0000', '~', '7', 'f', '{', '}'), {
      minLength: RAW_MIN - 20,
      maxLength: 900,
    }),
    fc.constantFrom('', '', '', '\t', '\u2713'),
  )
  .map(([cs, tail]) => cs.join('') + tail);

/** Ops of varied sizes (some non-ASCII, some with long strings, nested), so chunks split at different places. */
const opsArb = fc.array(
  fc.record({
    op: fc.constant('inbox'),
    n: fc.nat(),
    text: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 600 }), longArb),
    more: fc.option(fc.array(fc.record({ content: longArb, k: fc.nat() }), { maxLength: 3 }), { nil: undefined }),
  }),
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

  it('long strings are written raw, out of the plain copy’s JSON (no tab in any raw frame); a chunk whose raw frame is damaged is read from the spare', async () => {
    const latin1 = `caf\u00e9 "quoted" \\ back\nslash\r ~1~ 12\u00ff `.repeat(20);
    const tabbed = `a\tb `.repeat(100);
    const wide = `\u2713 `.repeat(200);
    const ops = Array.from({ length: 30 }, (_, n) => ({
      op: 'inbox',
      n,
      text: n % 3 === 0 ? latin1 : n % 3 === 1 ? tabbed : wide,
      list: [{ content: `${n} ${latin1}` }],
    }));
    const raw = commit(ops);
    const buf = await encodeSnapshot(raw, 2048);
    const frames = scanFrames(buf, 0, { raw: true });
    const raws = frames.filter((f) => f.value instanceof RawBody);
    const chunks = frames.filter((f) => Array.isArray((f.value as { ops?: unknown }).ops));
    assert.equal(
      raws.length,
      chunks.filter((f) => (f.value as { raw?: unknown }).raw).length,
      'a raw frame per chunk with long strings',
    );
    assert.ok(raws.length > 3);
    for (const f of raws)
      assert.ok(
        !buf.subarray(f.start, f.end).toString('latin1').split('\t').slice(2).join('').includes('\t'),
        'no tab in a raw body',
      );
    const plainJson = chunks.map((f) => buf.toString('latin1', f.start, f.end)).join('');
    assert.ok(!plainJson.includes('caf\\u00e9 \\"quoted'), 'the latin1 strings are not in the plain JSON');
    assert.ok(
      plainJson.includes('a\\tb a\\tb') && plainJson.includes('\\u2713 \\u2713'),
      'tabs and wide characters stay in it',
    );
    assert.ok(buf.includes(Buffer.from(latin1, 'latin1')), 'written as their bytes');
    assert.deepEqual(decodeSnapshot(buf, FILE, 'r1'), { raw, history: null, damaged: null });
    // one raw frame damaged: its chunk from the spare, the rest from the plain copy, nothing lost
    for (const [k, f] of raws.entries()) {
      const bad = Buffer.from(buf);
      bad[f.end - 5] = bad[f.end - 5]! ^ 0x20;
      const r = decodeSnapshot(bad, FILE, 'r1');
      assert.deepEqual(r.raw, raw, `raw frame ${k} damaged`);
      assert.match(r.damaged ?? '', /checksum mismatch/);
    }
    // a raw frame and its chunk's spare both damaged: that chunk is lost, and said
    const spare = frames.find((f) => (f.value as { i?: number; z?: string }).i === 0 && (f.value as { z?: string }).z);
    const both = Buffer.from(buf);
    both[spare!.end - 5] = 0x21;
    both[raws[0]!.end - 5] = both[raws[0]!.end - 5]! ^ 0x20;
    assert.throws(() => decodeSnapshot(both, FILE, 'r1'), /chunk 0 of \d+ is damaged in both copies/);
  });

  it('a frame planted in a long string is never taken for one, whatever else is damaged', async () => {
    // A tool's output that holds a whole chunk frame: its tabs keep it in the JSON, escaped.
    const planted = encodeFrame({ i: 0, ops: [{ op: 'inbox', n: 666, text: 'planted' }] }).toString('latin1');
    const ops = [
      { op: 'inbox', n: 0, text: `${planted}${'x'.repeat(RAW_MIN)}` },
      { op: 'inbox', n: 1, text: 'y'.repeat(RAW_MIN) },
    ];
    const raw = commit(ops);
    const buf = await encodeSnapshot(raw, 64);
    assert.ok(!buf.includes(Buffer.from(planted, 'latin1')), 'not as its bytes');
    // every frame of the file damaged in turn: the planted one never read
    for (const f of scanFrames(buf, 0, { raw: true })) {
      const bad = Buffer.from(buf);
      bad[f.end - 2] = bad[f.end - 2]! ^ 0x01;
      try {
        assert.deepEqual(decodeSnapshot(bad, FILE, 'r1').raw, raw);
      } catch (e) {
        assert.ok(e instanceof AgentCheckpointCorruptionError, String(e));
      }
    }
  });

  it('a long string under a `__proto__` key, or as an op of its own, reads back as a key and a string', async () => {
    const long = 'p'.repeat(RAW_MIN + 1);
    const ops = JSON.parse(
      `[{"op":"inbox","payload":{"__proto__":"${long}","x":["${long}",{"__proto__":{"y":"${long}"}}]}},"${long}"]`,
    );
    const raw = commit(ops);
    const buf = await encodeSnapshot(raw);
    assert.equal(scanFrames(buf, 0, { raw: true }).filter((f) => f.value instanceof RawBody).length, 1);
    const back = decodeSnapshot(buf, FILE, 'r1').raw;
    assert.deepEqual(back, raw);
    assert.equal(JSON.stringify(back.ops), JSON.stringify(raw.ops));
    const payload = (back.ops[0] as { payload: object }).payload;
    assert.equal(Object.getPrototypeOf(payload), Object.prototype, 'the prototype is untouched');
    assert.ok(Object.hasOwn(payload, '__proto__'));
    // a raw list that points elsewhere than a placeholder is refused (the chunk is read from the spare)
    const f = scanFrames(buf, 0).find((x) => Array.isArray((x.value as { raw?: unknown }).raw))!;
    const v = f.value as { i: number; ops: unknown[]; raw: unknown[] };
    const forged = encodeFrame({ ...v, raw: [[RAW_MIN + 1, 0, 'op']] });
    const patched = Buffer.concat([buf.subarray(0, f.start), forged, buf.subarray(f.end)]);
    assert.ok(readFrame(patched, f.start).ok);
    const r = decodeSnapshot(patched, FILE, 'r1');
    assert.deepEqual(r.raw, raw);
    assert.match(r.damaged ?? '', /raw strings do not fit it/);
  });

  it('a file of another run, or one made of frames that are no snapshot, is corruption', async () => {
    const buf = await encodeSnapshot(commit([{ op: 'inbox' }]));
    assert.throws(() => decodeSnapshot(buf, FILE, 'r2'), AgentCheckpointCorruptionError);
    assert.throws(
      () => decodeSnapshot(Buffer.concat([encodeFrame({ hello: 1 }), encodeFrame({ i: 0, ops: [] })]), FILE, 'r1'),
      /no copy of its header frame checks out/,
    );
  });

  it('another version is refused, not taken for damage', async () => {
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
    const older = encodeFrame({ ...JSON.parse(header.toString('latin1').split('\t')[2]!), snapshot: 6 });
    assert.throws(() => decodeSnapshot(Buffer.concat([Buffer.from('x\n'), older]), FILE, 'r1'), /does not read/);
  });
});
