// Versions: the committed version-1 to -11 stores load with the current code, exactly; a
// version-1 run is converted to the segment log, a version-2 snapshot to the framed form, a
// version-3 log to the compact encoding, a run whose witness is a file of its own (store-v5 and
// before) to a segment that holds it, a segment of long-keyed frames (store-v6) to short keys, a
// snapshot of version 5 (store-v7) to version 6 (long strings out of its JSON) and a segment of
// version 5 (store-v8 and before) to version 6 (which may hold copy frames: store-v9), and a segment of
// version 6 (store-v9) to version 7 (which may end in zeros written ahead of its appends: store-v10),
// and a snapshot of version 6 (store-v10 and before) to version 7 (the run's state apart from its
// older records: store-v11), when it is next acquired, and reads the same after;
// a file from a newer version is refused and left untouched; legacy AFK-style checkpoints are
// normalised on import.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../../src/common/hash';
import { encodeEnvelope } from '../../../src/store/disk/durableFile';
import { InvalidInputError, SchemaVersionError } from '../../../src/store/api/errors';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import {
  decodeSnapshot,
  endFrameBytes,
  isFramedSnapshot,
  SNAPSHOT_VERSION,
} from '../../../src/store/disk/snapshotFile';
import { frameKey, parseSegment, SEGMENT_VERSION } from '../../../src/store/disk/segment';
import { readCopy } from '../../../src/store/disk/segmentCopy';
import { readWitnessArea } from '../../../src/store/disk/witness';
import { describeStore } from '../../fixtures/generateStore';
import * as h from './helpers';

const FIXTURE = path.resolve(__dirname, '../../fixtures/store-v1');
const bytes = (dir: string) =>
  Object.fromEntries(
    h
      .listFiles(dir)
      .filter((f) => f !== 'index.json')
      .map((f) => [f, sha256(fs.readFileSync(path.join(dir, f)))]),
  );

describe('store: versions and migrations', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = h.tmpDir('aw-v1-');
    fs.cpSync(path.join(FIXTURE, 'store'), dir, { recursive: true });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads every run, checkpoint, snapshot, approval, effect and blob of the committed v1 store, without rewriting it', async () => {
    const before = bytes(dir);
    const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected.json'), 'utf8'));
    assert.deepEqual(Object.keys(expected.runs).sort(), ['v1-awaiting', 'v1-finished', 'v1-midtools']);
    assert.deepEqual(await describeStore(dir, 1), expected);
    assert.deepEqual(bytes(dir), before, 'reading never rewrites a file');
    const s = await openDiskStoreReady(dir);
    assert.equal((await s.getRun('v1-finished'))?.state, 'completed');
    assert.equal((await s.listApprovals('v1-awaiting', { pendingOnly: true }))[0]?.tool_call_id, 'call_cmd');
    const fx = await s.listEffects('v1-midtools');
    assert.deepEqual(
      fx.map((e) => [e.tool_call_id, e.result !== null]),
      [
        ['call_a', true],
        ['call_b', false],
      ],
    );
    assert.equal((await s.getBlob('v1-midtools', fx[0]!.result!.blob!)).length, 'line of build output\n'.length * 400);
    assert.equal((await s.loadSnapshot('v1-midtools')).snapshot.pending_llm_response?.message.tool_calls?.length, 2);
    // and the old runs go on: acquired to be written, a run is converted to the segment log first
    const lease = await s.acquire('v1-awaiting', h.owner('new version'));
    const runDir = path.join(dir, 'runs', 'v1-awaiting');
    assert.deepEqual(
      fs
        .readdirSync(runDir)
        .filter((n) => !n.startsWith('.') && n !== 'owner.lock')
        .sort(),
      ['segment-000000000005.log', 'snapshot.json'],
      'converted: no log/ folder, no run.json, the witness in the segment',
    );
    await s.decideApproval('v1-awaiting', 'call_cmd', { kind: 'approve', reason: null, input_hash: null });
    await lease.release();
    await s.close();
    const again = await openDiskStoreReady(dir);
    assert.equal((await again.listApprovals('v1-awaiting'))[0]?.decision?.kind, 'approve');
    await again.close();
  });

  it('converts every v1 run to the segment log without changing what it reads', async () => {
    const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected.json'), 'utf8'));
    const s = await openDiskStoreReady(dir);
    for (const id of Object.keys(expected.runs)) await (await s.acquire(id, h.owner('converter'))).release();
    await s.close();
    for (const id of Object.keys(expected.runs))
      assert.ok(!fs.existsSync(path.join(dir, 'runs', id, 'log')), `${id} converted`);
    assert.deepEqual(await describeStore(dir, 1), expected);
  });

  /**
   * A copy of the committed store-v<n> fixture (four runs: awaiting, compacted, finished, midtools):
   * `before` checks the copy as it is, then every run must load exactly as expected.json says without a
   * file rewritten; `after` gets the folder and what it must read as. The copy is removed after.
   */
  async function withFixture(
    n: number,
    o: { before?: (dir: string) => void; after: (dir: string, expected: unknown) => Promise<void> },
  ): Promise<void> {
    const fixture = path.resolve(__dirname, `../../fixtures/store-v${n}`);
    const dir = h.tmpDir(`aw-v${n}-`);
    try {
      fs.cpSync(path.join(fixture, 'store'), dir, { recursive: true });
      const before = bytes(dir);
      const expected = JSON.parse(fs.readFileSync(path.join(fixture, 'expected.json'), 'utf8'));
      assert.deepEqual(
        Object.keys(expected.runs).sort(),
        ['awaiting', 'compacted', 'finished', 'midtools'].map((r) => `v${n}-${r}`),
      );
      o.before?.(dir);
      assert.deepEqual(await describeStore(dir, n), expected);
      assert.deepEqual(bytes(dir), before, 'reading never rewrites a file');
      await o.after(dir, expected);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Every run of the store in `dir` is in the current format: a segment of this version holding the witness, no witness file. */
  function assertConverted(dir: string, expected: unknown): void {
    for (const id of Object.keys((expected as { runs: object }).runs)) {
      const files = fs.readdirSync(path.join(dir, 'runs', id));
      assert.ok(!files.includes('witness'), `${id}: its witness file is gone (${files.join(', ')})`);
      const seg = files.filter((f) => f.startsWith('segment-'));
      assert.equal(seg.length, 1, `${id}: one segment`);
      const parsed = parseSegment(fs.readFileSync(path.join(dir, 'runs', id, seg[0]!)));
      assert.equal((parsed.frames[0]?.value as { segment: number }).segment, SEGMENT_VERSION, `${id}: converted`);
      const w = readWitnessArea(fs.readFileSync(path.join(dir, 'runs', id, seg[0]!)), parsed.witnessAt!);
      assert.equal(w.kind, 'ok', `${id}: the segment holds the witness`);
    }
  }

  /** Every commit frame of the run's segment is in short keys, and checks out only against the run's own id. */
  function assertShortFrames(dir: string, id: string): void {
    const seg = fs.readdirSync(path.join(dir, 'runs', id)).find((f) => f.startsWith('segment-'))!;
    const buf = fs.readFileSync(path.join(dir, 'runs', id, seg));
    const parsed = parseSegment(buf, { runId: id });
    assert.ok(parsed.frames.length > 1 && !parsed.stop, `${id}: frames, read whole`);
    for (const f of parsed.frames.slice(1)) {
      const text = buf.toString('latin1', f.start, f.end);
      assert.match(text, /^\d+\t[0-9a-f]{8}\t\{"n":\d+,/, `${id}: a short frame`);
      assert.equal((f.value as { run_id: string }).run_id, id, `${id}: read back as the run's commit`);
    }
    const foreign = parseSegment(buf, { runId: `${id}-other` });
    assert.equal(foreign.frames.length, 1, `${id}: under another run's id only the header checks out`);
    assert.match(foreign.stop?.reason ?? '', /checksum mismatch/);
  }

  /** Appends a step's checkpoint to a run of the store in `dir`, through the store. */
  async function appendTo(dir: string, id: string): Promise<void> {
    const s = await openDiskStoreReady(dir);
    const lease = await s.acquire(id, h.owner('writer'));
    const latest = await s.latest(id);
    await s.append(id, {
      phase: 'pre_llm',
      step: latest!.step,
      payload: { model: 'm', provider: 'p', message_count: 1 },
    });
    await lease.release();
    await s.close();
    const t = await openDiskStoreReady(dir);
    assert.equal((await t.latest(id))?.phase, 'pre_llm', 'the appended checkpoint reads back');
    await t.close();
  }

  /** Acquires and lets go every run of the store in `dir` (the first write converts an older format). */
  async function writeEach(dir: string, expected: unknown): Promise<void> {
    const s = await openDiskStoreReady(dir);
    for (const id of Object.keys((expected as { runs: object }).runs))
      await (await s.acquire(id, h.owner('writer'))).release();
    await s.close();
  }

  it('loads every run of the committed v2 store exactly, the compacted one included', () =>
    withFixture(2, {
      async after(v2, expected) {
        // Written again, a version-2 snapshot (one enveloped document) is converted to the framed form (a spare and a plain copy) first.
        const snapshot = path.join(v2, 'runs', 'v2-compacted', 'snapshot.json');
        assert.equal(isFramedSnapshot(fs.readFileSync(snapshot)), false);
        await writeEach(v2, expected);
        assert.equal(isFramedSnapshot(fs.readFileSync(snapshot)), true, 'converted on write');
        assert.equal(decodeSnapshot(fs.readFileSync(snapshot), 'snapshot.json', 'v2-compacted').damaged, null);
        assert.deepEqual(await describeStore(v2, 2), expected, 'and reads exactly the same');
      },
    }));

  it('loads every run of the committed v3 store exactly (a compacted run framed, with its spare copy), without rewriting it; converts it when written', () =>
    withFixture(3, {
      before: (v3) =>
        assert.ok(isFramedSnapshot(fs.readFileSync(path.join(v3, 'runs', 'v3-compacted', 'snapshot.json')))),
      async after(v3, expected) {
        // Written again, each run is converted to the compact encoding first (segment version 3, snapshot version 4).
        await writeEach(v3, expected);
        for (const id of Object.keys((expected as { runs: object }).runs)) {
          const files = fs.readdirSync(path.join(v3, 'runs', id));
          const seg = files.find((f) => f.startsWith('segment-'))!;
          const header = parseSegment(fs.readFileSync(path.join(v3, 'runs', id, seg))).frames[0]?.value;
          assert.equal((header as { segment: number }).segment, SEGMENT_VERSION, `${id}: converted on write`);
          const snapshot = fs.readFileSync(path.join(v3, 'runs', id, 'snapshot.json'));
          assert.equal(
            decodeSnapshot(snapshot, 'snapshot.json', id).version,
            SNAPSHOT_VERSION,
            `${id}: its snapshot too`,
          );
        }
        assert.deepEqual(await describeStore(v3, 3), expected, 'converted: reads exactly the same');
      },
    }));

  it('loads every run of the committed v4 store exactly (commits in the compact encoding), without rewriting it', () =>
    withFixture(4, {
      // It holds what the encoding shortens: a result written as its intent's difference.
      before: (v4) =>
        assert.ok(
          fs
            .readFileSync(path.join(v4, 'runs', 'v4-midtools', 'segment-000000000001.log'), 'latin1')
            .includes('"$delta_of"'),
        ),
      async after(v4, expected) {
        await writeEach(v4, expected);
        assertConverted(v4, expected);
        const snapshot = fs.readFileSync(path.join(v4, 'runs', 'v4-compacted', 'snapshot.json'));
        assert.equal(
          decodeSnapshot(snapshot, 'snapshot.json', 'v4-compacted').version,
          SNAPSHOT_VERSION,
          'a version-4 snapshot is rewritten',
        );
        assert.deepEqual(await describeStore(v4, 4), expected, 'acquired and let go: the same');
      },
    }));

  it('loads every run of the committed v5 store exactly; a run compacted as it finished gives its end from the first bytes of its snapshot', () =>
    withFixture(5, {
      before: (v5) =>
        assert.ok(
          endFrameBytes(fs.readFileSync(path.join(v5, 'runs', 'v5-compacted', 'snapshot.json')).subarray(0, 4096)),
          'the end in front',
        ),
      async after(v5, expected) {
        // Its end from what was kept (a fresh store: nothing read), the same as from the run read whole.
        const fresh = await openDiskStoreReady(v5);
        const kept = await fresh.readEnd('v5-compacted', { records: 200 });
        await fresh.close();
        const whole = await openDiskStoreReady(v5);
        await whole.list('v5-compacted');
        assert.deepEqual(kept, await whole.readEnd('v5-compacted', { records: 200 }));
        assert.equal(kept.records.at(-1)?.phase, 'run_terminal');
        await whole.close();
        await writeEach(v5, expected);
        assertConverted(v5, expected);
        assert.deepEqual(await describeStore(v5, 5), expected, 'acquired and let go: the same');
      },
    }));

  it('loads every run of the committed v6 store exactly (the witness in the segment), without rewriting it; written again, converted to short keys', () =>
    withFixture(6, {
      before: (v6) => {
        for (const id of ['v6-awaiting', 'v6-finished', 'v6-midtools', 'v6-compacted'])
          assert.ok(!fs.existsSync(path.join(v6, 'runs', id, 'witness')), `${id}: no witness file`);
      },
      async after(v6, expected) {
        await writeEach(v6, expected);
        assertConverted(v6, expected);
        assert.deepEqual(await describeStore(v6, 6), expected, 'converted: reads exactly the same');
        // Written after the conversion: short frames, read back exactly.
        await appendTo(v6, 'v6-awaiting');
        assertShortFrames(v6, 'v6-awaiting');
      },
    }));

  it('loads every run of the committed v7 store exactly (commit frames in short keys), without rewriting it; written again, converted (snapshot version 6, segment version 6)', () =>
    withFixture(7, {
      before: (v7) => {
        for (const id of ['v7-awaiting', 'v7-midtools']) assertShortFrames(v7, id); // (the others were compacted)
      },
      async after(v7, expected) {
        await writeEach(v7, expected);
        assertConverted(v7, expected);
        for (const id of ['v7-compacted', 'v7-finished']) {
          const f = `runs/${id}/snapshot.json`;
          assert.equal(decodeSnapshot(fs.readFileSync(path.join(v7, f)), f, id).version, SNAPSHOT_VERSION);
        }
        assert.deepEqual(await describeStore(v7, 7), expected, 'acquired and let go: the same');
      },
    }));

  it('loads every run of the committed v8 store exactly (long strings kept out of a snapshot’s JSON), without rewriting it; written again, its segments are converted (version 6)', () =>
    withFixture(8, {
      before: (v8) => {
        const f = path.join(v8, 'runs', 'v8-compacted', 'snapshot.json');
        const text = fs.readFileSync(f, 'latin1');
        // the latin1 message raw (its é and ÿ one byte each, its quotes and backslashes as they are) …
        assert.match(text, /\t~\d+~Explain:\nconst s = "caf\u00e9 \\\\ \u00ff";\n/);
        assert.match(text, /"raw":\[\[\d+,\d+,"lists","messages","items",\d+,"content"\]\]/);
        // … the one with tabs and the one above U+00FF in the JSON, escaped
        assert.match(text, /Makefile:\\nall:\\n\\techo/);
        assert.match(text, /Notes \\u2713 done; /);
        assert.equal(decodeSnapshot(fs.readFileSync(f), 'snapshot.json', 'v8-compacted').damaged, null);
      },
      async after(v8, expected) {
        await writeEach(v8, expected);
        assertConverted(v8, expected);
        assert.deepEqual(await describeStore(v8, 8), expected, 'acquired and let go: the same');
        const s = await openDiskStoreReady(v8);
        const messages = (await s.loadSnapshot('v8-compacted')).snapshot.messages;
        await s.close();
        assert.deepEqual(
          messages.slice(2, 5).map((m) => (m.content as string).split('\n')[0]),
          ['Explain:', 'Makefile:', `Notes ${'\u2713 done; '.repeat(40)}`],
        );
        assert.equal((messages[2]!.content as string).split('\n')[1], 'const s = "caf\u00e9 \\\\ \u00ff";');
      },
    }));

  it('loads every run of the committed v9 store exactly (a copy frame at the end of each segment let go with commits), without rewriting it; written again, its segments are converted (version 7)', () =>
    withFixture(9, {
      before: (v9) => {
        for (const id of ['v9-awaiting', 'v9-midtools']) {
          const seg = fs.readdirSync(path.join(v9, 'runs', id)).find((f) => f.startsWith('segment-'))!;
          const buf = fs.readFileSync(path.join(v9, 'runs', id, seg));
          const parsed = parseSegment(buf, { runId: id });
          assert.equal(parsed.copies.length, 1, `${id}: one copy frame`);
          assert.equal(parsed.copies[0]!.end, buf.length, `${id}: at the end`);
          const c = readCopy(buf, parsed.copies[0]!.start, frameKey(id))!;
          assert.deepEqual(
            [...c.frames.values()],
            parsed.frames.slice(1).map((f) => buf.subarray(f.start, f.end)),
            `${id}: it holds every commit frame, byte for byte`,
          );
          assert.deepEqual(c.header, buf.subarray(0, parsed.frames[0]!.end), `${id}: and the header`);
        }
      },
      async after(v9, expected) {
        await writeEach(v9, expected);
        assertConverted(v9, expected);
        assert.deepEqual(await describeStore(v9, 9), expected, 'acquired and let go: the same');
      },
    }));

  it('loads every run of the committed v10 store exactly (segments of version 7, let go: no room left at their end), without rewriting it; written again, its snapshots are converted (version 7)', () =>
    withFixture(10, {
      before: (v10) => {
        for (const id of ['v10-awaiting', 'v10-midtools']) {
          const seg = fs.readdirSync(path.join(v10, 'runs', id)).find((f) => f.startsWith('segment-'))!;
          const buf = fs.readFileSync(path.join(v10, 'runs', id, seg));
          const parsed = parseSegment(buf, { runId: id });
          assert.equal((parsed.frames[0]?.value as { segment: number }).segment, 7);
          assert.equal(parsed.stop, null);
          assert.equal(
            parsed.copies.at(-1)?.end,
            buf.length,
            `${id}: its copy frame ends the file (the room was cut off)`,
          );
        }
      },
      async after(v10, expected) {
        // its snapshots (version 6) keep their end in front: read from their first bytes until converted
        assert.ok(
          endFrameBytes(fs.readFileSync(path.join(v10, 'runs', 'v10-compacted', 'snapshot.json')).subarray(0, 4096)),
          'the end in front of a version-6 snapshot',
        );
        const before = bytes(v10);
        await writeEach(v10, expected);
        assertConverted(v10, expected);
        const after = bytes(v10);
        for (const f of Object.keys(before))
          if (f.endsWith('snapshot.json')) {
            assert.notEqual(after[f], before[f], `${f}: converted`);
            assert.equal(decodeSnapshot(fs.readFileSync(path.join(v10, f)), f, f.split('/')[1]!).version, 7);
          } else assert.equal(after[f], before[f], `${f}: not rewritten`);
        assert.deepEqual(await describeStore(v10, 10), expected, 'acquired and let go: the same');
      },
    }));

  it('loads every run of the committed v11 store exactly (snapshots of version 7: the run’s state apart from its older records, read when asked for), without rewriting it; written again, nothing is converted', () =>
    withFixture(11, {
      before: (v11) => {
        for (const id of ['v11-compacted', 'v11-finished']) {
          const f = `runs/${id}/snapshot.json`;
          const read = decodeSnapshot(fs.readFileSync(path.join(v11, f)), f, id);
          assert.equal(read.version, 7);
          assert.equal((read.raw.ops.at(-1) as { op: string }).op, 'compacted', `${id}: its state part ends so`);
          assert.ok(read.history && read.history().length > 0, `${id}: its older records apart`);
          assert.ok(endFrameBytes(fs.readFileSync(path.join(v11, f)).subarray(0, 4096)), `${id}: the end in front`);
        }
      },
      async after(v11, expected) {
        // Loaded for a resume: the older records stay unread until one is asked for.
        const s = await openDiskStoreReady(v11);
        const lease = await s.acquire('v11-finished', h.owner('resume'));
        const { model } = await s.readHandle('v11-finished');
        assert.equal(model.historyPending, true, 'its older records not read yet');
        assert.ok((await s.loadSnapshot('v11-finished')).snapshot.messages.length > 0);
        assert.equal(model.historyPending, true, 'a resume reads none of them');
        assert.equal((await s.list('v11-finished', { limit: 1000 })).at(-1)?.seq, 1);
        assert.equal(model.historyPending, false, 'listed: read');
        await lease.release();
        await s.close();
        const before = bytes(v11);
        await writeEach(v11, expected);
        assertConverted(v11, expected);
        assert.deepEqual(bytes(v11), before, 'current: acquired and let go without a write, no file is rewritten');
        assert.deepEqual(await describeStore(v11, 11), expected, 'acquired and let go: the same');
      },
    }));

  it('refuses a run whose log holds a commit from a newer version, leaves the file untouched, keeps the rest readable', async () => {
    const file = path.join(dir, 'runs', 'v1-midtools', 'log', '000000000007.json');
    const newer = encodeEnvelope('commit', {
      run_id: 'v1-midtools',
      first: 7,
      last: 7,
      ops: [],
      added_in_v3: true,
    }).replace('"schema_version":2', '"schema_version":3');
    fs.writeFileSync(file, newer);
    const s = await openDiskStoreReady(dir);
    const err = await h.rejects(s.loadSnapshot('v1-midtools'), SchemaVersionError, /newer than this version/);
    assert.ok(err.message.includes('000000000007.json'));
    await h.rejects(s.acquire('v1-midtools', h.owner('old version')), SchemaVersionError);
    assert.equal(fs.readFileSync(file, 'utf8'), newer);
    assert.deepEqual(
      fs.readdirSync(path.join(dir, 'quarantine')),
      [],
      'not quarantined: it is not corrupt, just newer',
    );
    assert.equal((await s.latest('v1-finished')).phase, 'run_terminal');
    await s.close();
    assert.equal(fs.readFileSync(file, 'utf8'), newer);
  });

  it('opens a store whose index.json is from a newer version without touching it', async () => {
    const index = path.join(dir, 'index.json');
    const newer = `{"schema_version":3,"kind":"index","sha256":"${'0'.repeat(64)}","body":{"v3":"layout"}}`;
    fs.writeFileSync(index, newer);
    const s = await openDiskStoreReady(dir);
    assert.deepEqual((await s.listRuns()).runs.map((r) => r.run_id).sort(), [
      'v1-awaiting',
      'v1-finished',
      'v1-midtools',
    ]);
    const { run, lease } = await s.createRun(h.newRun('new'), h.owner('w'));
    await lease.release();
    await s.close();
    assert.equal(fs.readFileSync(index, 'utf8'), newer, 'never overwritten by an older version');
    const again = await openDiskStoreReady(dir);
    assert.ok((await again.getRun(run.run_id))?.run_id);
    await again.close();
  });

  it('imports legacy AFK-style checkpoints (string schema_version, no seq, snapshot in the payload)', async () => {
    const legacy = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'legacy-afk.json'), 'utf8'));
    const s = await openDiskStoreReady(dir);
    const run = await s.importRun(legacy, h.owner('importer'));
    assert.equal(run.run_id, 'afk-7f3c2a10-9b1e-4c55-8f0e-2d6a1c9e4b77');
    assert.equal(run.thread_id, 'thread-42');
    assert.equal(run.state, 'interrupted');
    assert.equal(run.task, 'fix the failing test');
    const records = (await s.list(run.run_id)).reverse();
    assert.deepEqual(
      records.map((r) => [r.seq, r.phase, r.schema_version]),
      [
        [1, 'run_started', 2],
        [2, 'step_started', 2],
        [3, 'post_llm', 2],
        [4, 'pre_tool_batch', 2],
      ],
    );
    assert.deepEqual(records[2]!.parent, { run_id: run.run_id, seq: 2 });
    const snap = await s.loadSnapshot(run.run_id);
    assert.equal(snap.record.seq, 3);
    assert.equal(snap.snapshot.messages.length, 3);
    assert.equal(snap.snapshot.state, 'running', 'AFK "degraded" maps to running');
    assert.equal(snap.snapshot.normalized_model, 'gpt-4o-2024-08-06');
    assert.deepEqual(snap.snapshot.pending_llm_response?.message.tool_calls, [
      { id: 'tc_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"test/a.test.js"}' } },
    ]);
    assert.equal(snap.snapshot.tool_executions[0]?.is_error, false);
    assert.equal((await s.loadSnapshot(run.run_id, 2)).snapshot.messages.length, 2);
    assert.equal(records[2]!.payload.model, 'gpt-4o-2024-08-06');
    assert.equal(
      'messages' in records[2]!.payload,
      false,
      'the payload keeps phase fields; the snapshot holds the lists',
    );
    const single = await s.importRun(legacy[0], h.owner('importer'));
    assert.notEqual(single.run_id, run.run_id, 'a colliding id gets a new one');
    await h.rejects(s.importRun([{ ...legacy[0], schema_version: '2.0' }], h.owner('i')), InvalidInputError, /2\.0/);
    const broken = structuredClone(legacy);
    broken[2].payload.messages[1] = { role: 'robot' };
    await h.rejects(s.importRun(broken, h.owner('i')), InvalidInputError, /message 1 of legacy checkpoint 3/);
    const badPending = structuredClone(legacy);
    badPending[2].payload.pending_llm_response = 'not a response';
    await h.rejects(s.importRun(badPending, h.owner('i')), InvalidInputError, /pending LLM response/);
    await s.close();
  });
});
