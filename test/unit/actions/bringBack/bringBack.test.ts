// Bringing a run's work into another checkout (src/actions/bringBack): a run driven by the real runner
// (the real openai client over HTTP to the scripted model) in checkout A — edits, a created file, and
// a command that changes, deletes, creates a binary file and makes a script executable — is brought
// into checkout B, a copy of A before the run, through the product's action with a scripted user:
// B ends as A (bytes, deletions, permission bits); a local edit in B is a conflict, kept, while the
// rest is applied; Undo puts B back; a second bring-back writes nothing and says so.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { testActions, type TestActions } from '../../../support/actions';
import { owner, tmp } from '../../loop/support';
import { drive, read, same, workspace } from '../../runner/files/journalSupport';

export const INITIAL = {
  'a.txt': 'original a\n',
  'cmd.txt': 'v1\n',
  'gone.txt': 'to be deleted\n',
  'tool.sh': '#!/bin/sh\necho v1\n',
  'same.txt': 'never touched\n',
};

export const CALLS = [
  { name: 'write_file', arguments: { path: 'a.txt', content: 'agent a\n' } },
  { name: 'write_file', arguments: { path: 'src/new.txt', content: 'created by the agent\n' } },
  {
    name: 'run_command',
    arguments: {
      command:
        "printf 'v2\\n' > cmd.txt && rm gone.txt && printf '\\000\\001\\377\\376' > bin.dat && printf 'echo v2\\n' >> tool.sh && chmod 755 tool.sh",
    },
  },
];

export const PATHS = ['a.txt', 'bin.dat', 'cmd.txt', 'gone.txt', 'same.txt', 'src/new.txt', 'tool.sh'];

/** Checkout A (a git repository, so the command's earlier content is known) and B, a copy of it before the run; the run driven in A. */
export async function ranElsewhere(
  store?: CheckpointStore,
): Promise<{ a: string; b: string; runId: string; store: CheckpointStore }> {
  const a = workspace(INITIAL, { git: true });
  const b = path.join(tmp('checkout-b'), 'ws');
  fs.cpSync(a, b, { recursive: true, filter: (src) => !src.includes(`${path.sep}.git`) });
  const driven = await drive(a, CALLS, store ? { store } : {});
  return { a, b, runId: driven.runId, store: driven.store };
}

export function checkoutActions(store: CheckpointStore, ws: string): TestActions {
  const runner = { isActive: () => false, resume: notHere, decideApprovals: notHere };
  return testActions({ store, runner, workspace: ws, owner: owner('checkout B') });
}

const notHere = async () => Promise.reject(new Error('no runner in this checkout'));

const modeOf = (ws: string, rel: string) => fs.statSync(path.join(ws, rel)).mode & 0o777;

function assertSameFiles(x: string, y: string): void {
  const [rx, ry] = [read(x, PATHS), read(y, PATHS)];
  for (const p of PATHS) assert.ok(same(rx.get(p), ry.get(p)), `${p}: ${String(rx.get(p))} ≠ ${String(ry.get(p))}`);
}

describe('bring back: a run of another checkout applied here', function () {
  this.timeout(60_000);

  it("B ends with A's files exactly: changed, created, deleted, binary, permission bits; a second bring-back writes nothing", async () => {
    const { a, b, runId, store } = await ranElsewhere();
    assert.equal(fs.existsSync(path.join(b, 'gone.txt')), true, 'B is still as before the run');
    const ui = checkoutActions(store, b);

    const plan = await ui.actions.bringBack.plan(runId);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action]),
      [
        ['a.txt', 'revert'],
        ['bin.dat', 'revert'],
        ['cmd.txt', 'revert'],
        ['gone.txt', 'revert'],
        ['src/new.txt', 'revert'],
        ['tool.sh', 'revert'],
      ],
    );
    assert.deepEqual(
      plan.files.map((f) => f.reason),
      [
        "the run changed it: the run's version is written",
        'the run created it',
        "the run changed it: the run's version is written",
        'the run deleted it',
        'the run created it',
        "the run changed it: the run's version is written",
      ],
    );

    const record = (await ui.actions.bringBack.run(runId))!;
    assertSameFiles(a, b);
    assert.equal(modeOf(b, 'tool.sh'), 0o755, 'the run made it executable');
    assert.deepEqual(record.applied, { checkout: `${os.hostname()}:${b}`, from_seq: 0, undoes: null });
    assert.deepEqual(ui.editor.previews.length, 1, 'previewed once');
    assert.deepEqual(ui.notices.said, [`info: Brought back 6 files of run ${runId}.`]);

    const again = await ui.actions.bringBack.plan(runId);
    assert.deepEqual(new Set(again.files.map((f) => f.action)), new Set(['unchanged']));
    const before = (await store.listRestores(runId)).length;
    assert.equal(await ui.actions.bringBack.run(runId), undefined);
    assert.equal((await store.listRestores(runId)).length, before, 'nothing recorded the second time');
    assert.equal(
      ui.notices.said.at(-1),
      "info: Agent Waypoints: nothing to do — this checkout already has the run's changes.",
    );
    assertSameFiles(a, b);
  });

  it("a local edit in B is a conflict: kept, the others applied; Undo puts B back as it was; A's restore ignores B's record", async () => {
    const { a, b, runId, store } = await ranElsewhere();
    fs.writeFileSync(path.join(b, 'cmd.txt'), 'my local edit\n');
    const beforeB = read(b, PATHS);
    const modeBefore = modeOf(b, 'tool.sh');
    const ui = checkoutActions(store, b);

    const record = (await ui.actions.bringBack.run(runId))!;
    const cmd = ui.editor.previews[0]!.files.find((f) => f.path === 'cmd.txt')!;
    assert.equal(cmd.action, 'conflict');
    assert.equal(cmd.overwritable, true, 'may be chosen to overwrite');
    assert.match(cmd.reason, /differs from what the run started from/);
    assert.equal(fs.readFileSync(path.join(b, 'cmd.txt'), 'utf8'), 'my local edit\n', 'the local edit is kept');
    assert.equal(fs.readFileSync(path.join(b, 'a.txt'), 'utf8'), 'agent a\n');
    assert.equal(fs.existsSync(path.join(b, 'gone.txt')), false);
    assert.deepEqual(
      record.files.map((f) => [f.path, f.action]),
      [
        ['a.txt', 'reverted'],
        ['bin.dat', 'reverted'],
        ['cmd.txt', 'kept'],
        ['gone.txt', 'reverted'],
        ['src/new.txt', 'reverted'],
        ['tool.sh', 'reverted'],
      ],
    );

    // A's own restore to the run's start walks A's journal only: B's writes are another checkout's.
    const inA = checkoutActions(store, a);
    const restoreInA = await inA.actions.restore.plan(runId, 1);
    assert.deepEqual(new Set(restoreInA.files.map((f) => f.action)), new Set(['revert']));

    const undone = (await ui.actions.bringBack.undo(runId))!;
    assert.equal(undone.applied?.undoes, record.id);
    const afterUndo = read(b, PATHS);
    for (const p of PATHS) assert.ok(same(afterUndo.get(p), beforeB.get(p)), `${p} is back as it was`);
    assert.equal(modeOf(b, 'tool.sh'), modeBefore, 'its permission bits too');
    assert.equal(await ui.actions.bringBack.lastBringBack(runId), undefined, 'nothing left to undo');
  });
});
