// The pure restore plan: the three-way walk per file, dirty editors, interrupted calls, unknown
// earlier content, partial restores, and restores of restores (journal order by checkpoint, then time).
import assert from 'node:assert/strict';
import {
  changesAfter,
  planRestore,
  restoreOutcome,
  restoreWrites,
  type JournaledChange,
} from '../../../../src/actions/restore/plan';
import type { Effect, FileVersion, RestoreRecord } from '../../../../src/store/api/schema';

const v = (name: string, blob = true): FileVersion => ({
  kind: 'file',
  sha256: name
    .padEnd(64, '0')
    .replace(/[^0-9a-f]/g, 'a')
    .slice(0, 64),
  size: name.length,
  blob: blob
    ? name
        .padEnd(64, 'b')
        .replace(/[^0-9a-f]/g, 'b')
        .slice(0, 64)
    : null,
  encoding: 'utf8',
});
const ABSENT: FileVersion = { kind: 'absent' };
const change = (
  path: string,
  before: FileVersion,
  after: FileVersion,
  over: Partial<JournaledChange> = {},
): JournaledChange => ({
  toolCallId: 'c',
  toolName: 'write_file',
  step: 2,
  interrupted: false,
  change: { path, before, after },
  ...over,
});
const plan1 = (changes: JournaledChange[], current: Record<string, FileVersion>, dirty: string[] = []) =>
  planRestore({ toSeq: 3, changes, current: new Map(Object.entries(current)), dirty: new Set(dirty) }).files;

describe('restore plan (pure)', () => {
  it('reverts a chain of agent edits when the file is what the agent left; a created file is deleted, a deleted one re-created', () => {
    const [a, b, c] = plan1(
      [
        change('a', v('a0'), v('a1')),
        change('a', v('a1'), v('a2')),
        change('b', ABSENT, v('b1')),
        change('c', v('c0'), ABSENT),
      ],
      { a: v('a2'), b: v('b1'), c: ABSENT },
    );
    assert.deepEqual([a!.action, a!.target], ['revert', v('a0')]);
    assert.deepEqual([b!.action, b!.target, b!.reason], ['revert', ABSENT, 'the agent created it: it is deleted']);
    assert.deepEqual([c!.action, c!.target, c!.reason], ['revert', v('c0'), 'the agent deleted it: it is re-created']);
  });

  it('keeps what someone else changed: after the agent (conflict), between its edits (partial), or unsaved in an editor', () => {
    const [a, b, d] = plan1(
      [
        change('a', v('a0'), v('a1')),
        change('b', v('b0'), v('b1')),
        change('b', v('user'), v('b2'), { step: 4 }),
        change('d', v('d0'), v('d1')),
      ],
      { a: v('mine'), b: v('b2'), d: v('d1') },
      ['d'],
    );
    assert.equal(a!.action, 'conflict');
    assert.match(a!.reason, /changed after write_file at step 2 \(by you or another run\)/);
    assert.deepEqual([a!.target, a!.overwritable], [null, true]);
    assert.deepEqual(
      [b!.action, b!.target],
      ['partial', v('user')],
      "the user's version between the agent's edits comes back, not the checkpoint's",
    );
    assert.match(b!.reason, /earlier ones are kept/);
    assert.deepEqual([d!.action, d!.overwritable], ['conflict', false]);
    assert.match(d!.reason, /unsaved changes/);
  });

  it('never guesses: unknown earlier content, content too large to keep, an interrupted call', () => {
    const unknown: FileVersion = {
      kind: 'unknown',
      reason: 'changed by `npm install`; its earlier content is not known (…)',
    };
    const [a, b, c, e] = plan1(
      [
        change('a', unknown, v('a1'), { toolName: 'run_command' }),
        change('b', v('big', false), v('b1')),
        change('c', v('c0'), { kind: 'unknown', reason: 'not finished' }, { interrupted: true }),
        change('e', v('e0'), { kind: 'unknown', reason: 'not finished' }, { interrupted: true }),
      ],
      { a: v('a1'), b: v('b1'), c: v('c?'), e: v('e0') },
    );
    assert.deepEqual([a!.action, a!.reason, a!.overwritable], ['unrestorable', unknown.reason, false]);
    assert.deepEqual([b!.action, b!.overwritable], ['unrestorable', false]);
    assert.match(b!.reason, /too large to keep/);
    assert.deepEqual([c!.action, c!.overwritable], ['conflict', true]);
    assert.match(c!.reason, /interrupted before its result was recorded/);
    assert.equal(e!.action, 'unchanged', 'the interrupted call never wrote: nothing to do');
  });

  it('writes only reverts by default, and checkpoint versions of the files the user chose; records what happened', () => {
    const plan = planRestore({
      toSeq: 3,
      changes: [change('a', v('a0'), v('a1')), change('k', v('k0'), v('k1')), change('u', v('u0'), v('u1'))],
      current: new Map([
        ['a', v('a1')],
        ['k', v('user-k')],
        ['u', v('user-u')],
      ]),
      dirty: new Set(),
    });
    assert.deepEqual([...restoreWrites(plan, new Set()).keys()], ['a']);
    assert.deepEqual(
      [...restoreWrites(plan, new Set(['u'])).entries()],
      [
        ['a', v('a0')],
        ['u', v('u0')],
      ],
    );
    const kept = new Map([['u', v('user-u')]]);
    assert.deepEqual(
      restoreOutcome(plan, new Set(['u']), kept).map((f) => [f.path, f.action]),
      [
        ['a', 'reverted'],
        ['k', 'kept'],
        ['u', 'overwritten'],
      ],
    );
  });

  it('orders calls and earlier restores by checkpoint, then time: a restore can be undone by restoring to a later checkpoint', () => {
    const effect = (id: string, seq: number, ms: number, before: FileVersion, after: FileVersion): Effect => ({
      run_id: 'r',
      tool_call_id: id,
      step: seq,
      tool_name: 'write_file',
      input_hash: 'h',
      idempotency_key: 'k',
      side_effecting: true,
      intent_ms: ms,
      result: { output: '', output_hash: '', is_error: false, blob: null, finished_ms: ms },
      checkpoint_seq: seq,
      files: [{ path: 'f', before, after }],
    });
    const restore: RestoreRecord = {
      id: 'restore-1',
      to_seq: 4,
      checkpoint_seq: 9,
      created_ms: 50,
      forked_run_id: null,
      notes: [],
      files: [{ path: 'f', action: 'reverted', reason: '', from: v('f2'), to: v('f1') }],
    };
    const effects = [effect('c1', 4, 10, v('f0'), v('f1')), effect('c2', 6, 20, v('f1'), v('f2'))];
    const back = changesAfter(effects, 6, [restore]);
    assert.deepEqual(
      back.changes.map((c) => c.toolCallId),
      ['c2', 'restore-1'],
    );
    const plan = planRestore({ toSeq: 6, changes: back.changes, current: new Map([['f', v('f1')]]), dirty: new Set() });
    assert.deepEqual(
      [plan.files[0]!.action, plan.files[0]!.target],
      ['unchanged', null],
      'at #6 the file was f1, as now',
    );
    const later = changesAfter(effects, 9, [restore]);
    const undo = planRestore({
      toSeq: 9,
      changes: later.changes,
      current: new Map([['f', v('f1')]]),
      dirty: new Set(),
    });
    assert.deepEqual(
      [undo.files[0]!.action, undo.files[0]!.target],
      ['revert', v('f2')],
      'restoring to #9 undoes the restore',
    );
    assert.equal(
      undo.files[0]!.reason,
      'an earlier restore changed it: its checkpoint version is written back',
      'the restore changed it, not the agent',
    );
    assert.deepEqual(
      changesAfter(effects, 1, []).changes.map((c) => c.toolCallId),
      ['c1', 'c2'],
    );
  });
});
