// The guards (src/actions/guards.ts): each reason an action is refused, in the one wording the
// commands, the run view and the tree show — and RunGuards reading the facts from a real store
// (who holds the run), the runner (what executes here) and the workspace's trust.
import assert from 'node:assert/strict';
import {
  ActionRefusedError,
  RunGuards,
  runReasons,
  whyNotDecide,
  whyNotFork,
  whyNotHandOff,
  whyNotRestore,
  whyNotTakeBack,
  withWorkersNote,
  whyNotResume,
  whyNotUndoRestore,
  whyReadOnly,
  type RunFacts,
} from '../../../src/actions/guards';
import { runActions } from '../../../src/views/run/header';
import type { RestoreRecord, RunState } from '../../../src/store/api/schema';
import { createMemoryStore } from '../../../src/store/memory/store';
import { owner } from '../loop/support';

const run = (state: RunState, o: { pending?: number; last?: number } = {}): RunFacts['run'] => ({
  run_id: 'run-1',
  state,
  pending_approvals: o.pending ?? 0,
  last_seq: o.last ?? 9,
});
const other = { label: 'VS Code window “other”', pid: 42 };

function restoreRecord(actions: RestoreRecord['files'][number]['action'][]): RestoreRecord {
  const v = { kind: 'absent' } as const;
  return {
    id: 'restore-1',
    to_seq: 2,
    checkpoint_seq: 9,
    created_ms: 0,
    files: actions.map((action, i) => ({ path: `f${i}`, action, reason: 'r', from: v, to: v })),
    forked_run_id: null,
    notes: [],
  };
}

describe('guards: why an action may not happen now', () => {
  it('restore: restricted mode, executing (here, or `running` when unknown), held elsewhere, no checkpoint, nothing changed after it', () => {
    const paused = run('paused_cancelled');
    const at = { seq: 3, lastChangeSeq: 5 };
    assert.match(whyNotRestore({ run: paused, trusted: false }, at)!, /^Restricted mode: restoring files writes/);
    assert.equal(
      whyNotRestore({ run: paused, active: true }, at),
      'The run is executing: cancel it before restoring its files.',
    );
    assert.equal(
      whyNotRestore({ run: run('running') }, at),
      'The run is executing: cancel it before restoring its files.',
    );
    assert.equal(whyNotRestore({ run: run('running'), active: false }, at), null, 'known not to execute here');
    assert.equal(
      whyNotRestore({ run: paused, heldBy: other }, at),
      'Read-only: this run is held by VS Code window “other” (pid 42).',
    );
    assert.equal(
      whyNotRestore({ run: paused }, { seq: 10, lastChangeSeq: 5 }),
      'checkpoint #10 is not in run run-1 (its last is #9)',
    );
    assert.equal(
      whyNotRestore({ run: paused }, { seq: 6, lastChangeSeq: 5 }),
      'The agent changed no files after checkpoint #6: there is nothing to restore.',
    );
    assert.match(
      whyNotRestore({ run: paused }, { seq: 1, lastChangeSeq: null })!,
      /changed no files after checkpoint #1/,
    );
    assert.equal(whyNotRestore({ run: paused }, at), null);
    assert.equal(whyNotRestore({ run: paused }), null, 'the run-level answer asks nothing of a checkpoint');
    assert.equal(whyNotRestore({ run: run('completed') }, at), null, 'a finished run’s files can be restored');
  });

  it('undo restore: only a restore that wrote files, then as a restore', () => {
    const f: RunFacts = { run: run('completed') };
    assert.equal(
      whyNotUndoRestore(f, restoreRecord(['kept', 'unchanged'])),
      'This restore wrote no files: there is nothing to undo.',
    );
    for (const wrote of ['reverted', 'partly_reverted', 'overwritten'] as const)
      assert.equal(whyNotUndoRestore(f, restoreRecord(['kept', wrote])), null, wrote);
    assert.match(whyNotUndoRestore({ ...f, active: true }, restoreRecord(['reverted']))!, /is executing/);
  });

  it('resume: executing, finished, waiting for decisions, held elsewhere; paused, interrupted and decided runs resume', () => {
    assert.equal(whyNotResume({ run: run('paused_error'), active: true }), 'The run is executing.');
    assert.equal(whyNotResume({ run: run('running') }), 'The run is executing.');
    for (const s of ['completed', 'failed'] as const)
      assert.equal(
        whyNotResume({ run: run(s) }),
        'The run has finished: send a follow-up to continue the conversation.',
      );
    assert.equal(
      whyNotResume({ run: run('awaiting_approval', { pending: 1 }) }),
      'The run waits for your decision on 1 tool call.',
    );
    assert.match(whyNotResume({ run: run('awaiting_approval', { pending: 2 }) })!, /on 2 tool calls\.$/);
    assert.match(whyNotResume({ run: run('interrupted'), heldBy: other })!, /^Read-only: this run is held by/);
    for (const s of ['paused_cancelled', 'paused_budget', 'paused_error', 'interrupted'] as const)
      assert.equal(whyNotResume({ run: run(s) }), null, s);
    assert.equal(whyNotResume({ run: run('awaiting_approval') }), null, 'decided, not yet continued');
  });

  it('decide (and send, undo condense): restricted mode, held elsewhere — a run executing here is this window’s', () => {
    const r = run('awaiting_approval', { pending: 1 });
    assert.match(whyNotDecide({ run: r, trusted: false })!, /^Restricted mode: .* Trust the workspace to decide\.$/);
    assert.match(whyNotDecide({ run: r, heldBy: other })!, /^Read-only: this run is held by VS Code window “other”/);
    assert.equal(whyReadOnly({ run: r, active: true, heldBy: other }), null);
    assert.equal(whyNotDecide({ run: r }), null);
  });

  it('fork: only the checkpoint must exist (a fork writes a new run)', () => {
    assert.match(whyNotFork({ run: run('running', { last: 4 }) }, 5)!, /checkpoint #5 is not in run run-1/);
    assert.equal(whyNotFork({ run: run('running', { last: 4 }), active: true, trusted: false }, 4), null);
  });

  it('the run view’s answers per run come from the same functions', () => {
    const f: RunFacts = { run: run('paused_budget'), active: false, trusted: false };
    const local = {
      handOff: 'The run is not in the shared store.',
      takeBack: 'The run is not with the workers.',
      withWorkers: null,
    };
    assert.deepEqual(runReasons(f), {
      restore: whyNotRestore(f),
      resume: whyNotResume(f),
      decide: whyNotDecide(f),
      ...local,
    });
    assert.deepEqual(runReasons({ run: run('paused_budget') }), {
      restore: null,
      resume: null,
      decide: null,
      ...local,
    });
  });

  it('a run with the workers: decided here (the worker records it), brought back before it is resumed, restored or sent to; handed off only unfinished from the shared store', () => {
    const worker = { holder: { label: 'worker w1' }, status: 'ready' as const };
    const away: RunFacts = { run: run('running', { pending: 0 }), shared: true, heldBy: other, withWorkers: worker };
    assert.equal(whyNotDecide(away), null, 'the decision is posted for the worker that holds it');
    assert.match(whyNotDecide({ ...away, trusted: false })!, /^Restricted mode/);
    assert.match(whyReadOnly(away)!, /with the workers: .* bring it back here to send it a message/);
    assert.match(whyNotResume({ ...away, run: run('interrupted') })!, /with the workers: bring it back here to resume/);
    assert.match(
      whyNotRestore({ ...away, run: run('interrupted') })!,
      /with the workers: bring it back here before restoring/,
    );
    assert.match(whyNotHandOff(away)!, /already with the workers/);
    assert.equal(whyNotTakeBack(away), null);
    assert.match(whyNotTakeBack({ ...away, trusted: false })!, /^Restricted mode: bringing a run back writes/);
    assert.match(withWorkersNote(away)!, /worker w1 is driving it/);
    assert.match(
      withWorkersNote({ ...away, withWorkers: { holder: null, status: 'waiting' } })!,
      /waits for a decision/,
    );

    const here: RunFacts = { run: run('running'), active: true, shared: true };
    assert.equal(whyNotHandOff(here), null, 'a run executing here is handed off (it lets go at its next step)');
    assert.equal(whyNotHandOff({ run: run('awaiting_approval', { pending: 1 }), shared: true }), null);
    assert.match(whyNotHandOff({ ...here, shared: false })!, /^Only a run of the shared store/);
    assert.match(whyNotHandOff({ run: run('completed'), shared: true })!, /has finished/);
    assert.match(
      whyNotHandOff({ run: run('interrupted'), shared: true, heldBy: other })!,
      /^Read-only: this run is held by/,
    );
    assert.match(whyNotTakeBack(here)!, /executing in this window already/);
    assert.match(whyNotTakeBack({ run: run('interrupted'), shared: false })!, /stored on this machine/);
    assert.deepEqual(runActions(false, runReasons(away)), ['bringBack', 'fork', 'export', 'openInTree']);
    assert.deepEqual(runActions(true, runReasons(here)), [
      'cancel',
      'continueInBackground',
      'fork',
      'export',
      'openInTree',
    ]);
  });

  it('RunGuards reads who holds the run from the store, what executes from the runner, trust from the editor', async () => {
    const store = createMemoryStore();
    const elsewhere = owner('elsewhere');
    const here = owner('here');
    const { run: r, lease } = await store.createRun({ title: 't', task: 't', agent_name: 'a', model: 'm' }, elsewhere);
    let trusted = true;
    let active = false;
    const guards = new RunGuards({ store, isActive: () => active, owner: here, trusted: () => trusted });
    assert.match((await guards.resume(r.run_id))!, /held by elsewhere \(pid \d+\)/);
    assert.match((await guards.decide(r.run_id))!, /held by elsewhere/);
    const ownGuards = new RunGuards({ store, isActive: () => false, owner: elsewhere, trusted: () => true });
    assert.equal(await ownGuards.decide(r.run_id), null, 'the window holding the run may write it');
    await lease.release();
    assert.equal(await guards.decide(r.run_id), null);
    trusted = false;
    assert.match((await guards.readOnly(r.run_id))!, /^Restricted mode/);
    assert.match((await guards.restore(r.run_id, 1))!, /^Restricted mode/);
    trusted = true;
    assert.match((await guards.restore(r.run_id, 1))!, /checkpoint #1 is not in run .* \(its last is #0\)/);
    active = true;
    assert.equal(await guards.resume(r.run_id), 'The run is executing.');
    assert.deepEqual(await guards.reasons((await store.getRun(r.run_id))!), {
      restore: 'The run is executing: cancel it before restoring its files.',
      resume: 'The run is executing.',
      decide: null,
      handOff: 'The run is not in the shared store.',
      takeBack: 'The run is not with the workers.',
      withWorkers: null,
    });
    await assert.rejects(
      guards.resume('run-that-is-not'),
      (e) => e instanceof ActionRefusedError && /no run/.test(e.message),
    );
    assert.throws(
      () => RunGuards.refuse('why not'),
      (e) => e instanceof ActionRefusedError && e.message === 'why not',
    );
    RunGuards.refuse(null);
  });
});
