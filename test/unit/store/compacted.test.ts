// A compacted run's snapshot of version 7 (disk/compacted.ts): the run's state apart from its older
// records. A resume reads the state alone; the older records are read the first time one is asked
// for, and read exactly as the live run had them — after a rewind of its lists too, and with a
// segment tail after the snapshot (a crash). A history that does not read back is an error naming
// the file, never a shorter run.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store/disk/store';
import { decodeSnapshot } from '../../../src/store/disk/snapshotFile';
import { Compacted, readCompacted } from '../../../src/store/disk/compacted';
import { newCodec } from '../../../src/store/disk/codec';
import { fastValid, fastValidModels } from '../../../src/store/core/fastValid';
import { AgentCheckpointCorruptionError } from '../../../src/store/api/errors';
import { RunModel } from '../../../src/store/core/runModel';
import type { CheckpointStore, CorruptionReport } from '../../../src/store/api/types';
import type { ChatMessage, CheckpointRecord } from '../../../src/store/api/schema';
import * as h from './helpers';

/** A step with a side-effecting call: start, barrier, response, intent, result, end of the batch. */
async function step(s: CheckpointStore, id: string, k: number, msgs: ChatMessage[]): Promise<ChatMessage[]> {
  await s.append(id, h.stepStarted(h.snapshot(k, msgs)));
  await s.makeDurable(id);
  await s.append(id, h.preLlm(k, msgs.length));
  const a = h.assistantWithCall(k);
  msgs = [...msgs, a];
  await s.append(id, h.postLlm(h.snapshot(k, msgs, { pending_llm_response: h.pendingResponse(a, k) })));
  await s.recordIntent(id, h.commandIntent(`call_${k}`, k));
  const out = `output of step ${k} `.repeat(k % 3 === 0 ? 30 : 2);
  await s.recordResult(id, `call_${k}`, { output: out, output_hash: `o${k}`, is_error: false, blob: null });
  await s.append(id, h.postTools(k));
  return [...msgs, { role: 'tool', tool_call_id: `call_${k}`, content: out }];
}

/** Everything a reader of the run sees: every record, the effects, the newest snapshot and older ones. */
async function reading(s: CheckpointStore, id: string, seqs: number[]): Promise<string> {
  const records = await s.list(id, { limit: 1000 });
  const at = [];
  for (const seq of seqs) at.push(await s.loadSnapshot(id, seq));
  return h.canonical({ records, effects: await s.listEffects(id), latest: await s.loadSnapshot(id), at });
}

/** A store in `root` (compacting every few commits) with a run that has taken `steps` steps. */
async function started(root: string, title: string, steps: number) {
  const s = await openDiskStoreReady(root, { compactAfterCommits: 8 });
  const { run, lease } = await s.createRun(h.newRun(title), h.owner('w'));
  const id = run.run_id;
  await s.append(id, h.runStarted());
  let msgs: ChatMessage[] = [{ role: 'user', content: 'go' }];
  for (let k = 1; k <= steps; k++) msgs = await step(s, id, k, msgs);
  return { s, id, lease, msgs };
}

describe('store: a compacted run’s older records, read when asked for (snapshot version 7)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = h.tmpDir('aw-compacted-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('resumes from the state alone; the older records, asked for, read exactly as the live run had them (a rewind and a crash tail too)', async () => {
    const root = path.join(dir, 'store');
    const { s, id, lease, msgs: first } = await started(root, 'compacted', 6);
    let msgs = first;
    // A rewind: the next step starts from fewer messages (as a condense or a restore leaves them).
    msgs = msgs.slice(0, 5);
    const beforeRewind = (await s.list(id, { limit: 1 }))[0]!.seq;
    for (let k = 7; k <= 12; k++) msgs = await step(s, id, k, msgs);
    const seqs = [2, 9, beforeRewind, beforeRewind + 1];
    const live = await reading(s, id, seqs);
    await lease.release(); // compacted (in the background as it worked, and as it is let go)

    const snap = path.join(root, 'runs', id, 'snapshot.json');
    const read = decodeSnapshot(fs.readFileSync(snap), 'snapshot.json', id);
    assert.ok(
      read.history && read.history().length > 30,
      `the older records in a part of their own: ${read.history?.().length}`,
    );

    const again = await openDiskStoreReady(root, { compactAfterCommits: 1000 });
    const lease2 = await again.acquire(id, h.owner('resume'));
    const { model } = await again.readHandle(id);
    assert.equal(model.historyPending, true, 'loaded without its older records');
    assert.ok(model.lastRewindSeq > beforeRewind, 'the lists were cut short once: their tails replayed from the state');
    const latest = await again.loadSnapshot(id);
    // (the newest snapshot is the response's: the tool message goes into the next step's)
    assert.deepEqual(latest.snapshot.messages, msgs.slice(0, -1), 'the newest snapshot whole');
    assert.equal((await again.getRun(id))?.last_seq, model.lastSeq);
    assert.equal(model.historyPending, true, 'a resume reads none of them');
    assert.equal(await reading(again, id, seqs), live, 'asked for: exactly what the live run had');
    assert.equal(model.historyPending, false);

    // Going on after the snapshot, then a crash: the snapshot and the segment tail read as the live run.
    msgs = await step(again, id, 13, msgs);
    await again.flush();
    const liveAfter = await reading(again, id, seqs);
    const crash = path.join(dir, 'crash');
    fs.cpSync(root, crash, { recursive: true });
    await lease2.release();
    await again.close();
    const afterCrash = await openDiskStoreReady(crash);
    assert.equal((await afterCrash.readHandle(id)).model.historyPending, true);
    assert.deepEqual((await afterCrash.loadSnapshot(id)).snapshot.messages, msgs.slice(0, -1));
    assert.equal(await reading(afterCrash, id, seqs), liveAfter);
    await afterCrash.close();
    await s.close();
  });

  it('damage to a history chunk is found when the run loads, not when its records are asked for: read from the spare, nothing lost', async () => {
    const root = path.join(dir, 'store');
    const { s, id, lease } = await started(root, 'damaged history', 8);
    const live = await reading(s, id, [3]);
    await lease.release();
    await s.close();
    const file = path.join(root, 'runs', id, 'snapshot.json');
    const buf = fs.readFileSync(file);
    const header = /"copy":"json".*?"history":\{"chunk":(\d+),"ops":(\d+)\}/.exec(buf.toString('latin1'));
    assert.ok(header, 'a history in its own chunks');
    const at = buf.indexOf(`{"i":${header[1]},"ops":[`);
    assert.ok(at > 0, 'the plain copy of the first history chunk');
    buf[at + 20] = buf[at + 20]! ^ 0x04;
    fs.writeFileSync(file, buf);

    const reports: CorruptionReport[] = [];
    const again = await openDiskStoreReady(root, { onEvent: (e) => e.kind === 'corruption' && reports.push(e.report) });
    const l = await again.acquire(id, h.owner('resume'));
    assert.equal(reports.length, 1, 'reported as the run loads');
    assert.equal(reports[0]!.file, `runs/${id}/snapshot.json`);
    assert.equal(reports[0]!.data_lost, false);
    assert.match(reports[0]!.lost, /^nothing/);
    assert.equal(await reading(again, id, [3]), live, 'every record read, from the spare copy');
    await l.release();
    await again.close();
  });

  it('the compacted state is checked by the fast path first: it takes only what zod takes', async () => {
    const root = path.join(dir, 'store');
    const { s, id, lease } = await started(root, 'fast compacted', 4);
    await lease.release();
    await s.close();
    const read = decodeSnapshot(fs.readFileSync(path.join(root, 'runs', id, 'snapshot.json')), 'snapshot.json', id);
    const op = read.raw.ops[read.raw.ops.length - 1] as Record<string, unknown>;
    assert.equal(op.op, 'compacted');
    assert.ok(fastValidModels(Compacted), 'modelled whole: a real one never falls back to zod');
    assert.ok(fastValid(Compacted)(op));
    const variants: Record<string, unknown>[] = [
      { ...op, count: 0 },
      { ...op, count: 1.5 },
      { ...op, snapshot_seqs: [0] },
      { ...op, snapshot_seqs: 'x' },
      { ...op, updated_ms: '1' },
      { ...op, newest: [] },
      { ...op, newest: [{ seq: 1 }] },
      { ...op, codec: { ...(op.codec as object), payloads: { a: 1 } } },
      { ...op, codec: null },
      { ...op, extra: 1 },
      { ...op, op: 'tails' },
    ];
    for (const v of variants) {
      assert.equal(fastValid(Compacted)(v), false, `the fast path takes ${JSON.stringify(v).slice(0, 80)}`);
      if (!('extra' in v)) assert.equal(Compacted.safeParse(v).success, false, 'zod refuses it too');
    }
    // Refused by both: the file is named, the run is not read as one without state.
    const crafted = { ...read.raw, ops: [...read.raw.ops.slice(0, -1), { ...op, newest: [] }] };
    assert.throws(
      () => readCompacted(crafted, null, newCodec(), read.raw.meta!, 'runs/x/snapshot.json', id),
      (err: unknown) =>
        err instanceof AgentCheckpointCorruptionError &&
        /^runs\/x\/snapshot\.json is corrupt: its compacted state is invalid \(/.test(err.message),
    );
  });

  it('a history that does not read back is an error naming the file, not a shorter run', () => {
    const meta = h.runMeta({ run_id: 'r1', thread_id: 'r1' });
    const record = (seq: number, snapshot: boolean): CheckpointRecord => ({
      run_id: 'r1',
      thread_id: 'r1',
      schema_version: 2,
      phase: 'step_started',
      seq,
      parent: seq > 1 ? { run_id: 'r1', seq: seq - 1 } : null,
      timestamp_ms: 1000 + seq,
      step: seq,
      payload: {},
      snapshot: snapshot
        ? ({
            ...h.snapshot(seq, []),
            messages: undefined,
            tool_executions: undefined,
            subagent_executions: undefined,
            message_count: 0,
            tool_execution_count: 0,
            subagent_execution_count: 0,
          } as never)
        : null,
    });
    const file = 'runs/r1/snapshot.json';
    const adopt = (read: () => { op: 'record'; record: CheckpointRecord }[]) => {
      const m = new RunModel(meta);
      m.adoptCompacted(
        { count: 3, tails: new Map(), newest: [record(3, true)], snapshotSeqs: [3], updatedMs: 1003, read },
        file,
      );
      return m;
    };
    const corrupt = (why: RegExp) => (e: unknown) =>
      e instanceof AgentCheckpointCorruptionError && e.file === file && why.test(e.message);
    // fewer records than its state says
    const short = adopt(() => [{ op: 'record', record: record(1, false) }]);
    assert.equal(short.lastSeq, 3);
    assert.equal(short.summary().last_seq, 3, 'the summary needs none of them');
    assert.throws(
      () => short.records,
      corrupt(/snapshot\.json is corrupt: its history holds 1 records, its state says 3/),
    );
    assert.throws(() => short.record(1), corrupt(/its history holds 1 records/), 'every ask fails the same way');
    // a gap in the seqs
    const gap = adopt(() => [1, 3, 3].map((q) => ({ op: 'record' as const, record: record(q, q === 3) })));
    assert.throws(() => gap.verified(1), corrupt(/checkpoint seq 3 where 2 was expected/));
    // a snapshot its state does not list
    const extra = adopt(() => [1, 2, 3].map((q) => ({ op: 'record' as const, record: record(q, true) })));
    assert.throws(() => extra.rebuildOps(), corrupt(/checkpoint 1 and the snapshot seqs disagree/));
    // the reader itself failing (only a writer bug lands there)
    const thrown = adopt(() => {
      throw new Error('its history chunk 4 does not read back');
    });
    assert.throws(() => thrown.records, corrupt(/snapshot\.json is corrupt: its history chunk 4 does not read back/));
    // and the newest records must be the run's newest
    assert.throws(
      () =>
        new RunModel(meta).adoptCompacted(
          { count: 3, tails: new Map(), newest: [record(2, true)], snapshotSeqs: [2], updatedMs: 0, read: () => [] },
          file,
        ),
      /a compacted history without its newest records/,
    );
    assert.throws(
      () =>
        new RunModel(meta).adoptCompacted(
          {
            count: 3,
            tails: new Map(),
            newest: [{ ...record(3, true), run_id: 'r2' }],
            snapshotSeqs: [3],
            updatedMs: 0,
            read: () => [],
          },
          file,
        ),
      /newest record 3 where 3 was expected/,
      "another run's record",
    );
  });
});
