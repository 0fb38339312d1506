// The corruption matrix: every file kind × {truncate, bit-flip, zero-fill, delete, garbage}. A run's
// log is one segment file, so its "commits" are frames: the damage hits the first, a middle or the
// last commit frame of the segment (delete = the frame's bytes cut out), its header frame, or the
// witness area after the header; the run's witness file beside it is damaged as a whole. A
// compacted run's snapshot.json is damaged as a whole file and in one 4 KB block (a bad sector; a
// truncation in its second half; delete = the block's bytes cut out).
// Each case: detected with a report/error naming the file; the bad bytes kept in quarantine (never
// deleted, never read as empty); the run falls back to its last good checkpoint — or, where the
// snapshot's other copy holds every frame, loses nothing and rewrites the file whole; where one bit
// of a segment frame flipped, loses nothing and writes the bit back (found from the frame's
// checksum); and where a segment frame, its header or its witness area is otherwise damaged (not cut
// short), loses nothing and rewrites the segment whole from the copy written when the run was let go
// (segmentCopy.ts); new writes work.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError, RunLockedError } from '../../../src/store/api/errors';
import { openDiskStoreReady, type DiskStore } from '../../../src/store/disk/store';
import { parseSegment } from '../../../src/store/disk/segment';
import { encodeCommitFrame, frameKey } from '../../../src/store/disk/frame';
import { damageIn } from '../../../src/store/disk/segmentCopy';
import { WITNESS_AREA } from '../../../src/store/disk/witness';
import { decodeSnapshot } from '../../../src/store/disk/snapshotFile';
import type { CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

const DAMAGES = ['truncate', 'bit-flip', 'zero-fill', 'delete', 'garbage'] as const;
type Damage = (typeof DAMAGES)[number];
const KINDS = [
  'index.json',
  'witness',
  'segment:witness',
  'segment:header',
  'commit:first',
  'commit:middle',
  'commit:last',
  'snapshot',
  'snapshot:block',
  'blob',
  'owner.lock',
] as const;
type Kind = (typeof KINDS)[number];

/** Deterministic PRNG (mulberry32) so every run damages the same bytes. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Damages `file`, or only the bytes [at, end) of it (a frame); returns what the file holds after, null when it is gone. */
function damage(
  file: string,
  how: Damage,
  rand: () => number,
  raw: boolean,
  range?: { at: number; end: number },
): Buffer | null {
  const good = fs.readFileSync(file);
  const { at, end } = range ?? { at: 0, end: good.length };
  const part = good.subarray(at, end);
  let bad: Buffer;
  if (how === 'delete') {
    if (!range) {
      fs.rmSync(file);
      return null;
    }
    bad = Buffer.concat([good.subarray(0, at), good.subarray(end)]);
  } else if (how === 'truncate') bad = good.subarray(0, at + Math.floor(part.length / 2));
  else {
    let mid: Buffer;
    if (how === 'zero-fill') mid = Buffer.alloc(part.length);
    else if (how === 'garbage') mid = Buffer.from(Array.from({ length: part.length }, () => Math.floor(rand() * 256)));
    else {
      const body = raw || range ? 0 : part.indexOf('"body":') + 8; // inside the checksummed body
      const inside = range ? part.indexOf('\t', part.indexOf('\t') + 1) + 1 : body; // a frame: inside its JSON
      const pos = inside + Math.floor(rand() * (part.length - inside - 2));
      mid = Buffer.from(part);
      mid[pos] = mid[pos]! ^ (1 << Math.floor(rand() * 8));
    }
    bad = Buffer.concat([good.subarray(0, at), mid, good.subarray(end)]);
  }
  fs.writeFileSync(file, bad);
  return bad;
}

interface Pristine {
  dir: string;
  runId: string;
  blob: string;
  /** The run's one segment, and its commit frames: byte range and the last seq each holds (after the header). */
  segment: string;
  header: { at: number; end: number };
  /** The witness area after the header (two slots). */
  witness: { at: number; end: number };
  frames: { at: number; end: number; lastSeq: number }[];
  lockBytes: Buffer;
  /** The same run in a second store, compacted after step 2: snapshot.json + a segment. */
  compacted: { dir: string; snapshotSeq: number; commits: number };
}

async function writeRun(
  s: DiskStore,
  id: string,
  from: number,
  to: number,
  msgs: ChatMessage[],
): Promise<ChatMessage[]> {
  for (let step = from; step <= to; step++) {
    await s.append(id, h.stepStarted(h.snapshot(step, msgs)));
    await s.append(id, h.preLlm(step, msgs.length));
    const a = h.assistantWithCall(step);
    msgs = [...msgs, a];
    await s.append(id, h.postLlm(h.snapshot(step, msgs, { pending_llm_response: h.pendingResponse(a, step) }))); // durable
    await s.recordIntent(id, {
      tool_call_id: `call_${step}`,
      step,
      tool_name: 'write_file',
      input_hash: `ih${step}`,
      side_effecting: true,
    });
    await s.recordResult(id, `call_${step}`, {
      output: `wrote ${step} `.repeat(20),
      output_hash: `oh${step}`,
      is_error: false,
      blob: null,
    });
    msgs = [...msgs, { role: 'tool', tool_call_id: `call_${step}`, content: `wrote ${step} `.repeat(20) }];
  }
  return msgs;
}

/** How many commits a compacted run holds: its snapshot's and its segment's. */
function compactedCommits(dir: string, id: string): number {
  const runDir = path.join(dir, 'runs', id);
  const covered = decodeSnapshot(fs.readFileSync(path.join(runDir, 'snapshot.json')), 'snapshot.json', id).raw.last;
  const segment = fs.readdirSync(runDir).find((n) => n.startsWith('segment-'))!;
  return covered + parseSegment(fs.readFileSync(path.join(runDir, segment))).frames.length - 1;
}

async function buildPristine(): Promise<Pristine> {
  const dir = h.tmpDir('aw-matrix-');
  const s = await openDiskStoreReady(dir);
  const { run, lease } = await s.createRun(h.newRun('victim'), h.owner('builder'));
  const id = run.run_id;
  await s.append(id, h.runStarted()); // commit 1
  await writeRun(s, id, 1, 3, [{ role: 'user', content: 'go' }]);
  const blob = await s.putBlob(id, 'a large tool output\n'.repeat(500));
  await s.append(id, h.terminal(3));
  const lockBytes = fs.readFileSync(path.join(dir, 'runs', id, 'owner.lock'));
  await lease.release();
  await s.close();
  const segment = fs.readdirSync(path.join(dir, 'runs', id)).find((n) => n.startsWith('segment-'))!;
  const parsed = parseSegment(fs.readFileSync(path.join(dir, 'runs', id, segment)));
  let lastSeq = 0;
  const frames = parsed.frames.slice(1).map((f) => {
    const ops = (f.value as { ops: { op: string; record?: { seq: number } }[] }).ops;
    lastSeq = Math.max(lastSeq, ...ops.filter((o) => o.op === 'record').map((o) => o.record!.seq));
    return { at: f.start, end: f.end, lastSeq };
  });
  // The compacted twin: steps 1–2, compaction, step 3 and the end.
  const cdir = h.tmpDir('aw-matrix-compacted-');
  const c = await openDiskStoreReady(cdir);
  const { lease: cl } = await c.createRun({ ...h.newRun('victim'), run_id: id }, h.owner('builder'));
  await c.append(id, h.runStarted());
  const msgs = await writeRun(c, id, 1, 2, [{ role: 'user', content: 'go' }]);
  await c.compact(id);
  const snapshotSeq = (await c.latest(id)).seq;
  await writeRun(c, id, 3, 3, msgs);
  await c.append(id, h.terminal(3));
  await cl.release();
  await c.close();
  return {
    dir,
    runId: id,
    blob,
    segment,
    header: { at: parsed.frames[0]!.start, end: parsed.frames[0]!.end },
    witness: { at: parsed.witnessAt!, end: parsed.witnessAt! + WITNESS_AREA },
    frames,
    lockBytes,
    compacted: { dir: cdir, snapshotSeq, commits: compactedCommits(cdir, id) },
  };
}

describe('store: corruption matrix (every file kind × every damage)', function () {
  this.timeout(120_000);
  let pristine: Pristine;
  const results: {
    kind: Kind;
    how: Damage;
    detected: boolean;
    quarantined: boolean | 'n/a';
    fellBackTo: number | null | 'n/a';
  }[] = [];
  before(async () => (pristine = await buildPristine()));
  after(() => {
    fs.rmSync(pristine.dir, { recursive: true, force: true });
    fs.rmSync(pristine.compacted.dir, { recursive: true, force: true });
    const detected = results.filter((r) => r.detected).length;
    console.log(
      `      corruption matrix: ${detected}/${results.length} detected (${((100 * detected) / Math.max(1, results.length)).toFixed(0)} %)`,
    );
    for (const r of results)
      console.log(
        `        ${r.kind.padEnd(14)} ${r.how.padEnd(10)} detected=${r.detected} quarantined=${r.quarantined} fell_back_to=${r.fellBackTo}`,
      );
  });

  let seed = 1;
  for (const kind of KINDS) {
    for (const how of DAMAGES) {
      it(`${kind} × ${how}`, async () => {
        const rand = rng(seed++);
        const dir = h.tmpDir('aw-case-');
        fs.cpSync(kind.startsWith('snapshot') ? pristine.compacted.dir : pristine.dir, dir, { recursive: true });
        try {
          const r = kind === 'owner.lock' ? await lockCase(dir, how, rand) : await fileCase(dir, kind, how, rand);
          results.push({ kind, how, ...r });
          assert.ok(r.detected, 'detected');
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  }

  const rel = (...p: string[]) => path.posix.join('runs', pristine.runId, ...p);

  /** The damaged bytes sit in quarantine with a .why.json; the original path is gone (or rebuilt). */
  function assertQuarantined(dir: string, relFile: string, bytes: Buffer, reports: CorruptionReport[]): void {
    const moved = reports.flatMap((r) => r.quarantined).find((q) => q.file === relFile);
    assert.ok(moved, `${relFile} quarantined (reports: ${JSON.stringify(reports.map((r) => r.quarantined))})`);
    assert.deepEqual(fs.readFileSync(path.join(dir, moved.to)), bytes, 'the bad bytes are kept, not deleted');
    const why = JSON.parse(fs.readFileSync(path.join(dir, `${moved.to}.why.json`), 'utf8'));
    assert.equal(why.file, relFile);
  }

  async function fileCase(dir: string, kind: Exclude<Kind, 'owner.lock'>, how: Damage, rand: () => number) {
    const id = pristine.runId;
    const frames = pristine.frames;
    const fullSeq = frames[frames.length - 1]!.lastSeq;
    const inSegment = {
      'segment:header': pristine.header,
      'segment:witness': pristine.witness,
      'commit:first': frames[0],
      'commit:middle': frames[3],
      'commit:last': frames[frames.length - 1],
    } as const;
    const snapshotFile = rel('snapshot.json');
    const target = (inSegment as Record<string, unknown>)[kind]
      ? rel(pristine.segment)
      : {
          'index.json': 'index.json',
          witness: rel('witness'),
          snapshot: snapshotFile,
          'snapshot:block': snapshotFile,
          blob: rel('blobs', pristine.blob),
        }[kind as 'index.json'];
    const size = fs.statSync(path.join(dir, target)).size;
    // One 4 KB block: anywhere; a truncation cuts the file in its second half (where a write is torn).
    const blockAt =
      Math.floor(rand() * (how === 'truncate' ? size / 2 - 4096 : size - 4096)) +
      (how === 'truncate' ? Math.ceil(size / 2) : 0);
    // A snapshot is cut short after its spare copy (in the gap or the plain copy): the spare holds every frame.
    const gapAt = fs.readFileSync(path.join(dir, target)).indexOf(' '.repeat(4095));
    const range =
      kind === 'snapshot:block'
        ? { at: blockAt, end: blockAt + 4096 }
        : kind === 'snapshot' && how === 'truncate'
          ? { at: gapAt, end: size }
          : (inSegment as Record<string, { at: number; end: number } | undefined>)[kind];
    // The snapshot's other copy holds every frame unless the whole file is gone, zeroed or overwritten.
    const snapshotWhole =
      kind === 'snapshot:block' || (kind === 'snapshot' && (how === 'truncate' || how === 'bit-flip'));
    // Commits lost from where the damage is: a frame and everything after it; the snapshot and everything after it.
    // The witness area: a slot bad loses nothing (the other slot, or the log, stands in); cut short, the
    // frames after it are lost with it, as with a header cut short.
    const areaLost = kind === 'segment:witness' && how === 'truncate';
    // One flipped bit in a segment's frame (its header or a commit) is corrected from the frame's checksum.
    const bitCorrected = how === 'bit-flip' && (kind === 'segment:header' || kind.startsWith('commit:'));
    // Any other damage to a frame (or the witness area cut out, which moves the frames after it) loses
    // nothing either: the run was let go, so a copy frame at the segment's end holds its header and every
    // commit frame (segmentCopy.ts). A file cut short lost its copy with its end.
    const fromCopy =
      !bitCorrected &&
      how !== 'truncate' &&
      (kind === 'segment:header' || kind.startsWith('commit:') || (kind === 'segment:witness' && how === 'delete'));
    const lostFrom =
      bitCorrected || fromCopy
        ? null
        : kind === 'segment:header' || kind === 'commit:first' || areaLost || (kind === 'snapshot' && !snapshotWhole)
          ? 1
          : range && kind !== 'snapshot:block' && kind !== 'snapshot' && kind !== 'segment:witness'
            ? frames.indexOf(range as (typeof frames)[number]) + 1
            : null;
    // Cut short inside the header or the witness area: the witness went with the frames, so whether
    // effect records were lost is not known (said as unknown, which resume treats as lost).
    const witnessGone = (kind === 'segment:header' || kind === 'segment:witness') && how === 'truncate';
    const expectedSeq = lostFrom === null ? fullSeq : lostFrom === 1 ? null : frames[lostFrom - 2]!.lastSeq;
    const fullSeqOfRun = kind === 'snapshot' ? null : fullSeq;
    const before = fs.readFileSync(path.join(dir, target));
    const bad = damage(path.join(dir, target), how, rand, kind === 'blob', range);
    const reports: CorruptionReport[] = [];
    const recovered: string[] = [];
    const s = await openDiskStoreReady(dir, {
      onEvent: (e) => {
        if (e.kind === 'corruption') reports.push(e.report);
        if (e.kind === 'recovered') recovered.push(e.file);
      },
    });
    try {
      const lease = await s.acquire(id, h.owner('recoverer')); // the owner loads fresh and repairs
      // A redundant file that is simply gone (the index, the witness file) is rebuilt and logged, not an alarm.
      const redundantGone = how === 'delete' && (kind === 'index.json' || kind === 'witness');
      let detected = redundantGone
        ? recovered.includes(target) && !reports.some((r) => r.file === target)
        : reports.some((r) => r.file === target);
      if (kind === 'blob') {
        const err = await h.rejects(s.getBlob(id, pristine.blob), AgentCheckpointCorruptionError);
        assert.ok(err.message.includes(target), err.message);
        if (how === 'delete') assert.ok(err instanceof CheckpointNotFoundError);
        detected = detected || reports.some((r) => r.file === target);
      }
      if (bad) assertQuarantined(dir, target, bad, reports);
      // fall back to the last good checkpoint
      if (expectedSeq === null) await h.rejects(s.latest(id), CheckpointNotFoundError, new RegExp(id));
      else {
        assert.equal((await s.latest(id)).seq, expectedSeq);
        const snap = await s.loadSnapshot(id);
        assert.ok(snap.record.seq <= expectedSeq);
        assert.equal(
          snap.snapshot.messages.length,
          snap.record.snapshot!.message_count,
          'never empty: the lists are whole',
        );
      }
      if (lostFrom !== null) {
        const report = reports.find((r) => r.file === target)!;
        assert.equal(report.fell_back_to_seq, expectedSeq);
        assert.equal(report.lost_seqs?.from, (expectedSeq ?? 0) + 1);
        if (fullSeqOfRun !== null) assert.equal(report.lost_seqs?.to, fullSeqOfRun);
        const effectsInLostPart = lostFrom <= 5;
        if (effectsInLostPart) assert.notEqual(report.effects_lost, false, 'effects were among the lost commits');
        assert.equal(report.data_lost, true);
        // The loss is recorded in the run itself, and the finished run stays finished.
        const run = (await s.getRun(id))!;
        assert.equal(run.damage?.file, target, 'the damage is recorded in the run');
        assert.equal(run.damage?.state_before, 'completed', 'the witness says the run had finished');
        assert.equal(run.state, 'completed', 'a finished run stays finished');
        if (effectsInLostPart && witnessGone)
          assert.notEqual(run.damage?.effects_lost, false, 'the witness went with them: not known, never "none"');
        else if (effectsInLostPart)
          assert.equal(run.damage?.effects_lost, true, 'the witness counts the lost effect records');
      } else if (kind !== 'blob') {
        const report = reports.find((r) => r.file === target);
        if (report) assert.equal(report.data_lost, false, `${kind}: nothing but a redundant file was lost`);
        assert.equal((await s.getRun(id))!.damage, undefined, 'no damage recorded when no run data was lost');
      }
      if (bitCorrected) {
        const report = reports.find((r) => r.file === target)!;
        assert.match(report.reason, /failed the checksum by one flipped bit \(byte \d+ bit \d\)/, report.reason);
        assert.match(report.lost, /^nothing/, report.lost);
        const { at, end } = range!;
        assert.deepEqual(
          fs.readFileSync(path.join(dir, target)).subarray(at, end),
          before.subarray(at, end),
          'the bit is written back',
        );
      }
      if (fromCopy) {
        // (The witness area cut out is said too, in the same report: its witness is rebuilt from the log.)
        const report = reports.find((r) => r.file === target)!;
        assert.match(report.reason, /is corrupt/, report.reason);
        assert.match(report.lost, /nothing: every commit was read from a copy or a frame that is whole/, report.lost);
        assert.equal(report.data_lost, false);
        const again = parseSegment(fs.readFileSync(path.join(dir, target)), { runId: id });
        assert.equal(again.stop, null, 'the owner rewrote the segment whole');
        assert.equal(damageIn(again), null);
        assert.equal(again.frames.length - 1, frames.length, 'it holds every commit frame');
        assert.deepEqual(
          again.frames.slice(1).map((f) => f.end - f.start),
          frames.map((f) => f.end - f.at),
          'each as it was written',
        );
        assert.equal(again.copies.length, 1, 'and a fresh copy of them');
      }
      if (snapshotWhole) {
        const report = reports.find((r) => r.file === target)!;
        assert.match(report.lost, /^nothing/, report.lost);
        const again = decodeSnapshot(fs.readFileSync(path.join(dir, target)), target, id);
        assert.equal(again.damaged, null, 'the owner rewrote the snapshot whole');
        assert.equal(again.raw.last, pristine.compacted.commits, 'it holds every commit of the run');
      }
      // the store keeps working
      const next = (expectedSeq ?? 0) + 1;
      const rec = await s.append(id, expectedSeq === null ? h.runStarted() : h.preTools(9));
      assert.equal(rec.seq, next);
      await lease.release();
      await s.close();
      const again = await openDiskStoreReady(dir);
      assert.equal((await again.latest(id)).seq, next);
      await again.close();
      return { detected, quarantined: bad ? true : ('n/a' as const), fellBackTo: expectedSeq };
    } finally {
      await s.close().catch(() => undefined);
    }
  }

  async function lockCase(dir: string, how: Damage, rand: () => number) {
    const id = pristine.runId;
    const lockRel = rel('owner.lock');
    const lockPath = path.join(dir, lockRel);
    // (1) the holder is alive: its heartbeat finds the damage, quarantines it and re-creates its lock
    const reports: CorruptionReport[] = [];
    const a = await openDiskStoreReady(dir, {
      heartbeatMs: 20,
      onEvent: (e) => e.kind === 'corruption' && reports.push(e.report),
    });
    const lease = await a.acquire(id, h.owner('holder'));
    const bad = damage(lockPath, how, rand, false);
    for (let i = 0; i < 200 && !reports.some((r) => r.file === lockRel); i++)
      await new Promise((r) => setTimeout(r, 10));
    const detected = reports.some((r) => r.file === lockRel);
    if (bad) assertQuarantined(dir, lockRel, bad, reports);
    for (let i = 0; i < 100 && !fs.existsSync(lockPath); i++) await new Promise((r) => setTimeout(r, 10));
    const b = await openDiskStoreReady(dir);
    await h.rejects(b.acquire(id, h.owner('intruder')), RunLockedError, /holder/);
    assert.equal(lease.lost, false);
    assert.equal(
      (await a.append(id, h.preTools(9))).seq,
      pristine.frames.at(-1)!.lastSeq + 1,
      'the holder keeps writing',
    );
    await lease.release();
    await a.close();
    // (2) nobody alive: a damaged lock left behind is refused while young, quarantined and taken over when old
    if (bad) {
      fs.writeFileSync(lockPath, bad);
      const err = await h.rejects(b.acquire(id, h.owner('intruder')), RunLockedError, /unreadable/);
      assert.ok(err);
      const old = (Date.now() - 3_600_000) / 1000;
      fs.utimesSync(lockPath, old, old);
      const breports: CorruptionReport[] = [];
      b.onEvent((e) => e.kind === 'corruption' && breports.push(e.report));
      const l2 = await b.acquire(id, h.owner('intruder'));
      assertQuarantined(dir, lockRel, bad, breports);
      await l2.release();
    }
    await b.close();
    return { detected, quarantined: bad ? true : ('n/a' as const), fellBackTo: 'n/a' as const };
  }
});

describe('store: a checkpoint whose checksum is right but whose content breaks the schema', () => {
  it('is refused with an error naming its file when it is first read (records are checked in full on first use)', async () => {
    const dir = h.tmpDir('aw-schema-');
    try {
      const s = await openDiskStoreReady(dir);
      const { run, lease } = await s.createRun(h.newRun(), h.owner('w'));
      const id = run.run_id;
      await s.append(id, h.runStarted());
      await s.append(id, h.terminal(1));
      await lease.release();
      await s.close();
      const seg = fs.readdirSync(path.join(dir, 'runs', id)).find((n) => n.startsWith('segment-'))!;
      const rel = path.posix.join('runs', id, seg);
      const file = path.join(dir, rel);
      const frames = parseSegment(fs.readFileSync(file)).frames;
      const body = frames[2]!.value as { ops: { record: { thread_id: unknown } }[] };
      body.ops[0]!.record.thread_id = 42; // a writer bug, faithfully checksummed
      const frame = encodeCommitFrame(body, frameKey(id));
      fs.writeFileSync(file, Buffer.concat([fs.readFileSync(file).subarray(0, frames[2]!.start), frame]));
      const t = await openDiskStoreReady(dir);
      assert.equal((await t.get(id, 1))?.phase, 'run_started');
      const err = await h.rejects(
        t.latest(id),
        AgentCheckpointCorruptionError,
        /segment-\d{12}\.log.*checkpoint 2 does not match its schema/,
      );
      assert.equal(err.file, rel);
      await h.rejects(t.list(id), AgentCheckpointCorruptionError);
      await t.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
