// The corruption matrix: every file kind × {truncate, bit-flip, zero-fill, delete, garbage}.
// Each case: detected with a report/error naming the file; the bad file quarantined (its bytes kept,
// never deleted, never read as empty); the run falls back to its last good checkpoint; new writes work.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AgentCheckpointCorruptionError, CheckpointNotFoundError, RunLockedError } from '../../../src/store/api/errors';
import { encodeEnvelope } from '../../../src/store/disk/durableFile';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import type { CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import * as h from './helpers';

const DAMAGES = ['truncate', 'bit-flip', 'zero-fill', 'delete', 'garbage'] as const;
type Damage = (typeof DAMAGES)[number];
const KINDS = ['index.json', 'run.json', 'witness', 'commit:first', 'commit:middle', 'commit:last', 'blob', 'owner.lock'] as const;
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

function damage(file: string, how: Damage, rand: () => number, raw: boolean): Buffer | null {
  const good = fs.readFileSync(file);
  let bad: Buffer;
  if (how === 'delete') {
    fs.rmSync(file);
    return null;
  } else if (how === 'truncate') bad = good.subarray(0, Math.floor(good.length / 2));
  else if (how === 'zero-fill') bad = Buffer.alloc(good.length);
  else if (how === 'garbage') bad = Buffer.from(Array.from({ length: good.length }, () => Math.floor(rand() * 256)));
  else {
    const start = raw ? 0 : good.indexOf('"body":') + 8; // inside the checksummed body
    const at = start + Math.floor(rand() * (good.length - start - 2));
    bad = Buffer.from(good);
    bad[at] = bad[at]! ^ (1 << Math.floor(rand() * 8));
  }
  fs.writeFileSync(file, bad);
  return bad;
}

interface Pristine {
  dir: string;
  runId: string;
  blob: string;
  /** last seq held by each commit number (1-based index). */
  commitLastSeq: number[];
  lockBytes: Buffer;
}

async function buildPristine(): Promise<Pristine> {
  const dir = h.tmpDir('aw-matrix-');
  const s = await openDiskStoreReady(dir);
  const { run, lease } = await s.createRun(h.newRun('victim'), h.owner('builder'));
  const id = run.run_id;
  await s.append(id, h.runStarted()); // commit 1
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let step = 1; step <= 3; step++) {
    await s.append(id, h.stepStarted(h.snapshot(step, msgs)));
    await s.append(id, h.preLlm(step, msgs.length));
    const a = h.assistantWithCall(step);
    msgs = [...msgs, a];
    await s.append(id, h.postLlm(h.snapshot(step, msgs, { pending_llm_response: h.pendingResponse(a, step) }))); // durable
    await s.recordIntent(id, { tool_call_id: `call_${step}`, step, tool_name: 'write_file', input_hash: `ih${step}`, side_effecting: true });
    await s.recordResult(id, `call_${step}`, { output: `wrote ${step} `.repeat(20), output_hash: `oh${step}`, is_error: false, blob: null });
    msgs = [...msgs, { role: 'tool', tool_call_id: `call_${step}`, content: `wrote ${step} `.repeat(20) }];
  }
  const blob = await s.putBlob(id, 'a large tool output\n'.repeat(500));
  await s.append(id, h.terminal(3));
  const lockBytes = fs.readFileSync(path.join(dir, 'runs', id, 'owner.lock'));
  await lease.release();
  await s.close();
  const logDir = path.join(dir, 'runs', id, 'log');
  const commitLastSeq = fs
    .readdirSync(logDir)
    .sort()
    .map((n) => {
      const body = JSON.parse(fs.readFileSync(path.join(logDir, n), 'utf8')).body as { ops: { op: string; record?: { seq: number } }[] };
      return Math.max(0, ...body.ops.filter((o) => o.op === 'record').map((o) => o.record!.seq));
    });
  for (let i = 1; i < commitLastSeq.length; i++) commitLastSeq[i] = Math.max(commitLastSeq[i]!, commitLastSeq[i - 1]!);
  return { dir, runId: id, blob, commitLastSeq, lockBytes };
}

describe('store: corruption matrix (every file kind × every damage)', function () {
  this.timeout(120_000);
  let pristine: Pristine;
  const results: { kind: Kind; how: Damage; detected: boolean; quarantined: boolean | 'n/a'; fellBackTo: number | null | 'n/a' }[] = [];
  before(async () => (pristine = await buildPristine()));
  after(() => {
    fs.rmSync(pristine.dir, { recursive: true, force: true });
    const detected = results.filter((r) => r.detected).length;
    console.log(`      corruption matrix: ${detected}/${results.length} detected (${((100 * detected) / Math.max(1, results.length)).toFixed(0)} %)`);
    for (const r of results) console.log(`        ${r.kind.padEnd(14)} ${r.how.padEnd(10)} detected=${r.detected} quarantined=${r.quarantined} fell_back_to=${r.fellBackTo}`);
  });

  let seed = 1;
  for (const kind of KINDS) {
    for (const how of DAMAGES) {
      it(`${kind} × ${how}`, async () => {
        const rand = rng(seed++);
        const dir = h.tmpDir('aw-case-');
        fs.cpSync(pristine.dir, dir, { recursive: true });
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
  const commitFile = (n: number) => rel('log', `${String(n).padStart(12, '0')}.json`);

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
    const n = pristine.commitLastSeq.length;
    const fullSeq = pristine.commitLastSeq[n - 1]!;
    const target = { 'index.json': 'index.json', 'run.json': rel('run.json'), witness: rel('witness'), 'commit:first': commitFile(1), 'commit:middle': commitFile(4), 'commit:last': commitFile(n), blob: rel('blobs', pristine.blob) }[kind];
    const commitNo = { 'commit:first': 1, 'commit:middle': 4, 'commit:last': n }[kind as string];
    const expectedSeq = commitNo ? (commitNo === 1 ? null : pristine.commitLastSeq[commitNo - 2]!) : fullSeq;
    const bad = damage(path.join(dir, target), how, rand, kind === 'blob');
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
      // Redundant files that are simply gone (a cache, the witness) are rebuilt and logged, not alarms.
      const redundantGone = how === 'delete' && (kind === 'index.json' || kind === 'witness');
      let detected = redundantGone ? recovered.includes(target) && !reports.some((r) => r.file === target) : reports.some((r) => r.file === target);
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
        assert.equal(snap.snapshot.messages.length, snap.record.snapshot!.message_count, 'never empty: the lists are whole');
      }
      if (commitNo) {
        const report = reports.find((r) => r.file === target)!;
        assert.equal(report.fell_back_to_seq, expectedSeq);
        assert.equal(report.lost_seqs?.from, (expectedSeq ?? 0) + 1);
        assert.equal(report.lost_seqs?.to, fullSeq);
        if (commitNo <= 5) assert.notEqual(report.effects_lost, false, 'effects were among the lost commits');
        assert.equal(report.data_lost, true);
        // The loss is recorded in the run itself, and the finished run stays finished.
        const run = (await s.getRun(id))!;
        assert.equal(run.damage?.file, target, 'the damage is recorded in the run');
        assert.equal(run.damage?.state_before, 'completed', 'the witness says the run had finished');
        assert.equal(run.state, 'completed', 'a finished run stays finished');
        if (commitNo <= 5) assert.equal(run.damage?.effects_lost, true, 'the witness counts the lost effect records');
      } else if (kind !== 'blob') {
        const report = reports.find((r) => r.file === target);
        if (report) assert.equal(report.data_lost, false, `${kind}: nothing but a redundant file was lost`);
        assert.equal((await s.getRun(id))!.damage, undefined, 'no damage recorded when no run data was lost');
      }
      if (kind === 'run.json') assert.equal(JSON.parse(fs.readFileSync(path.join(dir, target), 'utf8')).body.run_id, id, 'run.json rebuilt');
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
    const a = await openDiskStoreReady(dir, { heartbeatMs: 20, onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    const lease = await a.acquire(id, h.owner('holder'));
    const bad = damage(lockPath, how, rand, false);
    for (let i = 0; i < 200 && !reports.some((r) => r.file === lockRel); i++) await new Promise((r) => setTimeout(r, 10));
    const detected = reports.some((r) => r.file === lockRel);
    if (bad) assertQuarantined(dir, lockRel, bad, reports);
    for (let i = 0; i < 100 && !fs.existsSync(lockPath); i++) await new Promise((r) => setTimeout(r, 10));
    const b = await openDiskStoreReady(dir);
    await h.rejects(b.acquire(id, h.owner('intruder')), RunLockedError, /holder/);
    assert.equal(lease.lost, false);
    assert.equal((await a.append(id, h.preTools(9))).seq, pristine.commitLastSeq.at(-1)! + 1, 'the holder keeps writing');
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
      const rel = path.posix.join('runs', id, 'log', '000000000002.json');
      const file = path.join(dir, rel);
      const body = JSON.parse(fs.readFileSync(file, 'utf8')).body;
      body.ops[0].record.thread_id = 42; // a writer bug, faithfully checksummed
      fs.writeFileSync(file, encodeEnvelope('commit', body));
      const t = await openDiskStoreReady(dir);
      assert.equal((await t.get(id, 1))?.phase, 'run_started');
      const err = await h.rejects(t.latest(id), AgentCheckpointCorruptionError, /000000000002\.json.*checkpoint 2 does not match its schema/);
      assert.equal(err.file, rel);
      await h.rejects(t.list(id), AgentCheckpointCorruptionError);
      await t.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
