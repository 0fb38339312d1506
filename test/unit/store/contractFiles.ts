// The store contract of the file journal and of restores, run against both backends beside the
// main contract (contract.test.ts): effect records carry file versions and the checkpoint they
// followed; restore records are durable, numbered, allowed on a finished run, kept by compaction,
// export/import and fork.
import assert from 'node:assert/strict';
import { InvalidInputError, RunNotOwnedError } from '../../../src/store/api/errors';
import type { FileChange, FileVersion } from '../../../src/store/api/schema';
import type { NewRestore, StoreEvent } from '../../../src/store/api/types';
import type { Backend, TestStore } from './contract';
import * as h from './helpers';

const ABSENT: FileVersion = { kind: 'absent' };

export function fileJournalContract(name: string, factory: () => Backend): void {
  describe(`CheckpointStore contract (file journal, restores): ${name}`, function () {
    let backend: Backend;
    let store: TestStore;
    const open: TestStore[] = [];
    const openStore = async () => {
      const s = await backend.open();
      open.push(s);
      return s;
    };
    beforeEach(async () => {
      backend = factory();
      store = await openStore();
    });
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close().catch(() => undefined);
      backend.cleanup();
    });

    async function runWithStep() {
      const { run, lease } = await store.createRun(h.newRun('files'), h.owner('w1'));
      const runId = run.run_id;
      await store.append(runId, h.runStarted());
      const msgs = [
        { role: 'system' as const, content: 'sys' },
        { role: 'user' as const, content: 'do it' },
      ];
      await store.append(runId, h.stepStarted(h.snapshot(1, msgs)));
      const a = h.assistantWithCall(1);
      const post = h.snapshot(1, [...msgs, a], { pending_llm_response: h.pendingResponse(a, 1) });
      await store.append(runId, h.postLlm(post));
      return { runId, lease, post };
    }

    const version = (runId: string, text: string) => h.fileVersion(store, runId, text);

    it('journals file versions: pre-images with the intent (after the newest checkpoint), what changed with the result', async () => {
      const { runId } = await runWithStep();
      await store.append(runId, h.preTools(1)); // seq 4, write-behind: the intent still follows it
      const pre = await version(runId, 'old\r\n');
      const touch: FileChange = {
        path: 'src/a.txt',
        before: pre,
        after: { kind: 'unknown', reason: 'the call has not finished' },
      };
      const intent = await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'write_file',
        input_hash: 'ih',
        side_effecting: true,
        files: [touch],
      });
      assert.equal(intent.checkpoint_seq, 4);
      assert.deepEqual(intent.files, [touch]);
      const post = await version(runId, 'new\r\n');
      const files: FileChange[] = [
        { path: 'src/a.txt', before: pre, after: post },
        { path: 'gone.bin', before: await version(runId, 'x'), after: ABSENT },
      ];
      const scan = { files: 12, ms: 3.5, complete: false, note: 'stopped after 12 files' };
      const done = await store.recordResult(runId, 'call_1', {
        output: 'ok',
        output_hash: 'oh',
        is_error: false,
        blob: null,
        files,
        file_scan: scan,
      });
      assert.deepEqual(done.files, files);
      assert.deepEqual(done.file_scan, scan);
      // A result without files keeps the intent's list.
      await store.recordIntent(runId, {
        tool_call_id: 'call_2',
        step: 1,
        tool_name: 'edit_file',
        input_hash: 'i2',
        side_effecting: true,
        files: [touch],
      });
      assert.deepEqual(
        (await store.recordResult(runId, 'call_2', { output: 'failed', output_hash: 'o2', is_error: true, blob: null }))
          .files,
        [touch],
      );
      await h.rejects(
        store.recordIntent(runId, {
          tool_call_id: 'call_3',
          step: 1,
          tool_name: 'w',
          input_hash: 'i',
          side_effecting: true,
          files: [{ path: '', before: ABSENT, after: ABSENT }],
        }),
        InvalidInputError,
      );
      const other = await openStore();
      assert.deepEqual(
        (await other.listEffects(runId)).map((e) => [e.tool_call_id, e.files, e.checkpoint_seq]),
        [
          ['call_1', files, 4],
          ['call_2', [touch], 4],
        ],
      );
      assert.equal(await other.getBlob(runId, (post as { blob: string }).blob), 'new\r\n');
    });

    it('records restores durably and in order, on a finished run too; refuses a checkpoint the run lacks', async () => {
      const events: StoreEvent[] = [];
      store.onEvent((e) => events.push(e));
      const { runId, lease } = await runWithStep();
      await store.append(runId, h.terminal(1));
      const restore: NewRestore = {
        to_seq: 2,
        files: [
          {
            path: 'a.txt',
            action: 'reverted',
            reason: 'the agent wrote it',
            from: await version(runId, 'agent'),
            to: ABSENT,
          },
        ],
        forked_run_id: null,
        notes: ['`npm install` was not tracked'],
      };
      const first = await store.recordRestore(runId, restore);
      assert.equal(first.id, 'restore-1');
      assert.deepEqual(
        { ...first, id: undefined, created_ms: undefined },
        { ...restore, id: undefined, created_ms: undefined, checkpoint_seq: 4 },
      );
      const second = await store.recordRestore(runId, { ...restore, to_seq: 3, files: [] });
      assert.equal(second.id, 'restore-2');
      assert.equal((await store.getRun(runId))?.state, 'completed', 'a restore changes neither state nor history');
      assert.equal((await store.latest(runId)).seq, 4);
      await h.rejects(store.recordRestore(runId, { ...restore, to_seq: 99 }), InvalidInputError, /no checkpoint 99/);
      assert.ok(events.some((e) => e.kind === 'restore' && e.restore.id === 'restore-2'));
      const other = await openStore();
      await h.rejects(other.recordRestore(runId, restore), RunNotOwnedError);
      assert.deepEqual(
        (await other.listRestores(runId)).map((r) => r.id),
        ['restore-1', 'restore-2'],
      );
      await store.compact(runId);
      assert.deepEqual(await (await openStore()).listRestores(runId), [first, second], 'compaction keeps them');
      await lease.release();
    });

    it('carries restores and file blobs through export/import, and a fork can leave effects behind', async () => {
      const { runId, lease } = await runWithStep();
      const pre = await version(runId, 'before');
      const post = await version(runId, 'after');
      await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'write_file',
        input_hash: 'ih',
        side_effecting: true,
        files: [],
      });
      await store.recordResult(runId, 'call_1', {
        output: 'ok',
        output_hash: 'oh',
        is_error: false,
        blob: null,
        files: [{ path: 'a', before: pre, after: post }],
      });
      await store.recordRestore(runId, { to_seq: 3, files: [], forked_run_id: null, notes: [] });
      const exported = JSON.parse(JSON.stringify(await store.exportRun(runId)));
      await lease.release();
      const imported = await store.importRun(exported, h.owner('imp'));
      assert.equal((await store.listRestores(imported.run_id)).length, 1);
      assert.equal(await store.getBlob(imported.run_id, (pre as { blob: string }).blob), 'before');

      const carried = await store.fork(runId, 3, h.owner('f1'));
      assert.deepEqual(
        (await store.listEffects(carried.run.run_id)).map((e) => e.tool_call_id),
        ['call_1'],
      );
      assert.equal(
        await store.getBlob(carried.run.run_id, (post as { blob: string }).blob),
        'after',
        'the carried effect brings its file blobs',
      );
      await carried.lease.release();
      const rerun = await store.fork(runId, 3, h.owner('f2'), { omitEffects: ['call_1'] });
      assert.deepEqual(await store.listEffects(rerun.run.run_id), [], 'an omitted call runs again in the fork');
      await rerun.lease.release();
    });
  });
}
