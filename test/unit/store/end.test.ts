// A run's end (store readEnd, core/end.ts): the newest checkpoints and what a view of them needs.
// Computed from a run in memory, and kept by each compaction (disk: in front of snapshot.json; memory:
// beside its one commit) so another window reads it without the run's log. What was kept is exactly
// what would be computed, for any number of newest records up to what was kept; it is what the whole
// run says (the newest records, the latest snapshot's messages from where they start, the calls' effects
// and approvals, the waiting ones, where a restore can start, the checkpoints restores went back to).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStoreReady } from '../../../src/store';
import type { ChatMessage, FileVersion, RunEnd } from '../../../src/store/api/schema';
import type { CheckpointStore } from '../../../src/store/api/types';
import { END_RECORDS } from '../../../src/store/core/end';
import { endFrameBytes, readEndFrame } from '../../../src/store/disk/snapshotFile';
import { encodeFrame } from '../../../src/store/disk/frame';
import { MemoryDisk, openMemoryStore } from '../../../src/store/memory/store';
import * as h from './helpers';

const STEPS = 40; // 6 checkpoints a step: more than END_RECORDS

/** A finished run with file changes, approvals (decided and waiting), restores (one to its start), compacted. */
async function writeRun(store: CheckpointStore): Promise<string> {
  const { run, lease } = await store.createRun(h.newRun('end'), h.owner('writer'));
  const id = run.run_id;
  await store.append(id, h.runStarted());
  const messages: ChatMessage[] = [{ role: 'user', content: 'go' }];
  const execs: ReturnType<typeof h.toolExec>[] = [];
  for (let step = 1; step <= STEPS; step++) {
    await store.append(id, h.stepStarted(h.snapshot(step, [...messages], { tool_executions: [...execs] })));
    await store.append(id, h.preLlm(step, messages.length));
    const call = h.assistantWithCall(step);
    messages.push(call);
    await store.append(id, h.postLlm(h.snapshot(step, [...messages], { tool_executions: [...execs] })));
    await store.append(id, h.preTools(step));
    const callId = `call_${step}`;
    if (step % 7 === 0 || step === STEPS)
      await store.requestApproval(id, {
        tool_call_id: callId,
        step,
        tool_name: 'write_file',
        category: 'write',
        arguments: { path: `f${step}.txt` },
        input_hash: `in_${callId}`,
        uncertain: false,
        reason: 'write tools ask',
      });
    if (step % 7 === 0 && step < STEPS)
      await store.decideApproval(id, callId, { kind: 'approve', reason: null, input_hash: `in_${callId}` });
    const before: FileVersion = { kind: 'absent' };
    const after = await h.fileVersion(store, id, `step ${step}`);
    await store.recordIntent(id, {
      tool_call_id: callId,
      step,
      tool_name: 'write_file',
      input_hash: `in_${callId}`,
      side_effecting: true,
      // the file journal: early steps only, so where a restore can start lies before the newest records
      ...(step <= 3
        ? { files: [{ path: `f${step}.txt`, before, after: { kind: 'unknown', reason: 'running' } }] }
        : {}),
    });
    await store.recordResult(id, callId, {
      output: `wrote f${step}.txt`,
      output_hash: `out_${callId}`,
      is_error: false,
      blob: null,
      ...(step <= 3 ? { files: [{ path: `f${step}.txt`, before, after }] } : {}),
    });
    messages.push({ role: 'tool', tool_call_id: callId, content: `wrote f${step}.txt` });
    execs.push(h.toolExec(step, callId));
    await store.append(id, h.postTools(step));
    if (step === 5) await store.recordRestore(id, { to_seq: 3, files: [], forked_run_id: null, notes: [] });
  }
  await store.recordRestore(id, { to_seq: 2, files: [], forked_run_id: null, notes: ['to the start'] });
  await store.postMessage(id, { id: 'q1', text: 'later' });
  await store.compact(id);
  await lease.release();
  return id;
}

/** Stores over one disk; `keepEndFrom`: from how many checkpoints a compaction keeps the run's end. */
interface Backend {
  open(): Promise<CheckpointStore>;
  /** Whether the run's storage holds a kept end. */
  keptEnd(runId: string): boolean;
  /** The run's snapshot.json (disk). */
  file(runId: string): string;
}
const BACKENDS: { name: string; make: (keepEndFrom: number) => Backend }[] = [
  {
    name: 'disk',
    make: (keepEndFrom) => {
      const dir = h.tmpDir('aw-end-');
      return {
        open: () => openDiskStoreReady(dir, { keepEndFrom }),
        keptEnd: (runId) =>
          endFrameBytes(fs.readFileSync(path.join(dir, 'runs', runId, 'snapshot.json')).subarray(0, 4096)) !== null,
        file: (runId) => path.join(dir, 'runs', runId, 'snapshot.json'),
      };
    },
  },
  {
    name: 'memory',
    make: (keepEndFrom) => {
      const disk = new MemoryDisk();
      return {
        open: () => openMemoryStore({ disk, keepEndFrom }),
        keptEnd: (runId) => disk.runs.get(runId)?.end !== undefined,
        file: () => {
          throw new Error('a memory store has no files');
        },
      };
    },
  },
];

for (const b of BACKENDS) {
  describe(`store: a run's end (${b.name})`, function () {
    this.timeout(60_000);

    it('what a compaction kept is what the run in memory computes, for any number of newest records; and it is what the whole run says', async () => {
      const backend = b.make(100);
      const open = () => backend.open();
      const writer = await open();
      const runId = await writeRun(writer);
      assert.ok(backend.keptEnd(runId), 'kept');
      const whole = {
        records: (await writer.list(runId, { limit: 10_000 })).reverse(),
        snapshot: (await writer.loadSnapshot(runId)).snapshot,
        effects: await writer.listEffects(runId),
        approvals: await writer.listApprovals(runId),
        inbox: await writer.listInbox(runId),
        restores: await writer.listRestores(runId),
      };
      assert.ok(whole.records.length > END_RECORDS);
      for (const n of [1, 2, 7, 40, 123, END_RECORDS]) {
        const computed = await writer.readEnd(runId, { records: n }); // the run is in memory here
        const fresh = await open(); // another window: nothing read yet
        const kept = await fresh.readEnd(runId, { records: n });
        assert.deepEqual(kept, computed, `${n}: kept = computed`);
        await fresh.close();
        assertIsTheEnd(computed, whole, n);
      }
      // More than was kept: read whole (the same as computed).
      const fresh = await open();
      assert.deepEqual(await fresh.readEnd(runId, { records: 250 }), await writer.readEnd(runId, { records: 250 }));
      await Promise.all([fresh.close(), writer.close()]);
    });

    if (b.name === 'disk')
      it('a crafted end (its checksum right, its content not: another run, records out of order, a bad message, a restore target missing) is not used: the run is read whole', async () => {
        const backend = b.make(100);
        const writer = await backend.open();
        const runId = await writeRun(writer);
        const whole = await writer.readEnd(runId, { records: 200 });
        await writer.close(); // its index written: the stores below know the run without reading it
        const file = backend.file(runId);
        const good = fs.readFileSync(file);
        const lineEnd = good.indexOf(0x0a) + 1;
        const frameEnd = endFrameBytes(good.subarray(0, 4096))!;
        const { last } = readEndFrame(good.subarray(0, frameEnd), runId)!; // the commit it was kept at
        assert.ok(fs.readFileSync(file).equals(good));
        // Control: a well-formed end written in its place is what is read (the log is not: it says otherwise).
        const marked = { ...whole, inbox: whole.inbox.map((m) => ({ ...m, text: 'as kept' })) };
        const asKept = encodeFrame({ end: 1, run_id: runId, last, value: marked });
        fs.writeFileSync(file, Buffer.concat([good.subarray(0, lineEnd), asKept, good.subarray(frameEnd)]));
        const control = await backend.open();
        assert.deepEqual(await control.readEnd(runId, { records: 200 }), marked);
        await control.close();
        const crafted: ((e: RunEnd) => unknown)[] = [
          (e) => ({ ...e, records: e.records.map((r) => ({ ...r, run_id: 'someone-else' })) }),
          (e) => ({ ...e, records: [...e.records].reverse() }),
          (e) => ({ ...e, snapshot: { ...e.snapshot!, messages: [{ role: 'system-ish', content: 1 }] } }),
          (e) => ({ ...e, restore_targets: [] }),
          () => 'not an end at all',
        ];
        for (const [i, craft] of crafted.entries()) {
          const value = craft(structuredClone(whole));
          const frame = encodeFrame({ end: 1, run_id: runId, last, value });
          fs.writeFileSync(file, Buffer.concat([good.subarray(0, lineEnd), frame, good.subarray(frameEnd)]));
          const fresh = await backend.open();
          assert.deepEqual(await fresh.readEnd(runId, { records: 200 }), whole, `crafted ${i}: read whole`);
          await fresh.close();
        }
      });

    it('a run shorter than keepEndFrom keeps no end (a view reads it whole): the same answer, from its log', async () => {
      const backend = b.make(1000);
      const writer = await backend.open();
      const runId = await writeRun(writer); // 241 checkpoints
      assert.equal(backend.keptEnd(runId), false, 'none kept');
      const fresh = await backend.open();
      assert.deepEqual(await fresh.readEnd(runId, { records: 50 }), await writer.readEnd(runId, { records: 50 }));
      await Promise.all([fresh.close(), writer.close()]);
    });
  });
}

/** The end's parts, each against what the whole run says. */
function assertIsTheEnd(
  end: RunEnd,
  whole: {
    records: RunEnd['records'];
    snapshot: NonNullable<RunEnd['snapshot']>;
    effects: RunEnd['effects'];
    approvals: RunEnd['approvals'];
    inbox: RunEnd['inbox'];
    restores: RunEnd['restores'];
  },
  n: number,
): void {
  assert.deepEqual(end.records, whole.records.slice(-n), `${n}: the newest records, oldest first`);
  const from = end.messages_from;
  const oldestCount = Math.min(...end.records.flatMap((r) => (r.snapshot ? [r.snapshot.message_count] : [])));
  assert.equal(
    from,
    Math.max(0, Math.min(oldestCount, whole.snapshot.messages.length) - 1),
    `${n}: where messages start`,
  );
  const { messages, tool_executions, subagent_executions, ...header } = end.snapshot!;
  const { messages: all, tool_executions: allExecs, subagent_executions: _, ...wholeHeader } = whole.snapshot;
  assert.deepEqual(header, wholeHeader, `${n}: the latest snapshot's header`);
  assert.deepEqual(messages, all.slice(from), `${n}: its messages from there on`);
  assert.deepEqual(subagent_executions, []);
  const calls = new Set(
    messages.flatMap((m) =>
      m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : m.role === 'tool' ? [m.tool_call_id] : [],
    ),
  );
  assert.deepEqual(
    tool_executions,
    allExecs.filter((e) => calls.has(e.tool_call_id)),
  );
  const horizon = whole.effects.filter((e) => (e.files?.length ?? 0) > 0).at(-1)!;
  assert.deepEqual(
    end.effects,
    whole.effects.filter((e) => calls.has(e.tool_call_id) || e === horizon || e.tool_call_id === horizon.tool_call_id),
    `${n}: the calls' effects and where a restore can start`,
  );
  assert.ok(
    end.effects.some((e) => e.tool_call_id === 'call_3'),
    'the newest effect that changed files',
  );
  assert.deepEqual(
    end.approvals,
    whole.approvals.filter((a) => calls.has(a.tool_call_id) || a.decision === null),
  );
  assert.ok(
    end.approvals.some((a) => a.tool_call_id === `call_${STEPS}` && a.decision === null),
    'the waiting approval',
  );
  assert.deepEqual(end.inbox, whole.inbox);
  assert.deepEqual(end.restores, whole.restores);
  const oldest = end.records[0]!.seq;
  assert.deepEqual(
    end.restore_targets.map((r) => r.seq),
    [...new Set(whole.restores.map((r) => r.to_seq))].filter((s) => s < oldest).sort((a, b) => a - b),
    `${n}: the checkpoints restores went back to`,
  );
  for (const r of end.restore_targets) assert.deepEqual(r, whole.records[r.seq - 1]);
}
