// The one contract every CheckpointStore backend must pass (like langgraph's checkpoint-validation).
// contract.test.ts runs it against the memory and the disk backend.
import assert from 'node:assert/strict';
import {
  CheckpointNotFoundError,
  InvalidInputError,
  InvalidKeyError,
  RunLockedError,
  RunNotOwnedError,
  StoreConflictError,
} from '../../../src/store/api/errors';
import type { CheckpointStore, StoreEvent } from '../../../src/store/api/types';
import type { ChatMessage } from '../../../src/store/api/schema';
import { turnsContract } from './contractTurns';
import { barriersContract } from './contractBarriers';
import * as h from './helpers';
import { sha256 } from '../../../src/common/hash';

export type TestStore = CheckpointStore & { whenOpen(): Promise<void> };

export interface Backend {
  /** A new store instance over the same backing: another window, or a reopen after close. */
  open(opts?: { now?: () => number; deferMs?: number }): Promise<TestStore>;
  cleanup(): void;
}

export function contractSuite(name: string, factory: () => Backend): void {
  describe(`CheckpointStore contract: ${name}`, function () {
    let backend: Backend;
    let store: TestStore;
    const open: TestStore[] = [];
    const openStore = async (opts?: Parameters<Backend['open']>[0]) => {
      const s = await backend.open(opts);
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

    /** A run with run_started and one step (step_started + post_llm with a pending response). */
    async function runWithStep(s = store, title = 'r') {
      const { run, lease } = await s.createRun(h.newRun(title), h.owner('w1'));
      await s.append(run.run_id, h.runStarted());
      const msgs: ChatMessage[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'do it' },
      ];
      await s.append(run.run_id, h.stepStarted(h.snapshot(1, msgs)));
      const a = h.assistantWithCall(1);
      const post = h.snapshot(1, [...msgs, a], { pending_llm_response: h.pendingResponse(a, 1) });
      await s.append(run.run_id, h.postLlm(post));
      return { runId: run.run_id, lease, post };
    }

    turnsContract({ store: () => store, openStore, runWithStep });
    barriersContract({ openStore, runWithStep });

    it('creates runs and pages them newest-updated first', async () => {
      let t = 1_000;
      const s = await openStore({ now: () => t });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        t += 10;
        const { run } = await s.createRun(h.newRun(`run ${i}`), h.owner(`o${i}`));
        ids.push(run.run_id);
        assert.equal(run.state, 'running');
        assert.equal(run.last_seq, 0);
      }
      t += 10;
      await s.setRunState(ids[1]!, 'paused_budget', 'budget'); // run 1 becomes the most recently updated
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.listRuns({ limit: 2, ...(cursor ? { cursor } : {}) });
        assert.ok(page.runs.length <= 2);
        seen.push(...page.runs.map((r) => r.run_id));
        cursor = page.cursor;
      } while (cursor);
      assert.deepEqual(seen, [ids[1], ids[4], ids[3], ids[2], ids[0]]);
      const got = await s.getRun(ids[1]!);
      assert.equal(got?.state, 'paused_budget');
      assert.equal(got?.state_detail, 'budget');
      assert.equal(await s.getRun('no-such-run'), undefined);
      await h.rejects(s.listRuns({ cursor: 'garbage!' }), InvalidKeyError);
    });

    it('appends with monotonic seqs and a parent chain; latest, get and list page backwards', async () => {
      const { runId } = await runWithStep();
      for (let i = 0; i < 5; i++) await store.append(runId, h.preTools(1));
      const latest = await store.latest(runId);
      assert.equal(latest.seq, 8);
      assert.deepEqual(latest.parent, { run_id: runId, seq: 7 });
      const first = await store.get(runId, 1);
      assert.equal(first?.phase, 'run_started');
      assert.equal(first?.parent, null);
      assert.equal(await store.get(runId, 99), undefined);
      const all = await store.list(runId);
      assert.deepEqual(
        all.map((r) => r.seq),
        [8, 7, 6, 5, 4, 3, 2, 1],
      );
      assert.deepEqual(
        (await store.list(runId, { limit: 3 })).map((r) => r.seq),
        [8, 7, 6],
      );
      assert.deepEqual(
        (await store.list(runId, { limit: 3, before: 6 })).map((r) => r.seq),
        [5, 4, 3],
      );
      assert.equal((await store.getRun(runId))?.last_seq, 8);
    });

    it('round-trips a snapshot, keeps older snapshots exact, survives a rewind and a reopen', async () => {
      const { runId, post, lease } = await runWithStep();
      const loaded = await store.loadSnapshot(runId);
      assert.equal(loaded.record.seq, 3);
      assert.deepEqual(loaded.snapshot, post);
      // continue: tool result, next step
      const msgs = [...post.messages, { role: 'tool', tool_call_id: 'call_1', content: 'ok' } as ChatMessage];
      const s2 = h.snapshot(2, msgs, { tool_executions: [h.toolExec(1, 'call_1')] });
      await store.append(runId, h.stepStarted(s2));
      assert.deepEqual((await store.loadSnapshot(runId)).snapshot, s2);
      assert.deepEqual((await store.loadSnapshot(runId, 3)).snapshot, post);
      assert.equal((await store.loadSnapshot(runId, 2)).record.seq, 2);
      // a rewind (shorter list, then different items) is stored as a new base
      const rewound = h.snapshot(3, [msgs[0]!, { role: 'user', content: 'another way' }]);
      await store.append(runId, h.stepStarted(rewound));
      assert.deepEqual((await store.loadSnapshot(runId)).snapshot, rewound);
      assert.deepEqual((await store.loadSnapshot(runId, 4)).snapshot, s2);
      assert.deepEqual((await store.loadSnapshot(runId, 3)).snapshot, post);
      await lease.release();
      await store.close();
      const again = await openStore();
      assert.deepEqual((await again.loadSnapshot(runId)).snapshot, rewound);
      assert.deepEqual((await again.loadSnapshot(runId, 4)).snapshot, s2);
      assert.deepEqual((await again.loadSnapshot(runId, 3)).snapshot, post);
    });

    it('hands out copies: mutating inputs or outputs never changes the store', async () => {
      const { runId } = await runWithStep();
      const a = await store.loadSnapshot(runId);
      a.snapshot.messages.push({ role: 'user', content: 'mutated' });
      (a.snapshot.context as Record<string, unknown>).workspace = 'evil';
      a.record.payload.model = 'evil';
      const b = await store.loadSnapshot(runId);
      assert.equal(b.snapshot.messages.length, 3);
      assert.equal(b.snapshot.context.workspace, '/w');
      assert.equal(b.record.payload.model, 'demo-model');
      const input = h.snapshot(2, [...b.snapshot.messages]);
      await store.append(runId, h.stepStarted(input));
      input.messages[0] = { role: 'system', content: 'changed after append' };
      input.usage.input_tokens = 999;
      const c = await store.loadSnapshot(runId);
      assert.equal((c.snapshot.messages[0] as { content: string }).content, 'sys');
      assert.equal(c.snapshot.usage.input_tokens, 20);
    });

    it('makes durable classes durable at once and write-behind ones at flush (seen from another window)', async () => {
      const s = await openStore({ deferMs: 60_000 });
      const { runId } = await runWithStep(s);
      const other = await openStore();
      assert.equal(
        (await other.latest(runId)).seq,
        3,
        'run_started and post_llm+pending are durable before append resolves',
      );
      await s.append(runId, h.preTools(1)); // write-behind
      assert.equal((await s.latest(runId)).seq, 4, 'the writer reads its own writes');
      assert.equal((await other.latest(runId)).seq, 3, 'not durable yet');
      await s.flush();
      assert.equal((await other.latest(runId)).seq, 4);
      await s.append(runId, h.postTools(1)); // queued, then carried by the next durable write
      await s.recordIntent(runId, {
        tool_call_id: 'c9',
        step: 1,
        tool_name: 't',
        input_hash: 'i',
        side_effecting: true,
      });
      assert.equal((await other.latest(runId)).seq, 5);
      assert.equal((await other.listEffects(runId)).length, 1);
      const post2 = h.snapshot(2, [{ role: 'user', content: 'u' }]); // post_llm without a pending response: write-behind
      await s.append(runId, h.postLlm(post2));
      assert.equal((await other.latest(runId)).seq, 5);
      await s.setRunState(runId, 'paused_cancelled', 'user');
      assert.equal((await other.getRun(runId))?.state, 'paused_cancelled');
      assert.equal((await other.latest(runId)).seq, 6);
    });

    it('commits write-behind checkpoints on a short timer', async () => {
      const s = await openStore({ deferMs: 30 });
      const { runId } = await runWithStep(s);
      const other = await openStore();
      await s.append(runId, h.preTools(1));
      for (let i = 0; i < 100 && (await other.latest(runId)).seq < 4; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal((await other.latest(runId)).seq, 4);
    });

    it('keeps approvals durable: request, pendingOnly, decide once, refuse stale and replayed decisions', async () => {
      const { runId } = await runWithStep();
      const req = {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'write_file',
        category: 'write' as const,
        arguments: { path: 'a' },
        input_hash: 'ih',
        uncertain: false,
        reason: 'write tools ask',
      };
      const a = await store.requestApproval(runId, req);
      assert.equal(a.decision, null);
      assert.deepEqual(
        await store.requestApproval(runId, req),
        a,
        're-requesting the same pending approval returns it',
      );
      await store.requestApproval(runId, { ...req, tool_call_id: 'call_2' });
      assert.equal((await store.getRun(runId))?.pending_approvals, 2);
      const other = await openStore();
      assert.deepEqual(
        (await other.listApprovals(runId, { pendingOnly: true })).map((x) => x.tool_call_id),
        ['call_1', 'call_2'],
      );
      const d = await store.decideApproval(runId, 'call_1', {
        kind: 'approve_edited',
        reason: null,
        arguments: { path: 'b' },
        input_hash: 'ih2',
      });
      assert.equal(d.decision?.kind, 'approve_edited');
      assert.deepEqual(d.decision?.arguments, { path: 'b' });
      await h.rejects(
        store.decideApproval(runId, 'call_1', { kind: 'reject', reason: 'no', input_hash: null }),
        StoreConflictError,
        /already decided/,
      );
      await h.rejects(
        store.decideApproval(runId, 'nope', { kind: 'approve', reason: null, input_hash: null }),
        StoreConflictError,
      );
      await h.rejects(
        store.decideApproval(runId, 'call_2', { kind: 'approve_edited', reason: null, input_hash: null }),
        InvalidInputError,
      );
      assert.deepEqual(
        (await other.listApprovals(runId, { pendingOnly: true })).map((x) => x.tool_call_id),
        ['call_2'],
      );
      assert.equal((await other.listApprovals(runId)).length, 2);
      assert.equal((await other.getRun(runId))?.pending_approvals, 1);
    });

    it('journals effects: intent before result, one result per call', async () => {
      const { runId } = await runWithStep();
      const intent = await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'write_file',
        input_hash: 'ih',
        side_effecting: true,
      });
      assert.equal(intent.idempotency_key, `${runId}/1/call_1`);
      assert.equal(intent.result, null);
      await h.rejects(
        store.recordResult(runId, 'call_x', { output: 'o', output_hash: 'oh', is_error: false, blob: null }),
        StoreConflictError,
        /no intent/,
      );
      const done = await store.recordResult(runId, 'call_1', {
        output: 'wrote',
        output_hash: 'oh',
        is_error: false,
        blob: null,
      });
      assert.equal(done.result?.output, 'wrote');
      assert.deepEqual(
        await store.recordResult(runId, 'call_1', { output: 'wrote', output_hash: 'oh', is_error: false, blob: null }),
        done,
      );
      await h.rejects(
        store.recordResult(runId, 'call_1', { output: 'other', output_hash: 'x', is_error: false, blob: null }),
        StoreConflictError,
      );
      await h.rejects(
        store.recordIntent(runId, {
          tool_call_id: 'call_1',
          step: 1,
          tool_name: 'write_file',
          input_hash: 'ih',
          side_effecting: true,
        }),
        StoreConflictError,
        /replayed/,
      );
      const other = await openStore();
      assert.deepEqual(await other.listEffects(runId), [done]);
    });

    it('records the process a running effect started, durably, until its result', async () => {
      const { runId, lease } = await runWithStep();
      await h.rejects(
        store.recordProcess(runId, 'call_1', { pid: 42, hostname: 'h', started_ms: 1 }),
        StoreConflictError,
        /no intent/,
      );
      await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'run_command',
        input_hash: 'ih',
        side_effecting: true,
      });
      const running = await store.recordProcess(runId, 'call_1', { pid: 42, hostname: 'h', started_ms: 1 });
      assert.deepEqual(running.process, { pid: 42, hostname: 'h', started_ms: 1 });
      assert.deepEqual(
        await store.recordProcess(runId, 'call_1', { pid: 42, hostname: 'h', started_ms: 1 }),
        running,
        'the same process again is a no-op',
      );
      const other = await openStore();
      assert.deepEqual(
        (await other.listEffects(runId))[0]?.process,
        running.process,
        'durable: another window sees it',
      );
      const done = await store.recordResult(runId, 'call_1', {
        output: 'ok',
        output_hash: 'oh',
        is_error: false,
        blob: null,
      });
      assert.deepEqual(
        await store.recordProcess(runId, 'call_1', { pid: 43, hostname: 'h', started_ms: 2 }),
        done,
        'a finished effect keeps its record',
      );
      await lease.release();
    });

    it('writes intents ahead of a batch (on the next barrier) and withdraws one whose call never started', async () => {
      const { runId, lease } = await runWithStep();
      const ids = async (s: CheckpointStore) => (await s.listEffects(runId)).map((e) => e.tool_call_id);
      await h.rejects(store.withdrawIntent(runId, 'call_1'), StoreConflictError, /no intent/);
      await store.recordIntent(runId, h.commandIntent('call_1'), { durability: 'next-barrier' });
      await store.recordIntent(runId, h.commandIntent('call_2'), { durability: 'next-barrier' });
      await store.recordIntent(runId, h.commandIntent('call_3'), { durability: 'next-barrier' });
      assert.deepEqual(await ids(store), ['call_1', 'call_2', 'call_3'], 'applied at once');
      await store.makeDurable(runId);
      assert.deepEqual(await ids(await openStore()), ['call_1', 'call_2', 'call_3'], 'durable with the barrier');

      await store.recordProcess(runId, 'call_1', { pid: 42, hostname: 'h', started_ms: 1 });
      await h.rejects(store.withdrawIntent(runId, 'call_1'), StoreConflictError, /started a process/);
      await store.recordResult(runId, 'call_1', { output: 'ok', output_hash: 'oh', is_error: false, blob: null });
      await h.rejects(store.withdrawIntent(runId, 'call_1'), StoreConflictError, /has a result/);
      const withdrawn = await store.withdrawIntent(runId, 'call_2');
      assert.equal(typeof withdrawn.withdrawn_ms, 'number', 'the withdrawing record is returned');
      await store.withdrawIntent(runId, 'call_3');
      assert.deepEqual(await ids(store), ['call_1'], 'the run holds no effect for a withdrawn call');
      await h.rejects(
        store.recordResult(runId, 'call_2', { output: 'x', output_hash: 'x', is_error: false, blob: null }),
        StoreConflictError,
        /no intent/,
      );
      await h.rejects(store.withdrawIntent(runId, 'call_2'), StoreConflictError, /no intent/);
      await store.makeDurable(runId);
      assert.deepEqual(await ids(await openStore()), ['call_1'], 'the withdrawals are durable with the barrier');

      // Planned afresh: its new intent is a new record (new pre-images), nothing of the withdrawn one kept.
      const files = [
        {
          path: 'a.txt',
          before: { kind: 'absent' as const },
          after: { kind: 'unknown' as const, reason: 'not finished' },
        },
      ];
      const again = await store.recordIntent(runId, { ...h.commandIntent('call_2'), files });
      assert.equal(again.withdrawn_ms, undefined);
      assert.ok(again.intent_ms >= withdrawn.withdrawn_ms!);
      const reread = await (await openStore()).listEffects(runId);
      assert.deepEqual(
        reread.map((e) => [e.tool_call_id, e.withdrawn_ms, e.files?.length ?? 0]),
        [
          ['call_1', undefined, 0],
          ['call_2', undefined, 1],
        ],
      );
      const exported = JSON.stringify(await store.exportRun(runId));
      assert.ok(
        !exported.includes('call_3') && !exported.includes('withdrawn_ms'),
        'an export holds no withdrawn call',
      );
      // A crafted file that "withdraws" a call with a result is not taken: the call stays finished (replayed, never run again).
      const crafted = JSON.parse(exported) as { sha256: string; body: { effects: Record<string, unknown>[] } };
      for (const e of crafted.body.effects) e.withdrawn_ms = 1;
      crafted.sha256 = sha256(h.canonical(crafted.body)); // anyone can edit the file and its checksum
      const imported = await store.importRun(crafted, h.owner('importer'));
      assert.deepEqual(
        (await store.listEffects(imported.run_id)).map((e) => [
          e.tool_call_id,
          e.result?.output ?? null,
          e.withdrawn_ms,
        ]),
        [['call_1', 'ok', undefined]],
        'the finished call kept, the intent-only one withdrawn',
      );
      await lease.release();
      assert.deepEqual(
        await ids(await openStore()),
        ['call_1', 'call_2'],
        'after the run was let go (compacted or not)',
      );
    });

    it('stores content-addressed blobs', async () => {
      const { runId } = await runWithStep();
      const text = 'big output\n'.repeat(1000);
      const hash = await store.putBlob(runId, text);
      assert.match(hash, /^[0-9a-f]{64}$/);
      assert.equal(await store.putBlob(runId, text), hash);
      assert.equal(await (await openStore()).getBlob(runId, hash), text);
      // The same text as UTF-8 bytes is the same blob; so is it with its sha256 taken by the caller.
      const bytes = Buffer.from(`${text}é`, 'utf8');
      const named = await store.putBlob(runId, bytes);
      assert.equal(named, await store.putBlob(runId, `${text}é`));
      assert.equal(await store.putBlob(runId, bytes, named), named);
      assert.equal(await (await openStore()).getBlob(runId, named), `${text}é`);
      await h.rejects(store.getBlob(runId, '../../etc/passwd'), InvalidKeyError);
      await h.rejects(store.getBlob(runId, 'a'.repeat(64)), CheckpointNotFoundError);
    });

    it('forks from a checkpoint: lists up to it, the effects its pending response refers to, parent = source', async () => {
      const { runId, post } = await runWithStep();
      await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'write_file',
        input_hash: 'ih',
        side_effecting: true,
      });
      await store.recordResult(runId, 'call_1', { output: 'ok', output_hash: 'oh', is_error: false, blob: null });
      await store.recordIntent(runId, {
        tool_call_id: 'unrelated',
        step: 1,
        tool_name: 'read',
        input_hash: 'x',
        side_effecting: false,
      });
      await store.append(runId, h.preTools(1)); // seq 4
      await store.append(
        runId,
        h.stepStarted(h.snapshot(2, [...post.messages, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }])),
      );
      const { run, lease } = await store.fork(runId, 4, h.owner('forker'), { title: 'fork' }); // the snapshot at/before 4 is seq 3
      assert.notEqual(run.run_id, runId);
      assert.deepEqual(run.forked_from, { run_id: runId, seq: 3 });
      assert.equal(run.title, 'fork');
      const first = await store.get(run.run_id, 1);
      assert.deepEqual(first?.parent, { run_id: runId, seq: 3 });
      assert.deepEqual((await store.loadSnapshot(run.run_id)).snapshot, post);
      assert.deepEqual(
        (await store.listEffects(run.run_id)).map((e) => [e.tool_call_id, e.result?.output]),
        [['call_1', 'ok']],
      );
      await store.append(run.run_id, h.preTools(1));
      assert.equal((await store.latest(run.run_id)).seq, 2);
      assert.equal((await store.latest(runId)).seq, 5, 'the source is unchanged');
      await lease.release();
      await h.rejects(store.fork(runId, 1, h.owner('x')), CheckpointNotFoundError, new RegExp(runId));
    });

    it('exports one checksummed object and imports it back (new id on collision); refuses tampering', async () => {
      const { runId, lease } = await runWithStep();
      await store.requestApproval(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'w',
        category: 'write',
        arguments: { a: 1 },
        input_hash: 'ih',
        uncertain: false,
        reason: 'r',
      });
      await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'w',
        input_hash: 'ih',
        side_effecting: true,
      });
      const blob = await store.putBlob(runId, 'full output '.repeat(100));
      await store.recordResult(runId, 'call_1', { output: 'full output…', output_hash: 'oh', is_error: false, blob });
      await store.append(runId, h.stepStarted(h.snapshot(2, [{ role: 'user', content: 'x' }])));
      const exported = JSON.parse(JSON.stringify(await store.exportRun(runId))) as {
        sha256: string;
        body: { records: { step: number }[] };
      };
      const fresh = factory();
      try {
        const target = await fresh.open();
        const imported = await target.importRun(exported, h.owner('imp'));
        assert.equal(imported.run_id, runId);
        for (const [src, dst] of [[store, target]] as const) {
          assert.deepEqual(await dst.list(runId, { limit: 1000 }), await src.list(runId, { limit: 1000 }));
          assert.deepEqual(await dst.loadSnapshot(runId, 3), await src.loadSnapshot(runId, 3));
          assert.deepEqual(await dst.listApprovals(runId), await src.listApprovals(runId));
          assert.deepEqual(await dst.listEffects(runId), await src.listEffects(runId));
          assert.equal(await dst.getBlob(runId, blob), await src.getBlob(runId, blob));
        }
        await target.close();
      } finally {
        fresh.cleanup();
      }
      await lease.release();
      const again = await store.importRun(exported, h.owner('imp'));
      assert.notEqual(again.run_id, runId, 'a colliding id gets a new one');
      assert.equal((await store.latest(again.run_id)).run_id, again.run_id);
      assert.equal((await store.loadSnapshot(again.run_id, 3)).snapshot.messages.length, 3);
      const tampered = structuredClone(exported);
      tampered.body.records[0]!.step = 7;
      await h.rejects(store.importRun(tampered, h.owner('imp')), InvalidInputError, /checksum/);
      await h.rejects(
        store.importRun({ hello: 'world' }, h.owner('imp')),
        InvalidInputError,
        /not an Agent Waypoints run export/,
      );
    });

    it('rescan picks up what another window did: a new run, its progress, its deletion', async () => {
      const other = await openStore(); // a second window, open before the first creates anything
      assert.deepEqual((await other.listRuns()).runs, []);
      const { runId, lease } = await runWithStep(store, 'made elsewhere');
      await store.flush();
      assert.equal(await other.rescan(), true);
      assert.equal(await other.rescan(), false, 'nothing new the second time');
      const seen = (await other.listRuns()).runs;
      assert.deepEqual(
        seen.map((r) => [r.run_id, r.title, r.last_seq]),
        [[runId, 'made elsewhere', 3]],
      );
      const late = await openStore(); // a window opened now knows the run from the index, unread
      assert.equal(await late.rescan(), false, 'an unread run whose log did not grow is left alone');
      await store.append(runId, h.terminal(1));
      await other.rescan();
      assert.equal((await other.listRuns()).runs[0]?.state, 'completed', 'an unfinished run is re-read');
      assert.equal(await late.rescan(), true, 'its log grew: read now');
      assert.equal((await late.listRuns()).runs[0]?.state, 'completed');
      await lease.release();
      await store.deleteRun(runId);
      await other.rescan();
      assert.deepEqual((await other.listRuns()).runs, [], 'a deleted run leaves the listing');
    });

    it('deletes runs and prunes finished ones past their TTL', async () => {
      let t = 10_000;
      const s = await openStore({ now: () => t });
      const { runId: done, lease } = await runWithStep(s, 'done');
      await s.append(done, h.terminal(1));
      assert.equal((await s.getRun(done))?.state, 'completed');
      await lease.release();
      const { runId: live } = await runWithStep(s, 'live');
      const { runId: doomed } = await runWithStep(s, 'doomed');
      t += 1_000_000;
      assert.deepEqual(await s.pruneFinished(500_000), [done]);
      assert.equal(await s.getRun(done), undefined);
      assert.ok(await s.getRun(live));
      await s.deleteRun(doomed);
      assert.equal(await s.getRun(doomed), undefined);
      await h.rejects(s.latest(doomed), CheckpointNotFoundError, new RegExp(doomed));
      assert.deepEqual(
        (await s.listRuns()).runs.map((r) => r.run_id),
        [live],
      );
      const other = await openStore();
      await h.rejects(other.deleteRun(live), RunLockedError, /w1/);
      assert.equal(await (await openStore()).getRun(doomed), undefined);
    });

    it('gives a run one owner: a second is refused with the holder, release makes it acquirable', async () => {
      const { runId, lease } = await runWithStep();
      const other = await openStore();
      const err = await h.rejects(other.acquire(runId, h.owner('window two')), RunLockedError, /w1/);
      assert.equal(err.holder.label, 'w1');
      assert.equal((await other.owner(runId))?.label, 'w1');
      await h.rejects(other.append(runId, h.preTools(1)), RunNotOwnedError);
      await h.rejects(store.acquire(runId, h.owner('w1')), RunLockedError);
      await lease.release();
      assert.equal(lease.lost, true);
      await h.rejects(store.append(runId, h.preTools(1)), RunNotOwnedError);
      assert.equal(await other.owner(runId), undefined);
      const l2 = await other.acquire(runId, h.owner('window two'));
      await other.append(runId, h.preTools(1));
      assert.equal((await store.latest(runId)).seq, 3, 'write-behind of the new owner is not durable yet');
      await l2.release();
      assert.equal((await store.latest(runId)).seq, 4, 'release flushes');
    });

    it('validates keys and inputs before use', async () => {
      for (const bad of ['../x', '', 'a/b', '.hidden', '-x', 'x'.repeat(65), 'a\\b', 'ü']) {
        await h.rejects(store.getRun(bad), InvalidKeyError);
        await h.rejects(store.acquire(bad, h.owner('w')), InvalidKeyError);
        await h.rejects(store.createRun({ ...h.newRun(), run_id: bad }, h.owner('w')), InvalidKeyError);
      }
      const { runId } = await runWithStep();
      await h.rejects(
        store.append(runId, { phase: 'step_started', step: 1, payload: { state: 'running', message_count: 0 } }),
        InvalidInputError,
        /snapshot/,
      );
      await h.rejects(
        store.append(runId, { phase: 'pre_llm', step: 1, payload: { model: 3 } }),
        InvalidInputError,
        /payload/,
      );
      await h.rejects(store.append(runId, { phase: 'nope' as never, step: 1, payload: {} }), InvalidInputError);
      await h.rejects(
        store.append(runId, h.stepStarted(h.snapshot(1, [{ role: 'robot', content: 'x' } as never]))),
        InvalidInputError,
        /messages/,
      );
      assert.equal((await store.latest(runId)).seq, 3, 'refused appends leave no trace');
      await h.rejects(store.createRun({ ...h.newRun(), run_id: runId }, h.owner('w')), InvalidKeyError, /exists/);
    });

    it('reports no checkpoint with an error that names the run', async () => {
      const { run } = await store.createRun(h.newRun(), h.owner('w1'));
      await h.rejects(store.latest(run.run_id), CheckpointNotFoundError, new RegExp(run.run_id));
      await h.rejects(store.loadSnapshot(run.run_id), CheckpointNotFoundError, new RegExp(run.run_id));
      await store.append(run.run_id, h.runStarted());
      await h.rejects(store.loadSnapshot(run.run_id), CheckpointNotFoundError, /no snapshot/);
      await h.rejects(store.latest('unknown-run'), CheckpointNotFoundError, /unknown-run/);
    });

    it('emits events for every change', async () => {
      const events: StoreEvent[] = [];
      const sub = store.onEvent((e) => events.push(e));
      const { runId, lease } = await runWithStep();
      await store.requestApproval(runId, {
        tool_call_id: 'c',
        step: 1,
        tool_name: 'w',
        category: 'write',
        arguments: {},
        input_hash: 'i',
        uncertain: false,
        reason: 'r',
      });
      await store.recordIntent(runId, {
        tool_call_id: 'c',
        step: 1,
        tool_name: 'w',
        input_hash: 'i',
        side_effecting: true,
      });
      await store.setRunState(runId, 'awaiting_approval');
      await lease.release();
      await store.deleteRun(runId);
      sub.dispose();
      await store.createRun(h.newRun(), h.owner('w1'));
      const kinds = events.map((e) => e.kind);
      assert.deepEqual(kinds.filter((k) => k === 'checkpoint').length, 3);
      for (const k of ['run-created', 'approval', 'effect', 'run-updated', 'run-deleted'] as const)
        assert.ok(kinds.includes(k), k);
      assert.equal(kinds.filter((k) => k === 'run-created').length, 1, 'no events after dispose');
    });

    it('compacts a run into one commit without changing what it reads', async () => {
      const { runId, post } = await runWithStep();
      await store.recordIntent(runId, {
        tool_call_id: 'call_1',
        step: 1,
        tool_name: 'w',
        input_hash: 'ih',
        side_effecting: true,
      });
      await store.recordResult(runId, 'call_1', {
        output: 'r'.repeat(200),
        output_hash: 'oh',
        is_error: false,
        blob: null,
      });
      await store.append(
        runId,
        h.stepStarted(
          h.snapshot(2, [...post.messages, { role: 'tool', tool_call_id: 'call_1', content: 'r'.repeat(200) }]),
        ),
      );
      await store.flush();
      const before = {
        recs: await store.list(runId),
        snap: await store.loadSnapshot(runId, 3),
        last: await store.loadSnapshot(runId),
        fx: await store.listEffects(runId),
      };
      await store.compact(runId);
      await store.append(runId, h.preLlm(2, 4));
      await store.flush();
      const other = await openStore();
      assert.deepEqual((await other.list(runId)).slice(1), before.recs);
      assert.deepEqual(await other.loadSnapshot(runId, 3), before.snap);
      assert.deepEqual(await other.loadSnapshot(runId), before.last);
      assert.deepEqual(await other.listEffects(runId), before.fx);
      assert.ok((await other.storageBytes(runId)) > 0);
    });
  });
}
