// The segment log (disk/segment.ts): framing, a torn tail, a bit flip in the middle, a newer version's
// segment (segment.int.test.ts: a torn tail at every byte offset of a record, a SIGKILL mid-append).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { SchemaVersionError } from '../../../src/store/api/errors';
import { parseSegment, SEGMENT_VERSION } from '../../../src/store/disk/segment';
import { encodeCommitFrame, encodeFrame, frameKey, readFrame } from '../../../src/store/disk/frame';
import { crc32, crc32Portable } from '../../../src/store/disk/crc';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { ChatMessage } from '../../../src/store/api/schema';
import { readRunWitness } from '../../../src/store/disk/load';
import { nodeFs } from '../../../src/store/disk/fsLayer';
import * as h from './helpers';
import { segmentIn, stepWithEffect } from './segmentSupport';

/** A run of `steps` steps with a side effect each, written and let go; its id, last seq and segment file. */
/**
 * A run of `steps` steps, let go. `crashed`: its segment as it was before it was let go — as a crash
 * leaves it, without the copy frame a release appends (segmentCopy.ts).
 */
async function storedRun(
  dir: string,
  title: string,
  steps: number,
  o: { crashed?: boolean } = {},
): Promise<{ id: string; latest: number; segFile: string }> {
  const s = await openDiskStoreReady(dir);
  const { run, lease } = await s.createRun(h.newRun(title), h.owner('w'));
  const id = run.run_id;
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let step = 1; step <= steps; step++) msgs = await stepWithEffect(s, id, step, msgs);
  const latest = (await s.latest(id)).seq;
  await lease.release();
  await s.close();
  const segFile = segmentIn(path.join(dir, 'runs', id));
  const copy = parseSegment(fs.readFileSync(segFile)).copies;
  assert.equal(copy.length, 1, 'let go: the segment ends in a copy of its frames');
  if (o.crashed) fs.truncateSync(segFile, copy[0]!.start); // the copy was the last thing written
  return { id, latest, segFile };
}

describe('store: the segment log', function () {
  this.timeout(300_000);
  const tmp = h.suiteTmp();

  it('frames round-trip any JSON, and the portable CRC-32 equals zlib’s', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const frame = encodeFrame(v);
        const parsed = parseSegment(Buffer.concat([frame, frame]));
        assert.equal(parsed.stop, null);
        assert.equal(parsed.frames.length, 2);
        assert.deepEqual(parsed.frames[0]!.value, JSON.parse(JSON.stringify(v)));
        assert.equal(crc32Portable(frame), crc32(frame));
      }),
      { numRuns: 300 },
    );
  });

  it('a frame header is read from its bytes: each way it can be wrong says so, a checksum only in the lowercase hex it is written in', () => {
    const frame = encodeFrame({ a: 'b' }); // `9\t<crc>\t{"a":"b"}\n`
    const text = frame.toString('latin1');
    const [len, crc] = text.split('\t') as [string, string];
    const read = (t: string) => readFrame(Buffer.from(t, 'latin1'), 0);
    const reason = (t: string) => {
      const r = read(t);
      return r.ok ? 'ok' : `${r.reason}${r.short ? ' (short)' : ''}`;
    };
    assert.deepEqual(read(text), { ok: true, frame: { start: 0, end: frame.length, value: { a: 'b' } } });
    const body = text.slice(len.length + 1 + crc.length + 1);
    // Leading zeros are a length as the pattern read them (twelve digits at most).
    assert.equal(reason(`${len.padStart(12, '0')}\t${crc}\t${body}`), 'ok');
    assert.equal(reason(`${len.padStart(13, '0')}\t${crc}\t${body}`), 'the frame header is cut short or unreadable');
    assert.equal(reason(`x${len}\t${crc}\t${body}`), 'the frame length is not a number');
    assert.equal(reason(`\t${crc}\t${body}`), 'the frame length is not a number');
    assert.equal(reason(`${len}`), 'the frame header is cut short or unreadable (short)');
    assert.equal(reason(`${len}\t${crc}`), 'the frame header is cut short (short)');
    assert.equal(reason(`${len}\t${crc}x${body}`), 'the frame checksum is unreadable');
    assert.equal(reason(`${len}\t${crc.toUpperCase()}\t${body}`), /[a-f]/.test(crc) ? 'checksum mismatch' : 'ok');
    assert.equal(reason(`${len}\t${'g'.repeat(8)}\t${body}`), 'checksum mismatch');
    assert.equal(reason(`${len}\t${crc}\t${body.slice(0, -1)}`), 'the frame is cut short (9 of 10 bytes) (short)');
    assert.equal(reason(`${len}\t${crc}\t${body.slice(0, -1)} `), 'the frame does not end where its length says');
    // Any checksum: its hex read back exactly, first digit to last.
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const f = encodeFrame(v);
        assert.ok(readFrame(f, 0).ok);
        const t1 = f.indexOf(9);
        for (let k = t1 + 1; k < t1 + 9; k++) {
          const other = Buffer.from(f);
          other[k] = other[k] === 0x30 ? 0x31 : 0x30;
          assert.equal(readFrame(other, 0).ok, false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a witness left empty (the owner stopped between creating it and its first write) is no damage: noted, rebuilt', async () => {
    const dir = tmp('aw-empty-witness-');
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('empty witness'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await lease.release();
    await s.close();
    // As SIGKILL right after the first ACK leaves it: the witness file as it was created, blank.
    h.setWitness(dir, id, null);
    const o = await h.openCollecting(dir);
    await (await o.s.acquire(id, h.owner('next'))).release();
    assert.deepEqual(o.reports, [], 'not corruption');
    assert.deepEqual(fs.readdirSync(path.join(dir, 'quarantine')).length, 0, 'nothing quarantined');
    assert.ok(
      o.recovered.some((r) => r.file === `runs/${id}/witness` && /is empty/.test(r.message)),
      `noted (${o.recovered.map((r) => r.message).join('; ')})`,
    );
    assert.equal((await o.s.latest(id)).seq, 1);
    assert.equal(h.witnessOf(dir, id).witness?.commits, 1, 'rebuilt');
    await o.s.close();
  });

  it('a torn tail the witness had counted (acknowledged, then lost) is reported as lost data', async () => {
    const dir = tmp('aw-torn-acked-');
    const { id, segFile } = await storedRun(dir, 'torn', 1);
    const bytes = fs.readFileSync(segFile);
    const last = parseSegment(bytes).frames.at(-1)!;
    fs.writeFileSync(segFile, bytes.subarray(0, last.start + 7));
    const o = await h.openCollecting(dir);
    await (await o.s.acquire(id, h.owner('next'))).release();
    const r = o.reports.find((x) => x.file === `runs/${id}/${path.basename(segFile)}`)!;
    assert.ok(r, 'reported');
    assert.equal(r.data_lost, true);
    assert.equal(r.effects_lost, true, 'the last commit held the effect result');
    await o.s.close();
  });

  it('two flipped bits in the middle of a segment (one bit is corrected, below): reported, the segment copied to quarantine and cut before the bad frame, what follows listed as lost', async () => {
    const dir = tmp('aw-flip-');
    const { id, segFile } = await storedRun(dir, 'flip', 4, { crashed: true }); // no copy holds its frames
    const bytes = fs.readFileSync(segFile);
    const frames = parseSegment(bytes).frames;
    const victim = frames[Math.floor(frames.length / 2)]!;
    const flipped = Buffer.from(bytes);
    const at = victim.start + Math.floor((victim.end - victim.start) / 2);
    flipped[at] = flipped[at]! ^ 0x04;
    flipped[at + 3] = flipped[at + 3]! ^ 0x10;
    fs.writeFileSync(segFile, flipped);
    const o = await h.openCollecting(dir);
    const l = await o.s.acquire(id, h.owner('next'));
    const r = o.reports.find((x) => x.file === `runs/${id}/${path.basename(segFile)}`)!;
    assert.ok(r, 'reported, naming the segment');
    assert.match(r.reason, new RegExp(`is corrupt at byte ${victim.start}`));
    assert.equal(r.data_lost, true);
    const copy = r.quarantined.find((q) => q.file === r.file)!;
    assert.deepEqual(
      fs.readFileSync(path.join(dir, copy.to)),
      flipped,
      'the whole damaged segment is kept in quarantine',
    );
    // Cut before the bad frame; the next frame there is the damage record the repair wrote.
    const after = parseSegment(fs.readFileSync(segFile)).frames.find((f) => f.start === victim.start);
    assert.match(
      JSON.stringify(after?.value),
      /"op":"damage"/,
      'cut before the bad frame: appends go on from the last good one',
    );
    const lastSeq = (await o.s.latest(id)).seq;
    assert.equal(r.fell_back_to_seq, lastSeq);
    assert.ok(
      r.lost_calls.length > 0,
      `the intact frames after the flip still tell which calls were lost (${JSON.stringify(r.lost_calls)})`,
    );
    assert.equal(r.effects_lost, true);
    await o.s.append(id, h.preTools(9));
    await l.release();
    await o.s.close();
    const again = await h.openCollecting(dir);
    assert.equal((await again.s.latest(id)).seq, lastSeq + 1);
    assert.deepEqual(again.reports, []);
    await again.s.close();
  });

  it('one flipped bit anywhere in a frame — its JSON, its length, a tab, its checksum digits, its newline — is found from the checksum and corrected: every frame read as written', () => {
    const key = frameKey('run-x');
    const bodies = [
      { n: 7, o: [{ R: { p: 3, t: 'x'.repeat(300) } }] },
      { n: 8, o: [] },
      { n: 9, o: [{ E: 'é ✓' }] },
    ];
    const frames = bodies.map((b) => encodeCommitFrame(b, key));
    const good = Buffer.concat(frames);
    const expected = parseSegment(good, { runId: 'run-x', headless: true });
    assert.equal(expected.frames.length, 3);
    assert.deepEqual(expected.corrected, []);
    let tried = 0;
    for (let at = 0; at < frames[0]!.length + frames[1]!.length; at++)
      for (let bit = 0; bit < 8; bit++) {
        const bad = Buffer.from(good);
        bad[at] = bad[at]! ^ (1 << bit);
        const p = parseSegment(bad, { runId: 'run-x', headless: true });
        assert.equal(p.stop, null, `byte ${at} bit ${bit}: ${JSON.stringify(p.stop)}`);
        assert.deepEqual(p.corrected, [{ offset: at, bit }], `byte ${at} bit ${bit}`);
        assert.deepEqual(
          p.frames.map((f) => f.value),
          expected.frames.map((f) => f.value),
        );
        assert.ok(bad.equals(good), 'the buffer is put right in place');
        tried++;
      }
    assert.equal(tried, 8 * (frames[0]!.length + frames[1]!.length));
    // Two bits in one frame: nothing is guessed.
    const two = Buffer.from(good);
    two[40] = two[40]! ^ 1;
    two[41] = two[41]! ^ 1;
    const p = parseSegment(two, { runId: 'run-x', headless: true });
    assert.equal(p.frames.length, 0);
    assert.equal(p.stop?.torn, false, 'damage: valid frames follow');
    assert.deepEqual(p.corrected, []);
  });

  it('one flipped bit in a stored segment: the run reads whole, the damage is said (nothing lost), the file is kept in quarantine and written back corrected', async () => {
    const dir = tmp('aw-flip1-');
    const { id, latest, segFile } = await storedRun(dir, 'flip1', 4);
    const bytes = fs.readFileSync(segFile);
    const victim = parseSegment(bytes).frames[3]!;
    const flipped = Buffer.from(bytes);
    const at = victim.start + Math.floor((victim.end - victim.start) / 2);
    flipped[at] = flipped[at]! ^ 0x20;
    fs.writeFileSync(segFile, flipped);
    const o = await h.openCollecting(dir);
    const l = await o.s.acquire(id, h.owner('next'));
    const r = o.reports.find((x) => x.file === `runs/${id}/${path.basename(segFile)}`)!;
    assert.ok(r, 'reported, naming the segment');
    assert.match(r.reason, new RegExp(`one flipped bit \\(byte ${at} bit 5\\)`));
    assert.equal(r.data_lost, false);
    assert.match(r.lost, /^nothing/);
    assert.equal((await o.s.latest(id)).seq, latest, 'every checkpoint is there');
    assert.equal((await o.s.listEffects(id)).filter((e) => e.result).length, 4);
    assert.deepEqual(fs.readFileSync(path.join(dir, r.quarantined[0]!.to)), flipped, 'the file as it was, kept');
    assert.ok(fs.readFileSync(segFile).equals(bytes), 'written back as it was written');
    assert.equal((await o.s.getRun(id))!.damage, undefined, 'no loss recorded in the run');
    await o.s.append(id, h.preTools(9));
    await l.release();
    await o.s.close();
    const again = await h.openCollecting(dir);
    assert.equal((await again.s.latest(id)).seq, latest + 1);
    assert.deepEqual(again.reports, []);
    await again.s.close();
  });
  it("the witness is read from the segment's head, past a header longer than the first read (a long task)", async () => {
    const dir = tmp('aw-long-header-');
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun({ ...h.newRun('long'), task: 'x'.repeat(40_000) }, h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    const late = await openDiskStoreReady(dir); // another window: knows the run from its first read
    await late.listRuns();
    assert.equal(await late.rescan(), false, 'nothing grew yet');
    await s.append(id, h.preTools(1));
    await s.flush(); // its second commit
    const runDir = path.join(dir, 'runs', id);
    const w = await readRunWitness(nodeFs, runDir, id);
    assert.ok(w?.kind === 'ok' && w.witness.commits === 2, `the witness after the header: ${JSON.stringify(w)}`);
    assert.ok(parseSegment(fs.readFileSync(segmentIn(runDir))).witnessAt! > 40_000);
    assert.equal(await late.rescan(), true, 'its log grew: seen from the witness');
    await lease.release();
    await late.close();
    await s.close();
  });

  it('a segment of a newer version is refused and left untouched, not taken for damage', async () => {
    const dir = tmp('aw-newer-seg-');
    const s = await openDiskStoreReady(dir);
    const { run, lease } = await s.createRun(h.newRun('newer'), h.owner('w'));
    await s.append(run.run_id, h.runStarted());
    await lease.release();
    await s.close();
    const segFile = segmentIn(path.join(dir, 'runs', run.run_id));
    const newer = Buffer.concat([
      encodeFrame({ segment: SEGMENT_VERSION + 1, run_id: run.run_id, first: 1, meta: null, layout: 'future' }),
      encodeFrame({ future: true }),
    ]);
    fs.writeFileSync(segFile, newer);
    const o = await h.openCollecting(dir);
    await h.rejects(o.s.acquire(run.run_id, h.owner('old')), SchemaVersionError, /newer than this version/);
    assert.deepEqual(fs.readFileSync(segFile), newer);
    assert.deepEqual(o.reports, []);
    await o.s.close();
  });
});
