// Room written ahead (segment version 7; disk/runLog.ts, reserve): while the runner waits for the
// model, a working run's segment gets zeros past its last frame, fdatasync'd, so the next commits are
// written into blocks the file already has and their barriers sync data alone. A reader takes zeros
// after the last frame as the segment's end; a crash leaves them there; letting the run go cuts them
// off. Nothing about what the run holds changes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStore, type DiskStore } from '../../../src/store/disk/store';
import { parseSegment, SEGMENT_VERSION } from '../../../src/store/disk/segment';
import { encodeFrame } from '../../../src/store/disk/frame';
import { ROOM } from '../../../src/store/disk/runLog';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

/** One step as the runner writes it: start, the barrier before the request, response + intent, result. */
async function step(s: DiskStore, id: string, k: number, msgs: ChatMessage[]): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
  await s.makeDurable(id);
  await s.whenIdle(id); // (the model answers meanwhile)
  const a = h.assistantWithCall(k);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(k, msgs, { pending_llm_response: h.pendingResponse(a, k) })), {
    durability: 'next-barrier',
  });
  await s.recordIntent(id, h.commandIntent(`call_${k}`, k), { durability: 'next-barrier' });
  await s.makeDurable(id, { toolsNext: true });
  const out = `output of step ${k}\n`.repeat(30);
  await s.recordResult(
    id,
    `call_${k}`,
    { output: out, output_hash: `o${k}`, is_error: false, blob: null },
    { durability: 'next-barrier' },
  );
  await s.append(id, h.postTools(k));
  return [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
}

const segmentOf = (runDir: string) =>
  path.join(
    runDir,
    fs.readdirSync(runDir).find((n) => n.startsWith('segment-'))!,
  );

/** The segment's bytes, where its frames end, and whether everything after is zero. */
function shape(file: string): { size: number; validEnd: number; zeros: boolean; stop: unknown } {
  const buf = fs.readFileSync(file);
  const p = parseSegment(buf);
  return {
    size: buf.length,
    validEnd: p.validEnd,
    zeros: buf.subarray(p.validEnd).every((b) => b === 0),
    stop: p.stop,
  };
}

async function reading(dir: string, id: string) {
  const { s, reports, recovered } = await h.openCollecting(dir);
  try {
    return {
      records: h.canonical(await s.list(id, { limit: 1000 })),
      snapshot: h.canonical(await s.loadSnapshot(id)),
      effects: h.canonical(await s.listEffects(id)),
      reports,
      recovered: recovered.filter((r) => !r.file.endsWith('index.json')),
    };
  } finally {
    await s.close();
  }
}

describe('store: room written ahead of the appends', function () {
  this.timeout(60_000);
  const tmp = h.suiteTmp();

  it('writes zeros past the segment’s end at the barrier before a request; commits then go into them without growing the file', async () => {
    const dir = tmp('aw-room-');
    const s = openDiskStore(dir, { deferMs: 60_000 });
    const { run, lease } = await s.createRun(h.newRun('room'), h.owner('t'));
    const id = run.run_id;
    const seg = segmentOf(path.join(dir, 'runs', id));
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    await s.append(id, h.stepStarted(h.snapshot(1, msgs)));
    const before = shape(seg);
    assert.equal(before.size, before.validEnd, 'no room before the first barrier before a request');
    msgs = await step(s, id, 1, msgs);
    const after = shape(seg);
    assert.equal(after.stop, null, 'zeros after the last frame: the segment’s end');
    assert.ok(after.zeros);
    assert.ok(
      after.size - after.validEnd >= ROOM - 4096 - (after.validEnd - before.validEnd),
      `room left: ${after.size - after.validEnd}`,
    );
    assert.equal(after.size % 4096, 0, 'the room ends on a block boundary');
    // The next step's commits land in the room: the file's length does not change.
    msgs = await step(s, id, 2, msgs);
    const third = shape(seg);
    assert.ok(third.validEnd > after.validEnd, 'the step was written');
    assert.equal(third.size, after.size, 'into the room: the file did not grow');
    assert.ok(third.zeros);

    // As a crash leaves it (the run still held, what was handed over for the next barrier written):
    // read exactly as the live store holds it, nothing noted.
    await s.flush();
    assert.equal(shape(seg).size, after.size, 'still in the room');
    const crashed = tmp('aw-room-crash-');
    fs.cpSync(dir, crashed, { recursive: true });
    const live = {
      records: h.canonical(await s.list(id, { limit: 1000 })),
      snapshot: h.canonical(await s.loadSnapshot(id)),
      effects: h.canonical(await s.listEffects(id)),
    };
    const read = await reading(crashed, id);
    assert.deepEqual(read.reports, [], 'no damage');
    assert.deepEqual(read.recovered, [], 'nothing cut off or noted');
    assert.deepEqual({ records: read.records, snapshot: read.snapshot, effects: read.effects }, live);

    // Let go: the room is cut off; the segment ends in its copy frame.
    await lease.release();
    await s.close();
    const released = shape(seg);
    assert.equal(released.size, released.validEnd, 'no zeros kept by a run let go');
    assert.equal(released.stop, null);
    const again = await reading(dir, id);
    assert.deepEqual({ records: again.records, snapshot: again.snapshot, effects: again.effects }, live);
    assert.deepEqual([...again.reports, ...again.recovered], []);
  });

  it('after a crash, the run is taken over and written on into the room it left; a torn append in the room is cut off and noted, never reported', async () => {
    const dir = tmp('aw-room-');
    const s = openDiskStore(dir, { deferMs: 60_000 });
    const { run } = await s.createRun(h.newRun('room'), h.owner('t', 'crashed-owner'));
    const id = run.run_id;
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    for (let k = 1; k <= 3; k++) msgs = await step(s, id, k, msgs);
    const crashed = tmp('aw-room-crash-');
    fs.cpSync(dir, crashed, { recursive: true });
    await s.close();
    fs.rmSync(path.join(crashed, 'runs', id, 'owner.lock'), { force: true }); // (the dead window's lock)
    const seg = segmentOf(path.join(crashed, 'runs', id));
    const left = shape(seg);
    assert.ok(left.size > left.validEnd && left.zeros, 'the crash left room');

    // A torn append into the room: the first half of a frame, zeros after it.
    const fd = fs.openSync(seg, 'r+');
    const torn = encodeFrame({ n: 999, o: [{ op: 'state' }] });
    fs.writeSync(fd, torn.subarray(0, torn.length >> 1), 0, torn.length >> 1, left.validEnd);
    fs.closeSync(fd);
    const read = await reading(crashed, id);
    assert.deepEqual(read.reports, [], 'never acknowledged: no damage reported');
    assert.ok(
      read.recovered.some((r) => /cut short by a crash/.test(r.message)),
      `noted: ${read.recovered.map((r) => r.message).join('; ')}`,
    );

    // Taken over: cut back to its last frame, then written on.
    const t = openDiskStore(crashed, { deferMs: 60_000 });
    const lease = await t.acquire(id, h.owner('t2', 'new-owner'));
    assert.equal(shape(seg).size, left.validEnd, 'the torn append is cut off (the room with it)');
    msgs = await step(t, id, 4, msgs);
    msgs = await step(t, id, 5, msgs);
    const after = shape(seg);
    assert.equal(after.stop, null);
    assert.ok(after.size > after.validEnd, 'room written again');
    const live = h.canonical(await t.loadSnapshot(id));
    await lease.release();
    await t.close();
    const again = await reading(crashed, id);
    assert.equal(again.snapshot, live);
    assert.deepEqual([...again.reports, ...again.recovered], []);
    // (the newest snapshot is step 5's response: its tool message comes with step 6's start)
    assert.equal(JSON.parse(again.snapshot).snapshot.messages.length, msgs.length - 1);
  });

  it('gives the fresh segment of a background compaction room too, once that compaction is done', async () => {
    const dir = tmp('aw-room-');
    const s = openDiskStore(dir, { deferMs: 60_000, compactAfterCommits: 8 });
    const { run, lease } = await s.createRun(h.newRun('room'), h.owner('t'));
    const id = run.run_id;
    const runDir = path.join(dir, 'runs', id);
    let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
    const segments = new Set<string>();
    for (let k = 1; k <= 12; k++) {
      msgs = await step(s, id, k, msgs); // (its whenIdle waits for a compaction and the room after it)
      const seg = segmentOf(runDir);
      segments.add(path.basename(seg));
      const sh = shape(seg);
      assert.equal(sh.stop, null);
      assert.ok(sh.size - sh.validEnd > 0 && sh.zeros, `step ${k}: ${path.basename(seg)} has room`);
    }
    assert.ok(fs.existsSync(path.join(runDir, 'snapshot.json')), 'compacted while it worked');
    assert.ok(segments.size > 1, `a fresh segment after each compaction: ${[...segments].join(', ')}`);
    await lease.release();
    await s.close();
  });

  it('reads zeros after the last frame as the end, and nothing else', () => {
    const header = (v: number) =>
      encodeFrame({ segment: v, run_id: 'r', first: 1, meta: h.runMeta({ run_id: 'r', thread_id: 'r' }) });
    const zeros = Buffer.alloc(8192);
    // (the witness area after the header is taken from the zeros, as a blank one)
    assert.equal(parseSegment(Buffer.concat([header(SEGMENT_VERSION), zeros]), { runId: 'r' }).stop, null);
    // Anything but zeros after them is not room.
    const bad = Buffer.concat([header(SEGMENT_VERSION), zeros, Buffer.from('x')]);
    assert.notEqual(parseSegment(bad, { runId: 'r' }).stop, null);
    // Room longer than the zeros it is compared against at a time (64 KB): one byte anywhere in it, the
    // last of all included, makes it not room.
    const long = Buffer.concat([header(SEGMENT_VERSION), Buffer.alloc(200_000)]);
    assert.equal(parseSegment(long, { runId: 'r' }).stop, null);
    for (const back of [1, 65_536, 65_537, 150_000]) {
      const one = Buffer.from(long);
      one[one.length - back] = 1;
      assert.notEqual(parseSegment(one, { runId: 'r' }).stop, null, `a byte ${back} from the end`);
    }
  });
});
