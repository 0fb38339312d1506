// Format 1 (docs/format.md): the store written by format 1's code (test/fixtures/store-format1) loads
// exactly, without a file rewritten, and a run written before its witness file existed opens and gets
// one; a file of another version is refused and left untouched, never taken for damage; the migration
// mechanism carries a document of an older schema_version forward, step by step (a synthetic version-0
// index, test/fixtures/format-version0); legacy AFK-style checkpoints are normalised on import.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../../src/common/hash';
import { InvalidInputError, SchemaVersionError } from '../../../src/store/api/errors';
import { IndexBody } from '../../../src/store/core/storedSchema';
import type { Migration } from '../../../src/store/core/migrations';
import { decodeEnvelope } from '../../../src/store/disk/durableFile';
import { encodeFrame } from '../../../src/store/disk/frame';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { describeStore } from '../../fixtures/generateStore';
import * as h from './helpers';

const FIXTURES = path.resolve(__dirname, '../../fixtures');
const FORMAT1 = path.join(FIXTURES, 'store-format1');
const RUNS = ['f1-awaiting', 'f1-compacted', 'f1-finished', 'f1-midtools'];
const bytes = (dir: string) =>
  Object.fromEntries(
    h
      .listFiles(dir)
      .filter((f) => f !== 'index.json' && f !== 'index_head.json') // caches of the runs' files
      .map((f) => [f, sha256(fs.readFileSync(path.join(dir, f)))]),
  );

describe('store: format 1 and its versions', function () {
  this.timeout(30_000);
  const tmp = h.suiteTmp();
  const expected = (): unknown => JSON.parse(fs.readFileSync(path.join(FORMAT1, 'expected.json'), 'utf8'));
  const copy = () => {
    const dir = tmp('aw-format1-');
    fs.cpSync(path.join(FORMAT1, 'store'), dir, { recursive: true });
    return dir;
  };
  const writeEach = async (dir: string) => {
    const s = await openDiskStoreReady(dir);
    for (const id of RUNS) await (await s.acquire(id, h.owner('writer'))).release();
    await s.close();
  };

  it('loads every run of the committed format-1 store exactly; read, acquired and let go, no file is rewritten', async () => {
    const dir = copy();
    const before = bytes(dir);
    assert.deepEqual(Object.keys((expected() as { runs: object }).runs).sort(), RUNS);
    assert.deepEqual(await describeStore(dir, 1), expected());
    assert.deepEqual(bytes(dir), before, 'reading never rewrites a file');
    const s = await openDiskStoreReady(dir);
    assert.equal((await s.getRun('f1-finished'))?.state, 'completed');
    assert.equal((await s.listApprovals('f1-awaiting', { pendingOnly: true }))[0]?.tool_call_id, 'call_cmd');
    const fx = await s.listEffects('f1-midtools');
    assert.deepEqual(
      fx.map((e) => [e.tool_call_id, e.result !== null]),
      [
        ['call_a', true],
        ['call_b', false],
      ],
    );
    assert.equal((await s.getBlob('f1-midtools', fx[0]!.result!.blob!)).length, 'line of build output\n'.length * 400);
    // A compacted run's older records stay unread until one is asked for (disk/compacted.ts).
    const lease = await s.acquire('f1-finished', h.owner('resume'));
    const { model } = await s.readHandle('f1-finished');
    assert.ok((await s.loadSnapshot('f1-finished')).snapshot.messages.length > 0);
    assert.equal(model.historyPending, true, 'a resume reads none of its older records');
    assert.equal((await s.list('f1-finished', { limit: 1000 })).at(-1)?.seq, 1);
    assert.equal(model.historyPending, false, 'listed: read');
    await lease.release();
    await s.close();
    await writeEach(dir);
    assert.deepEqual(bytes(dir), before, 'current: acquired and let go without a write, no file is rewritten');
    const t = await openDiskStoreReady(dir);
    const l = await t.acquire('f1-awaiting', h.owner('decider'));
    await t.decideApproval('f1-awaiting', 'call_cmd', { kind: 'approve', reason: null, input_hash: null });
    await l.release();
    await t.close();
    const again = await openDiskStoreReady(dir);
    assert.equal((await again.listApprovals('f1-awaiting'))[0]?.decision?.kind, 'approve', 'and the runs go on');
    await again.close();
  });

  it('a run written before its witness file existed opens exactly, and gets one when next acquired', async () => {
    const dir = copy();
    for (const id of RUNS) fs.rmSync(path.join(dir, 'runs', id, 'witness'));
    const o = await h.openCollecting(dir);
    await o.s.close();
    assert.deepEqual(await describeStore(dir, 1), expected());
    await writeEach(dir);
    for (const id of RUNS) assert.equal(h.witnessOf(dir, id).witness?.state, (await describeRun(dir, id)).state);
    assert.deepEqual(o.reports, [], 'not damage');
    assert.deepEqual(await describeStore(dir, 1), expected(), 'and reads the same after');
  });

  it('a segment of another version (newer or older) is refused and left untouched, not taken for damage', async () => {
    for (const version of [8, 6]) {
      const dir = copy();
      const file = path.join(dir, 'runs', 'f1-awaiting', 'segment-000000000001.log');
      const meta = h.runMeta({ run_id: 'f1-awaiting', thread_id: 'f1-awaiting' });
      const other = Buffer.concat([
        encodeFrame({ segment: version, run_id: 'f1-awaiting', first: 1, meta }),
        encodeFrame({ x: 1 }),
      ]);
      fs.writeFileSync(file, other);
      const o = await h.openCollecting(dir);
      const err = await h.rejects(o.s.acquire('f1-awaiting', h.owner('w')), SchemaVersionError, /schema_version/);
      assert.match(err.message, version > 7 ? /newer than this version/ : /does not read/);
      assert.deepEqual(fs.readFileSync(file), other, 'left untouched');
      assert.deepEqual(o.reports, [], 'not quarantined: it is not damaged, only of another version');
      assert.equal((await o.s.latest('f1-midtools')).phase, 'pre_tool_batch', 'the other runs read on');
      await o.s.close();
    }
  });

  it('index.json of a newer version is never overwritten; one older than any migration is rebuilt from runs/', async () => {
    for (const version of [3, 1]) {
      const dir = copy();
      const index = path.join(dir, 'index.json');
      const body = '{"other":"layout"}';
      const other = `{"schema_version":${version},"kind":"index","sha256":"${sha256(body)}","body":${body}}`;
      fs.writeFileSync(index, other);
      const o = await h.openCollecting(dir);
      assert.deepEqual((await o.s.listRuns()).runs.map((r) => r.run_id).sort(), RUNS);
      await o.s.close();
      if (version > 2) assert.equal(fs.readFileSync(index, 'utf8'), other, 'never overwritten by an older version');
      else
        assert.ok(
          o.recovered.some((r) => r.file === 'index.json'),
          'rebuilt, and said so',
        );
      assert.deepEqual(o.reports, [], 'neither is damage');
    }
  });

  it('migrations: a synthetic version-0 index goes through each step in order, then its schema; without a step it is refused, untouched', async () => {
    const file = path.join(FIXTURES, 'format-version0', 'index.json');
    const v0 = fs.readFileSync(file);
    type V0 = { entries: Record<string, unknown>[] };
    const chain: Record<number, Migration> = {
      // 0 → 1: the names of today's run summary.
      0: (_kind, body) => ({
        runs: (body as V0).entries.map((e) => ({
          run_id: e.id,
          thread_id: e.thread,
          title: e.title,
          task: e.task,
          agent_name: e.agent,
          model: e.model,
          created_ms: e.created,
          forked_from: null,
          parent_run_id: null,
          state: e.state,
          state_detail: null,
          step: e.step,
          last_seq: e.seq,
          last_phase: e.phase,
          updated_ms: e.updated,
          pending_approvals: 0,
          commits: e.commits,
        })),
      }),
      // 1 → 2: its count of commits renamed.
      1: (_kind, body) => ({
        runs: (body as { runs: Record<string, unknown>[] }).runs.map(({ commits, ...r }) => ({
          ...r,
          durable_commits: commits,
        })),
      }),
    };
    const index = IndexBody.parse(decodeEnvelope(v0, 'index.json', 'index', null, chain));
    assert.deepEqual(
      index.runs.map((r) => [r.run_id, r.title, r.last_seq, r.durable_commits]),
      [['r0', 'A run of version 0', 3, 3]],
    );
    assert.throws(() => decodeEnvelope(v0, 'index.json', 'index', null, { 1: chain[1]! }), SchemaVersionError, 'a gap');
    assert.throws(() => decodeEnvelope(v0, 'index.json', 'index', null), /schema_version 0, which this version/);
    // In a store: refused as the cache it is, rebuilt from runs/ (there are none), the file untouched.
    const dir = tmp('aw-version0-');
    fs.copyFileSync(file, path.join(dir, 'index.json'));
    const o = await h.openCollecting(dir);
    assert.deepEqual((await o.s.listRuns()).runs, []);
    await o.s.close();
    assert.deepEqual(fs.readFileSync(path.join(dir, 'index.json')), v0);
  });

  it('imports legacy AFK-style checkpoints (string schema_version, no seq, snapshot in the payload)', async () => {
    const legacy = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'legacy-afk.json'), 'utf8'));
    const s = await openDiskStoreReady(tmp('aw-afk-'));
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

/** A run's summary as a fresh store reads it. */
async function describeRun(dir: string, id: string) {
  const s = await openDiskStoreReady(dir);
  try {
    return (await s.getRun(id))!;
  } finally {
    await s.close();
  }
}
