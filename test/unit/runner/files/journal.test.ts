// The file journal through the real loop: write_file/edit_file keep pre-images before the intent
// and post-images with the result; commands are scanned and their changes journaled with what is
// known; restores put files back exactly (CRLF, binary, 5 MB), in git, nested git and no-git workspaces.
// A command's scan is checked without a watcher and with one (an index shared between runs, as the
// extension has it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Effect, FileChange, FileVersion } from '../../../../src/store/api/schema';
import { drive, git, productRestore, read, same, workspace } from './journalSupport';
import { disposeIndexes, SCAN_MODES } from './scanSupport';

const pick = <K extends 'size' | 'encoding' | 'blob'>(v: FileVersion, k: K) => (v.kind === 'file' ? v[k] : undefined);
const byPath = (effects: Effect[]) =>
  new Map(effects.flatMap((e) => (e.files ?? []).map((f) => [`${e.tool_name}:${f.path}`, f] as [string, FileChange])));

describe('file journal: what the agent changed, and restoring it', function () {
  this.timeout(60_000);

  it('journals write_file and edit_file (pre-image with the intent, post-image with the result) and restores them exactly', async () => {
    const crlf = 'line one\r\nline two\r\n';
    const big = Buffer.from('0123456789abcdef\r\n'.repeat(300_000)); // ≈ 5.4 MB
    const ws = workspace({ 'crlf.txt': crlf, 'big.txt': big, 'keep.txt': 'untouched' });
    const seqs: number[] = [];
    const { store, runId } = await drive(
      ws,
      [
        { name: 'edit_file', arguments: { path: 'crlf.txt', old_text: 'line two\n', new_text: 'line 2\n' } },
        { name: 'write_file', arguments: { path: 'big.txt', content: 'small now' } },
        { name: 'write_file', arguments: { path: 'new/made.txt', content: 'made by the agent' } },
        { name: 'write_file', arguments: { path: 'new/same.txt', content: 'made by the agent' } },
      ],
      { onPhase: (seq, phase) => phase === 'pre_tool_batch' && seqs.push(seq) },
    );
    assert.equal(
      fs.readFileSync(path.join(ws, 'crlf.txt'), 'utf8'),
      'line one\r\nline 2\r\n',
      'edit_file kept the CRLF line endings',
    );
    const effects = await store.listEffects(runId);
    const files = byPath(effects);
    const edit = files.get('edit_file:crlf.txt')!;
    assert.equal(
      edit.before.kind === 'file' && (await store.getBlob(runId, edit.before.blob!)),
      crlf,
      'the pre-image is the exact CRLF text',
    );
    assert.deepEqual(pick(files.get('write_file:big.txt')!.before, 'size'), big.length);
    assert.deepEqual(files.get('write_file:new/made.txt')!.before, { kind: 'absent' });
    const made = files.get('write_file:new/made.txt')!.after;
    const same2 = files.get('write_file:new/same.txt')!.after;
    assert.ok(
      made.kind === 'file' && same2.kind === 'file' && made.blob === same2.blob,
      'identical content is one blob',
    );
    assert.deepEqual(
      effects.map((e) => e.checkpoint_seq),
      seqs,
      'each call follows its batch checkpoint',
    );

    const plan = await productRestore(store, ws).plan(runId, seqs[0]!);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action]),
      [
        ['big.txt', 'revert'],
        ['crlf.txt', 'revert'],
        ['new/made.txt', 'revert'],
        ['new/same.txt', 'revert'],
      ],
    );
    await productRestore(store, ws).apply(runId, plan, { overwrite: new Set() });
    const now = read(ws, ['crlf.txt', 'big.txt', 'keep.txt', 'new/made.txt']);
    assert.equal(now.get('crlf.txt')!.toString('utf8'), crlf);
    assert.ok(now.get('big.txt')!.equals(big), 'the 5 MB file is back byte for byte');
    assert.equal(now.get('keep.txt')!.toString(), 'untouched');
    assert.equal(now.get('new/made.txt'), null, 'a file the agent created is deleted');
  });
});

for (const mode of SCAN_MODES) {
  describe(`file journal: a command's changes, scanned ${mode.name}`, function () {
    this.timeout(60_000);
    afterEach(disposeIndexes);

    it('a git-ignored build folder a command changed is not journaled; the tracked file it changed is', async () => {
      const ws = workspace(
        { '.gitignore': 'build/\n', 'src/app.ts': 'export const v = 1;\n', 'build/app.js': 'old output\n' },
        { git: true },
      );
      let firstBatch = 0;
      const index = mode.index(ws);
      const { store, runId } = await drive(
        ws,
        [
          {
            name: 'run_command',
            arguments: {
              command:
                'echo "export const v = 2;" > src/app.ts && echo new output > build/app.js && echo map > build/app.js.map',
            },
          },
        ],
        { onPhase: (seq, phase) => phase === 'pre_tool_batch' && !firstBatch && (firstBatch = seq), index },
      );
      const cmd = (await store.listEffects(runId)).find((e) => e.tool_name === 'run_command')!;
      assert.deepEqual(
        (cmd.files ?? []).map((f) => f.path),
        ['src/app.ts'],
        'build/ changed too, but git ignores it',
      );
      assert.equal(cmd.file_scan?.complete, true);
      assert.equal(cmd.file_scan?.files, 2, 'the scan saw .gitignore and src/app.ts, nothing in build/');
      const plan = await productRestore(store, ws).plan(runId, firstBatch);
      assert.deepEqual(
        plan.files.map((f) => [f.path, f.action]),
        [['src/app.ts', 'revert']],
      );
      await productRestore(store, ws).apply(runId, plan, { overwrite: new Set() });
      assert.equal(fs.readFileSync(path.join(ws, 'src/app.ts'), 'utf8'), 'export const v = 1;\n', 'back from git');
      assert.equal(
        fs.readFileSync(path.join(ws, 'build/app.js'), 'utf8'),
        'new output\n',
        'ignored output is never touched',
      );
      assert.ok(fs.existsSync(path.join(ws, 'build/app.js.map')));
    });

    it("a command's changes: known from the agent's earlier write, from a clean git file, or absent; unknown otherwise, with the reason", async () => {
      const ws = workspace(
        { 'tracked.txt': 'committed\n', 'dirty.txt': 'committed too\n', '.gitignore': 'build/\n' },
        { git: true },
      );
      fs.writeFileSync(path.join(ws, 'dirty.txt'), 'edited by the user, not committed\n');
      fs.writeFileSync(path.join(ws, 'untracked.txt'), 'never committed\n');
      let firstBatch = 0;
      const { store, runId } = await drive(
        ws,
        [
          { name: 'write_file', arguments: { path: 'mine.txt', content: 'the agent wrote this\n' } },
          {
            name: 'run_command',
            arguments: {
              command:
                'echo changed > tracked.txt && echo changed > dirty.txt && echo changed > untracked.txt && mv mine.txt moved.txt && mkdir -p build && echo x > build/out.js && printf "\\000\\377bin" > new.bin',
            },
          },
        ],
        {
          onPhase: (seq, phase) => phase === 'pre_tool_batch' && !firstBatch && (firstBatch = seq),
          index: mode.index(ws),
        },
      );
      const cmd = (await store.listEffects(runId)).find((e) => e.tool_name === 'run_command')!;
      const f = new Map((cmd.files ?? []).map((c) => [c.path, c]));
      assert.deepEqual(
        [...f.keys()].sort(),
        ['dirty.txt', 'mine.txt', 'moved.txt', 'new.bin', 'tracked.txt', 'untracked.txt'],
        'build/ is git-ignored: not tracked',
      );
      assert.ok(cmd.file_scan?.complete);
      assert.equal(f.get('tracked.txt')!.before.kind, 'file', 'clean in git: the content comes from HEAD');
      assert.equal(f.get('mine.txt')!.before.kind, 'file', 'the agent wrote it earlier in the run');
      assert.deepEqual(f.get('mine.txt')!.after, { kind: 'absent' });
      assert.deepEqual(f.get('moved.txt')!.before, { kind: 'absent' });
      assert.equal(pick(f.get('new.bin')!.after, 'encoding'), 'base64', 'binary content is kept as base64');
      const dirty = f.get('dirty.txt')!.before;
      assert.ok(
        dirty.kind === 'unknown' && /not known \(it differed from what git's index recorded/.test(dirty.reason),
        JSON.stringify(dirty),
      );
      const untracked = f.get('untracked.txt')!.before;
      assert.ok(untracked.kind === 'unknown' && /not tracked by git/.test(untracked.reason), JSON.stringify(untracked));
      assert.match(git(ws, 'status', '--porcelain'), /^ M tracked\.txt$/m, 'git itself was only read');

      const plan = await productRestore(store, ws).plan(runId, firstBatch);
      const actions = Object.fromEntries(plan.files.map((p) => [p.path, p.action]));
      assert.deepEqual(actions, {
        'dirty.txt': 'unrestorable',
        'mine.txt': 'unchanged', // created and moved away after the checkpoint: absent then and now
        'moved.txt': 'revert',
        'new.bin': 'revert',
        'tracked.txt': 'revert',
        'untracked.txt': 'unrestorable',
      });
      assert.match(
        plan.files.find((p) => p.path === 'untracked.txt')!.reason,
        /changed by `echo changed > tracked\.txt/,
      );
      await productRestore(store, ws).apply(runId, plan, { overwrite: new Set() });
      const now = read(ws, ['tracked.txt', 'dirty.txt', 'mine.txt', 'moved.txt', 'new.bin', 'build/out.js']);
      assert.equal(now.get('tracked.txt')!.toString(), 'committed\n');
      assert.equal(
        now.get('dirty.txt')!.toString(),
        'changed\n',
        'unknown earlier content: left as it is, never guessed',
      );
      assert.equal(now.get('mine.txt'), null, 'created by the agent after the checkpoint: gone again');
      assert.equal(now.get('moved.txt'), null);
      assert.equal(now.get('new.bin'), null);
      assert.ok(same(now.get('build/out.js'), Buffer.from('x\n')), 'ignored files are never touched');
      assert.doesNotMatch(git(ws, 'status', '--porcelain'), /^ M tracked\.txt$/m, 'the tracked file is clean again');
    });

    it('nested git repositories and a workspace without git', async () => {
      const ws = workspace({ 'plain.txt': 'no git here\n', 'lib/inner.txt': 'inner committed\n' });
      git(path.join(ws, 'lib'), 'init', '-q');
      git(path.join(ws, 'lib'), 'add', '-A');
      git(path.join(ws, 'lib'), 'commit', '-qm', 'inner');
      let firstBatch = 0;
      const { store, runId } = await drive(
        ws,
        [
          {
            name: 'run_command',
            arguments: {
              command: 'echo new > plain.txt && echo new > lib/inner.txt && printf "\\001\\002" > lib/blob.bin',
            },
          },
        ],
        {
          onPhase: (seq, phase) => phase === 'pre_tool_batch' && !firstBatch && (firstBatch = seq),
          index: mode.index(ws),
        },
      );
      const plan = await productRestore(store, ws).plan(runId, firstBatch);
      assert.deepEqual(Object.fromEntries(plan.files.map((p) => [p.path, p.action])), {
        'lib/blob.bin': 'revert',
        'lib/inner.txt': 'revert',
        'plain.txt': 'unrestorable',
      });
      assert.match(
        plan.files.find((p) => p.path === 'plain.txt')!.reason,
        /the agent had not written it, and git does not track it/,
      );
      await productRestore(store, ws).apply(runId, plan, { overwrite: new Set() });
      assert.equal(
        fs.readFileSync(path.join(ws, 'lib/inner.txt'), 'utf8'),
        'inner committed\n',
        'read from the nested repository',
      );
      assert.equal(fs.existsSync(path.join(ws, 'lib/blob.bin')), false);
      assert.equal(fs.readFileSync(path.join(ws, 'plain.txt'), 'utf8'), 'new\n');
    });
  });
}
