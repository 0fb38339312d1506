// Copy frames (segment version 6, src/store/disk/segmentCopy.ts): when a run is let go its segment ends
// in a copy of its header and of the commit frames written since the last copy, so damage to any one
// frame — a commit, the header, a copy, the witness area cut out — loses nothing: the loader rebuilds
// the segment from what is still whole, reports it, quarantines the damaged file and writes it whole.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { openDiskStoreReady, type DiskStore } from '../../../src/store/disk/store';
import { parseSegment, type ParsedSegment } from '../../../src/store/disk/segment';
import { frameKey } from '../../../src/store/disk/frame';
import { damageIn, readCopy } from '../../../src/store/disk/segmentCopy';
import { WITNESS_AREA } from '../../../src/store/disk/witness';
import type { ChatMessage } from '../../../src/store/api/schema';
import { FaultyFs } from './faultyFs';
import * as h from './helpers';

/** One step: its start, the model's answer with a call, the call's intent and result. */
async function step(s: DiskStore, id: string, n: number, msgs: ChatMessage[]): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(n, msgs)));
  const a = h.assistantWithCall(n);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(n, msgs, { pending_llm_response: h.pendingResponse(a, n) })));
  await s.recordIntent(id, h.commandIntent(`call_${n}`, n));
  await s.recordResult(id, `call_${n}`, {
    output: `ran ${n} `.repeat(n),
    output_hash: `oh${n}`,
    is_error: false,
    blob: null,
  });
  return [...msgs, { role: 'tool', tool_call_id: `call_${n}`, content: `ran ${n} `.repeat(n) }];
}

/** What a reader sees of a run: its checkpoints, effects and latest snapshot. */
async function view(s: DiskStore, id: string) {
  const snap = await s.loadSnapshot(id);
  return {
    records: (await s.list(id, { limit: 1000 })).map((r) => [r.seq, r.phase, r.step]),
    effects: (await s.listEffects(id)).map((e) => [e.tool_call_id, e.result?.output ?? null]),
    messages: snap.snapshot.messages,
  };
}

/**
 * A run of two sessions, each let go: steps 1–2 (a copy of the header and their frames), then 3–4 (a
 * copy of theirs). Returns the store folder, the run, and what it reads as.
 */
async function twoSessions(dir: string) {
  const s = await openDiskStoreReady(dir);
  const { id, lease } = await sessions(s, 'copies');
  await lease.release();
  const expected = await view(s, id);
  await s.close();
  return { id, expected };
}

/** Steps 1–2 of a new run in `s`, let go; then steps 3–4 under a second lease, returned still held. */
async function sessions(s: DiskStore, title: string) {
  const { run, lease } = await s.createRun(h.newRun(title), h.owner('first'));
  const id = run.run_id;
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (const n of [1, 2]) msgs = await step(s, id, n, msgs);
  await lease.release();
  const again = await s.acquire(id, h.owner('second'));
  for (const n of [3, 4]) msgs = await step(s, id, n, msgs);
  return { id, lease: again };
}

/** The byte ranges of a segment's parts: header, witness area, each commit frame, each copy frame. */
function partsOf(buf: Buffer, parsed: ParsedSegment) {
  const header = parsed.frames[0]!;
  return [
    { what: 'header', at: header.start, end: header.end },
    { what: 'witness area', at: header.end, end: header.end + WITNESS_AREA },
    ...parsed.frames.slice(1).map((f, i) => ({ what: `commit frame ${i + 1}`, at: f.start, end: f.end })),
    ...parsed.copies.map((f, i) => ({ what: `copy ${i + 1}`, at: f.start, end: f.end })),
  ];
}

describe('store: copy frames (a segment let go loses nothing to one damaged frame)', function () {
  this.timeout(120_000);
  const tmp = h.suiteTmp();

  it('a release appends one copy of the header and of the frames since the last copy; a release with nothing new writes nothing', async () => {
    const dir = tmp('aw-copy-');
    const { id } = await twoSessions(dir);
    const file = h.segmentOf(dir, id);
    const buf = fs.readFileSync(file);
    const parsed = parseSegment(buf, { runId: id });
    assert.equal(parsed.stop, null);
    assert.equal(parsed.copies.length, 2, 'one copy per release with commits');
    assert.equal(parsed.copies[1]!.end, buf.length, 'the last copy ends the file');
    const key = frameKey(id);
    const [c1, c2] = parsed.copies.map((c) => readCopy(buf, c.start, key)!);
    const commits = parsed.frames.slice(1);
    const firstSession = commits.filter((f) => f.end <= parsed.copies[0]!.start);
    const secondSession = commits.filter((f) => f.start > parsed.copies[0]!.start);
    assert.ok(firstSession.length > 0 && secondSession.length > 0);
    const bytesOf = (fs: { start: number; end: number }[]) => fs.map((f) => buf.subarray(f.start, f.end));
    assert.deepEqual(
      [...c1!.frames.values()],
      bytesOf(firstSession),
      'the first copy: the first session, byte for byte',
    );
    assert.deepEqual([...c2!.frames.values()], bytesOf(secondSession), 'the second: only what came after the first');
    assert.deepEqual(
      [...c1!.frames.keys()],
      firstSession.map((_, i) => 1 + i),
      'numbered from commit 1',
    );
    assert.deepEqual(c1!.header, buf.subarray(0, parsed.frames[0]!.end));
    assert.deepEqual(c2!.header, c1!.header);
    assert.equal(damageIn(parsed), null);
    // Acquired and let go without a write: nothing appended.
    const s = await openDiskStoreReady(dir);
    await (await s.acquire(id, h.owner('idle'))).release();
    await s.close();
    assert.deepEqual(fs.readFileSync(file), buf, 'nothing new: no copy');
  });

  it('one damage to any part of a let-go segment (not a cut) loses nothing: rebuilt, reported, quarantined, written whole (property)', async () => {
    const pristine = tmp('aw-copy-pristine-');
    const { id, expected } = await twoSessions(pristine);
    const file = path.relative(pristine, h.segmentOf(pristine, id));
    const good = fs.readFileSync(path.join(pristine, file));
    const parts = partsOf(good, parseSegment(good, { runId: id }));
    const kinds = ['zero-fill', 'garbage', 'delete', 'bits'] as const;
    let cases = 0;
    const rebuilds = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...parts),
        fc.constantFrom(...kinds),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        async (part, kind, a, b, noise) => {
          cases++;
          // A range inside the part: at least 1 byte, up to all of it.
          const len = part.end - part.at;
          const from = part.at + Math.floor(a * (len - 1));
          const to = from + 1 + Math.floor(b * (part.end - from - 1));
          const bad = Buffer.from(good);
          let damaged: Buffer;
          if (kind === 'zero-fill') damaged = (bad.fill(0, from, to), bad);
          else if (kind === 'garbage') {
            for (let i = from; i < to; i++) bad[i] = noise[i % noise.length]! ^ 0x5a;
            damaged = bad;
          } else if (kind === 'delete') damaged = Buffer.concat([good.subarray(0, from), good.subarray(to)]);
          else {
            // Two or more flipped bits (one is corrected from the frame's checksum alone).
            for (let i = 0; i < Math.max(2, noise.length % 6); i++) {
              const at = from + ((noise[i % noise.length]! * 7 + i * 13) % (to - from));
              bad[at] = bad[at]! ^ (1 << (i % 8));
            }
            damaged = bad;
          }
          if (damaged.equals(good)) return; // (garbage equal to what was there: no damage)
          const dir = tmp('aw-copy-case-');
          fs.cpSync(pristine, dir, { recursive: true });
          fs.writeFileSync(path.join(dir, file), damaged);
          const o = await h.openCollecting(dir);
          try {
            const lease = await o.s.acquire(id, h.owner('recoverer'));
            assert.deepEqual(
              await view(o.s, id),
              expected,
              `${part.what} × ${kind} [${from}, ${to}): everything reads`,
            );
            assert.equal((await o.s.getRun(id))!.damage, undefined, 'no damage recorded');
            for (const r of o.reports) assert.equal(r.data_lost, false, r.reason);
            const rebuilt = o.reports.find((r) => /every commit was read from a copy/.test(r.lost));
            if (rebuilt) {
              rebuilds.add(part.what);
              assert.equal(rebuilt.file, file, 'the report names the segment');
              const q = rebuilt.quarantined.find((x) => x.file === file)!;
              assert.deepEqual(fs.readFileSync(path.join(dir, q.to)), damaged, 'the damaged bytes kept in quarantine');
            }
            const now = fs.readFileSync(path.join(dir, file));
            const parsed = parseSegment(now, { runId: id });
            assert.equal(parsed.stop, null, 'written whole');
            assert.equal(damageIn(parsed), null);
            assert.equal(parsed.frames.length, parts.filter((p) => p.what.startsWith('commit')).length + 1);
            // The store goes on: a new commit, read back by a fresh store.
            const next = await o.s.append(id, h.preTools(5));
            await lease.release();
            await o.s.close();
            const again = await openDiskStoreReady(dir);
            assert.equal((await again.latest(id)).seq, next.seq);
            await again.close();
          } finally {
            await o.s.close().catch(() => undefined);
            fs.rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 80, seed: 23, endOnFailure: true },
    );
    // Not a property that holds by doing nothing: the damage was there, and rebuilt from copies —
    // past the header, commit frames of both sessions, and a copy.
    assert.ok(cases >= 80);
    console.log(`      rebuilt past: ${[...rebuilds].sort().join(', ')}`);
    for (const what of ['header', 'commit frame 1', 'copy 1'])
      assert.ok(rebuilds.has(what), `rebuilt past a damaged ${what} (${[...rebuilds].join(', ')})`);
    assert.ok(rebuilds.size >= 6, `rebuilt past many parts (${[...rebuilds].join(', ')})`);
  });

  it('a run that crashed: its frames since the last release are in one place — damage there loses from that frame; damage before it loses nothing', async () => {
    const dir = tmp('aw-copy-crash-');
    const s = await openDiskStoreReady(dir);
    const { id } = await sessions(s, 'crashed'); // the second lease never let go
    const expected = await view(s, id);
    const file = h.segmentOf(dir, id);
    // A SIGKILL: what is on disk now (every acknowledged write), the lock left behind.
    const crashed = tmp('aw-copy-crashed-');
    fs.cpSync(dir, crashed, { recursive: true });
    fs.rmSync(path.join(crashed, 'runs', id, 'owner.lock'), { force: true });
    await s.close();
    const seg = path.join(crashed, path.relative(dir, file));
    const good = fs.readFileSync(seg);
    const parsed = parseSegment(good, { runId: id });
    assert.equal(parsed.copies.length, 1, 'one copy: the first session, let go');
    const copied = parsed.frames.slice(1).filter((f) => f.end <= parsed.copies[0]!.start);
    const alone = parsed.frames.slice(1).filter((f) => f.start > parsed.copies[0]!.start);

    // A frame the copy holds, zeroed: nothing lost, the frames after the copy included.
    const one = tmp('aw-copy-crash-a-');
    fs.cpSync(crashed, one, { recursive: true });
    const a = Buffer.from(good).fill(0, copied[1]!.start + 3, copied[1]!.end - 3);
    fs.writeFileSync(path.join(one, path.relative(crashed, seg)), a);
    let o = await h.openCollecting(one);
    await o.s.acquire(id, h.owner('recoverer'));
    assert.deepEqual(await view(o.s, id), expected);
    assert.ok(o.reports.every((r) => !r.data_lost));
    assert.equal(o.reports.length, 1, 'reported');
    await o.s.close();

    // A frame no copy holds yet, zeroed: lost from there (the frame before it is the fallback), said.
    const two = tmp('aw-copy-crash-b-');
    fs.cpSync(crashed, two, { recursive: true });
    const victim = alone[2]!;
    const b = Buffer.from(good).fill(0, victim.start + 3, victim.end - 3);
    fs.writeFileSync(path.join(two, path.relative(crashed, seg)), b);
    o = await h.openCollecting(two);
    await o.s.acquire(id, h.owner('recoverer'));
    const r = o.reports.find((x) => x.data_lost)!;
    assert.ok(r, 'lost data is reported');
    assert.match(r.reason, new RegExp(`is corrupt at byte ${victim.start}`));
    const seqs = parsed.frames
      .slice(1)
      .filter((f) => f.end <= victim.start)
      .flatMap((f) => (f.value as { ops: { op: string; record?: { seq: number } }[] }).ops)
      .filter((x) => x.op === 'record')
      .map((x) => x.record!.seq);
    assert.equal(r.fell_back_to_seq, Math.max(...seqs), 'to the last checkpoint before the damaged frame');
    assert.equal((await o.s.latest(id)).seq, Math.max(...seqs));
    await o.s.close();
  });

  it('another window following the run reads on past the copy its holder wrote when it let go', async () => {
    const dir = tmp('aw-copy-follow-');
    const w = await openDiskStoreReady(dir);
    const { run, lease } = await w.createRun(h.newRun('followed'), h.owner('writer'));
    const id = run.run_id;
    await w.append(id, h.runStarted());
    await step(w, id, 1, [{ role: 'user', content: 'go' }]);
    const ffs = new FaultyFs();
    const r = await openDiskStoreReady(dir, { fs: ffs });
    assert.equal((await r.latest(id)).seq, (await w.latest(id)).seq);
    const wholeReads = () => ffs.reads.filter((p) => /segment-\d+\.log$/.test(p)).length;
    const before = wholeReads();
    await lease.release(); // the copy frame is appended
    const again = await w.acquire(id, h.owner('writer'));
    const rec = await w.append(id, h.preTools(2));
    await w.flush(); // (a checkpoint before tools rides on the next barrier: made durable now)
    assert.equal((await r.latest(id)).seq, rec.seq, 'the reader sees the commit after the copy');
    assert.equal(wholeReads(), before, 'read on from where it was, not again from the start');
    await again.release();
    await w.close();
    await r.close();
  });

  it('the last copy damaged (nothing valid after it) is said to be the copy, cut off and written again at the next release; nothing lost', async () => {
    const dir = tmp('aw-copy-last-');
    const { id, expected } = await twoSessions(dir);
    const file = h.segmentOf(dir, id);
    const good = fs.readFileSync(file);
    const last = parseSegment(good, { runId: id }).copies.at(-1)!;
    const bad = Buffer.from(good).fill(0x41, last.start + 40, last.end - 10); // its start still reads as a copy
    fs.writeFileSync(file, bad);
    const { s, reports, recovered } = await h.openCollecting(dir);
    const lease = await s.acquire(id, h.owner('next'));
    const notes = recovered.map((e) => e.message);
    assert.deepEqual(await view(s, id), expected, 'nothing lost');
    assert.deepEqual(reports, []);
    assert.ok(
      notes.some((m) => /the copy frame at its end \(no commit in it\) is cut short or damaged, cut off/.test(m)),
      notes.join('; '),
    );
    assert.equal(fs.statSync(file).size, last.start, 'cut off');
    await lease.release();
    await s.close();
    const again = parseSegment(fs.readFileSync(file), { runId: id });
    assert.equal(again.copies.length, 2, 'written again at the release');
    assert.equal(damageIn(again), null);
  });

  it('a copy that cannot be written (a full disk) does not fail the release; the next release writes it', async () => {
    const dir = tmp('aw-copy-full-');
    const ffs = new FaultyFs();
    const s = await openDiskStoreReady(dir, { fs: ffs });
    const { run, lease } = await s.createRun(h.newRun('full'), h.owner('w'));
    const id = run.run_id;
    await s.append(id, h.runStarted());
    await step(s, id, 1, [{ role: 'user', content: 'go' }]);
    ffs.inject('pwrite', 'ENOSPC', { times: 1, match: /segment-\d+\.log$/, partial: true });
    await lease.release(); // resolves
    assert.equal(ffs.fired.pwrite, 1, 'the copy was tried');
    const file = h.segmentOf(dir, id);
    const cut = parseSegment(fs.readFileSync(file), { runId: id });
    assert.equal(cut.copies.length, 0, 'no copy');
    assert.equal(cut.stop?.torn, true, 'half a copy frame at the end: a torn tail');
    const again = await s.acquire(id, h.owner('w'));
    await again.release();
    const healed = parseSegment(fs.readFileSync(file), { runId: id });
    assert.equal(healed.stop, null, 'the torn copy was cut off');
    assert.equal(healed.copies.length, 1, 'and the copy written at the next release');
    await s.close();
  });
});
