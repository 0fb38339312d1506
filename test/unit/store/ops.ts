// A small language of store operations for the property tests: fast-check generates Op sequences;
// `applyOp` runs one against a real store; `Model` says what a correct store would answer.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  CheckpointNotFoundError,
  RunLockedError,
  RunNotOwnedError,
  StoreConflictError,
  InvalidKeyError,
} from '../../../src/store/api/errors';
import type { ChatMessage, RunState, RuntimeSnapshot } from '../../../src/store/api/schema';
import type { CheckpointStore, RunLease } from '../../../src/store/api/types';
import * as h from './helpers';

export type Op =
  | { t: 'create'; run: number }
  | {
      t: 'append';
      run: number;
      kind: 'deferred' | 'snapshot' | 'durable' | 'terminal';
      grow: number;
      rewindTo: number | null;
    }
  | { t: 'request'; run: number; call: number }
  | { t: 'decide'; run: number; call: number; kind: 'approve' | 'reject' }
  | { t: 'intent'; run: number; call: number }
  | { t: 'result'; run: number; call: number }
  | { t: 'withdraw'; run: number; call: number }
  | { t: 'state'; run: number; state: RunState }
  | { t: 'release'; run: number }
  | { t: 'acquire'; run: number }
  | { t: 'flush' }
  | { t: 'reopen' };

// Mostly run 0, so requests meet their decisions and releases their acquires; sometimes the others.
const run = fc.oneof(
  { arbitrary: fc.constant(0), weight: 6 },
  { arbitrary: fc.integer({ min: 1, max: 2 }), weight: 2 },
);
const call = fc.integer({ min: 0, max: 1 });
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant('create' as const), run }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant('append' as const),
      run,
      kind: fc.constantFrom('deferred' as const, 'snapshot' as const, 'durable' as const, 'terminal' as const),
      grow: fc.integer({ min: 0, max: 2 }),
      rewindTo: fc.option(fc.integer({ min: 0, max: 6 }), { freq: 6 }),
    }),
    weight: 8,
  },
  { arbitrary: fc.record({ t: fc.constant('request' as const), run, call }), weight: 3 },
  {
    arbitrary: fc.record({
      t: fc.constant('decide' as const),
      run,
      call,
      kind: fc.constantFrom('approve' as const, 'reject' as const),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ t: fc.constant('intent' as const), run, call }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('result' as const), run, call }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('withdraw' as const), run, call }), weight: 2 },
  {
    arbitrary: fc.record({
      t: fc.constant('state' as const),
      run,
      state: fc.constantFrom<RunState>('running', 'awaiting_approval', 'paused_error', 'interrupted'),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ t: fc.constant('release' as const), run }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant('acquire' as const), run }), weight: 2 },
  { arbitrary: fc.constant({ t: 'flush' as const }), weight: 1 },
  { arbitrary: fc.constant({ t: 'reopen' as const }), weight: 1 },
);

export const runIdOf = (i: number) => `prop-run-${i}`;
const ME = h.owner('prop');

/** Every sequence starts with the three runs created (random ops on missing runs teach little). */
export const CREATE_ALL: Op[] = [0, 1, 2].map((run) => ({ t: 'create', run }));

/** The conversation a run has after `n` messages (deterministic, so model and store agree). */
const message = (i: number): ChatMessage =>
  i % 2 === 0
    ? { role: 'user', content: `message ${i} `.repeat(1 + (i % 5)) }
    : { role: 'assistant', content: `reply ${i}` };

export interface Outcome {
  ok: boolean;
  /** Error class name, or a short description of the value. */
  what: string;
}

/** The store side: a store instance plus the leases it holds and each run's current message count. */
export class Driver {
  leases = new Map<number, RunLease>();
  msgs = new Map<number, ChatMessage[]>();
  constructor(
    public store: CheckpointStore,
    private readonly reopenStore: () => Promise<CheckpointStore>,
    /**
     * After an acquire, the run's newest snapshot is read as a resume reads it (loadResumeSnapshot),
     * checked against what this driver wrote — every item it holds the same, the ones it leaves out
     * holes where it says — and the driver goes on from its own messages (the run is not read whole).
     */
    private readonly resumeChecks = false,
  ) {}

  async apply(op: Op): Promise<Outcome> {
    try {
      return { ok: true, what: await this.run(op) };
    } catch (err) {
      return { ok: false, what: (err as Error).name };
    }
  }

  private snapshotFor(op: Extract<Op, { t: 'append' }>, step: number, pending: boolean): RuntimeSnapshot {
    let msgs = this.msgs.get(op.run) ?? [];
    if (op.rewindTo !== null && op.rewindTo < msgs.length) msgs = msgs.slice(0, op.rewindTo);
    for (let i = 0; i < op.grow; i++) msgs = [...msgs, message(msgs.length)];
    const a = h.assistantWithCall(step, `call_${op.run}_${step}`);
    // A condense now and then (context management's: messages[1, through) summarised), so a resume
    // point has messages it may leave out.
    const condense =
      msgs.length >= 4 && op.grow === 2
        ? {
            model_context: {
              stub_before: 0,
              stub_chars: 2000,
              condense: { id: `condense-${step}`, pre_seq: 1, head: 1, through: msgs.length - 2, summary: 's', step },
              learned_window: null,
              hold: false,
            },
          }
        : {};
    return h.snapshot(step, msgs, {
      ...condense,
      ...(pending ? { pending_llm_response: h.pendingResponse(a, step) } : {}),
    });
  }

  private checkResume(id: string, wrote: readonly ChatMessage[]): Promise<void> {
    return checkResumeOf(this.store, id, wrote);
  }

  private async run(op: Op): Promise<string> {
    const s = this.store;
    if (op.t === 'flush') return (void (await s.flush()), 'flushed');
    if (op.t === 'reopen') {
      // close (flushes, releases) and open again, re-acquiring what this window held
      const held = [...this.leases.keys()];
      await s.close();
      this.leases.clear();
      this.store = await this.reopenStore();
      for (const i of held) this.leases.set(i, await this.store.acquire(runIdOf(i), ME));
      return 'reopened';
    }
    const id = runIdOf(op.run);
    switch (op.t) {
      case 'create': {
        const r = await s.createRun({ ...h.newRun(`run ${op.run}`), run_id: id }, ME);
        this.leases.set(op.run, r.lease);
        this.msgs.set(op.run, []);
        return r.run.run_id;
      }
      case 'append': {
        const step = Math.floor(((await s.getRun(id))?.last_seq ?? 0) / 3) + 1;
        let input;
        if (op.kind === 'deferred') input = h.preTools(step);
        else if (op.kind === 'terminal') input = h.terminal(step);
        else {
          const snap = this.snapshotFor(op, step, op.kind === 'durable');
          input = op.kind === 'durable' ? h.postLlm(snap) : h.stepStarted(snap);
          const rec = await s.append(id, input);
          this.msgs.set(op.run, snap.messages);
          return `seq ${rec.seq}`;
        }
        return `seq ${(await s.append(id, input)).seq}`;
      }
      case 'request':
        return (
          (
            await s.requestApproval(id, {
              tool_call_id: `c${op.call}`,
              step: 1,
              tool_name: 'w',
              category: 'write',
              arguments: { c: op.call },
              input_hash: 'ih',
              uncertain: false,
              reason: 'r',
            })
          ).decision?.kind ?? 'pending'
        );
      case 'decide':
        return (
          await s.decideApproval(id, `c${op.call}`, {
            kind: op.kind,
            reason: op.kind === 'reject' ? 'no' : null,
            input_hash: null,
          })
        ).decision!.kind;
      case 'intent':
        return (
          await s.recordIntent(id, {
            tool_call_id: `c${op.call}`,
            step: 1,
            tool_name: 'w',
            input_hash: 'ih',
            side_effecting: true,
          })
        ).result
          ? 'done'
          : 'intent';
      case 'result':
        return (
          await s.recordResult(id, `c${op.call}`, {
            output: `out ${op.call}`,
            output_hash: `oh${op.call}`,
            is_error: false,
            blob: null,
          })
        ).result!.output;
      case 'withdraw':
        await s.withdrawIntent(id, `c${op.call}`);
        return 'withdrawn';
      case 'state':
        return (await s.setRunState(id, op.state, null)).state;
      case 'release':
        await this.leases.get(op.run)?.release();
        this.leases.delete(op.run);
        return 'released';
      case 'acquire': {
        const l = await s.acquire(id, ME);
        this.leases.set(op.run, l);
        if (this.resumeChecks) {
          await this.checkResume(id, this.msgs.get(op.run) ?? []);
          return 'acquired';
        }
        const snap = await s.loadSnapshot(id).catch(() => undefined);
        this.msgs.set(op.run, snap?.snapshot.messages ?? []);
        return 'acquired';
      }
    }
  }
}

/** The run's resume snapshot holds what the driver wrote, items and holes as it says (or throws an assertion). */
async function checkResumeOf(s: CheckpointStore, id: string, wrote: readonly ChatMessage[]): Promise<void> {
  const got = await s.loadResumeSnapshot(id).catch((err: unknown) => {
    if (err instanceof CheckpointNotFoundError) return null;
    throw err;
  });
  if (!got) return;
  const list = got.snapshot.messages;
  const o = got.omitted.messages;
  assert.equal(list.length, wrote.length, `${id}: the resume snapshot's messages`);
  for (let i = 0; i < list.length; i++) {
    if (i >= o.from && i < o.to) assert.ok(!(i in list), `${id}: message ${i} left out, yet held`);
    else assert.deepEqual(list[i], wrote[i], `${id}: message ${i}`);
  }
}

interface ModelRun {
  seqs: number;
  owned: boolean;
  state: RunState;
  approvals: Map<number, 'pending' | 'approve' | 'reject'>;
  effects: Map<number, 'intent' | string>;
  /** seq → message count of the snapshot written at that seq. */
  snapshots: Map<number, number>;
  msgs: number;
}

/** What a correct store answers, in the same Outcome terms. */
export class Model {
  runs = new Map<number, ModelRun>();

  apply(op: Op): Outcome {
    const ok = (what: string): Outcome => ({ ok: true, what });
    const err = (cls: { name: string }): Outcome => ({ ok: false, what: cls.name });
    if (op.t === 'flush') return ok('flushed');
    if (op.t === 'reopen') return ok('reopened');
    const r = this.runs.get(op.run);
    if (op.t === 'create') {
      if (r) return err(InvalidKeyError);
      this.runs.set(op.run, {
        seqs: 0,
        owned: true,
        state: 'running',
        approvals: new Map(),
        effects: new Map(),
        snapshots: new Map(),
        msgs: 0,
      });
      return ok(runIdOf(op.run));
    }
    if (op.t === 'acquire') {
      if (!r) return err(CheckpointNotFoundError);
      if (r.owned) return err(RunLockedError);
      r.owned = true;
      return ok('acquired');
    }
    if (op.t === 'release') {
      if (r) r.owned = false;
      return ok('released');
    }
    if (!r || !r.owned) return err(RunNotOwnedError);
    switch (op.t) {
      case 'append': {
        r.seqs++;
        if (op.kind === 'terminal') r.state = 'completed';
        if (op.kind === 'snapshot' || op.kind === 'durable') {
          if (op.rewindTo !== null && op.rewindTo < r.msgs) r.msgs = op.rewindTo;
          r.msgs += op.grow;
          r.snapshots.set(r.seqs, r.msgs);
        }
        return ok(`seq ${r.seqs}`);
      }
      case 'request': {
        const a = r.approvals.get(op.call);
        if (a !== 'pending') r.approvals.set(op.call, 'pending');
        return ok('pending');
      }
      case 'decide': {
        if (r.approvals.get(op.call) !== 'pending') return err(StoreConflictError);
        r.approvals.set(op.call, op.kind);
        return ok(op.kind);
      }
      case 'intent': {
        const e = r.effects.get(op.call);
        if (e && e !== 'intent') return err(StoreConflictError);
        r.effects.set(op.call, 'intent');
        return ok('intent');
      }
      case 'result': {
        const e = r.effects.get(op.call);
        if (e === undefined) return err(StoreConflictError);
        r.effects.set(op.call, `out ${op.call}`);
        return ok(`out ${op.call}`);
      }
      case 'withdraw': {
        // Only an intent that has not started (no result here) is withdrawn; then the run holds no effect for it.
        if (r.effects.get(op.call) !== 'intent') return err(StoreConflictError);
        r.effects.delete(op.call);
        return ok('withdrawn');
      }
      case 'state':
        r.state = op.state;
        return ok(op.state);
    }
  }
}
