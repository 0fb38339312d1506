// The command scan's index on real files: what it stats before and after a command, and that a
// change is never missed whatever the watcher said — events, no events, dropped events, a lost
// watcher, mtime set back, folder renames, deletes, ignore rules changing, files in ignored
// folders, folders the watcher leaves out. "A command" here is whatever the test does between
// before() and after(); the journal tests run real commands through the loop.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Emitter } from '../../../../src/common/emitter';
import { NodeWatcher } from '../../../../src/runner/fileJournal/nodeWatcher';
import { changedPaths } from '../../../../src/runner/fileJournal/scan';
import { WorkspaceIndex } from '../../../../src/runner/fileJournal/scanIndex';
import type { WatchEvent, WorkspaceWatcher } from '../../../../src/runner/fileJournal/watcher';
import { workspace } from './journalSupport';
import { nextEvent } from './scanSupport';

/** A watcher the test drives: it reports only what the test tells it to (so events can be "dropped"). */
class ManualWatcher implements WorkspaceWatcher {
  private readonly events = new Emitter<WatchEvent>();
  excluded: string[] = [];
  onEvent(l: (e: WatchEvent) => void) {
    return this.events.on(l);
  }
  unwatched() {
    return this.excluded;
  }
  changed(abs: string) {
    this.events.emit({ kind: 'changed', path: abs });
  }
  lose() {
    this.events.emit({ kind: 'lost', reason: 'test', lasting: false });
  }
  dispose() {
    this.events.dispose();
  }
}

/** Waits until every entry of the tree is older than the racy margin, so stats alone are proof (a condition on the clock, not a fixed sleep). */
async function settled(ws: string): Promise<void> {
  let newest = 0;
  for (const rel of ['', ...fs.readdirSync(ws, { recursive: true, encoding: 'utf8' })])
    newest = Math.max(newest, fs.lstatSync(path.join(ws, rel)).ctimeMs);
  while (Date.now() < newest + 150) await new Promise((r) => setTimeout(r, 20));
}

/** A first command's scans, then a second pair once the tree settled: no file is racy any more. */
async function prime(index: WorkspaceIndex, ws: string): Promise<void> {
  await index.before();
  await index.after();
  await settled(ws);
  await index.before();
  await index.after();
}

const write = (ws: string, rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  fs.writeFileSync(path.join(ws, rel), text);
};

describe('file journal: the command scan keeps what it saw', function () {
  this.timeout(60_000);
  const open: { dispose(): void }[] = [];
  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });
  const indexed = (ws: string, watcher?: WorkspaceWatcher) => {
    const index = new WorkspaceIndex({ root: ws, ...(watcher ? { watcher } : {}) });
    open.push(index, ...(watcher ? [watcher] : []));
    return index;
  };

  it('with a watcher: before a command only the files it named are statted; after it every file; the user’s change before is not the command’s', async () => {
    const ws = workspace({ 'a/one.txt': '1', 'a/two.txt': '2', 'b/three.txt': '3', 'b/c/four.txt': '4' });
    const watcher = new NodeWatcher(ws);
    const index = indexed(ws, watcher);
    const first = await index.before();
    assert.equal(first.work.kind, 'walk');
    assert.equal(first.work.statted, 4);
    await prime(index, ws);
    const event = nextEvent(watcher, (e) => e.kind === 'changed' && e.path.endsWith('two.txt'));
    fs.appendFileSync(path.join(ws, 'a/two.txt'), ' by the user');
    await event;
    await settled(ws);
    const before = await index.before();
    assert.equal(before.work.kind, 'refresh');
    assert.equal(before.work.narrowed, true);
    assert.equal(before.work.statted, 1, 'only the file the watcher named');
    assert.equal(before.work.reread, 0, 'no folder moved');
    fs.appendFileSync(path.join(ws, 'b/c/four.txt'), ' by the command');
    const after = await index.after();
    assert.equal(after.work.statted, 4, 'after the command: every file');
    assert.deepEqual(changedPaths(before, after), ['b/c/four.txt'], 'a/two.txt changed before: not the command');
  });

  it('without a watcher: every file is statted before and after; a change before the command is not the command’s', async () => {
    const ws = workspace({ 'x.txt': 'x', 'd/y.txt': 'y' });
    const index = indexed(ws);
    await index.before();
    await index.after();
    fs.writeFileSync(path.join(ws, 'x.txt'), 'user');
    const before = await index.before();
    assert.equal(before.work.narrowed, false);
    assert.equal(before.work.statted, 2);
    fs.writeFileSync(path.join(ws, 'd/y.txt'), 'cmd');
    assert.deepEqual(changedPaths(before, await index.after()), ['d/y.txt']);
  });

  it('every file statted on two threads (a big workspace): the worker takes a share, and the changes are exactly the ones made', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1200; i++) files[`p${i % 12}/m${i % 5}/f${i}.ts`] = `v${i};`;
    const ws = workspace(files);
    const index = new WorkspaceIndex({ root: ws, statPool: { min: 500, chunk: 16, workerFirst: true } });
    open.push(index);
    await prime(index, ws);
    assert.equal(await index.sharedStats(), true);
    const f = (i: number) => `p${i % 12}/m${i % 5}/f${i}.ts`;
    const before = await index.before();
    assert.equal(before.work.ahead, 1200, 'without a watcher, before the command too');
    assert.ok(before.work.helped > 0, 'the worker took a share');
    const keepTimes = path.join(ws, f(7));
    const st = fs.statSync(keepTimes);
    fs.writeFileSync(keepTimes, 'w7;'); // same size, mtime set back: only ctime shows it
    fs.utimesSync(keepTimes, st.atime, st.mtime);
    fs.appendFileSync(path.join(ws, f(500)), '// more');
    fs.chmodSync(path.join(ws, f(901)), 0o755);
    fs.rmSync(path.join(ws, f(1000)));
    write(ws, 'p3/m3/new.ts', 'new');
    const after = await index.after();
    assert.equal(after.work.ahead, 1200);
    assert.ok(after.work.helped > 0);
    assert.equal(after.files.size, 1200);
    assert.deepEqual(changedPaths(before, after), [f(1000), f(500), f(7), f(901), 'p3/m3/new.ts'].sort());
    // Nothing changed since: nothing reported, whoever statted what.
    await settled(ws);
    const b2 = await index.before();
    assert.deepEqual(changedPaths(b2, await index.after()), []);
  });

  it('events dropped: a change the watcher never reported is still found after the command; a lost watcher makes the next scan stat everything', async () => {
    const ws = workspace({ 'kept.txt': 'same', 'src/app.ts': 'v1', 'src/lib.ts': 'v1' });
    const watcher = new ManualWatcher();
    const index = indexed(ws, watcher);
    await prime(index, ws);
    const before = await index.before();
    assert.equal(before.work.statted, 0, 'nothing reported: nothing statted');
    fs.writeFileSync(path.join(ws, 'src/app.ts'), 'v2'); // in place, same size, and no event
    const after = await index.after();
    assert.deepEqual(changedPaths(before, after), ['src/app.ts'], 'found by the stat after the command');
    // A user's change before the command whose event was dropped: shown as the command's (the documented cost).
    await settled(ws);
    fs.writeFileSync(path.join(ws, 'src/lib.ts'), 'v3');
    await settled(ws);
    const b2 = await index.before();
    assert.deepEqual(changedPaths(b2, await index.after()), ['src/lib.ts']);
    watcher.lose();
    const b3 = await index.before();
    assert.equal(b3.work.narrowed, false, 'after lost events: every file statted before the command');
    assert.equal(b3.work.statted, 3);
    const b4 = await index.before();
    assert.equal(b4.work.narrowed, true, 'and narrowed again once checked');
  });

  it('a command that rewrites a file and sets its mtime back is still seen (ctime); so is a chmod-only change', async () => {
    const ws = workspace({ 'f.txt': 'aaaa', 'g.sh': 'echo' });
    const index = indexed(ws, new ManualWatcher());
    await prime(index, ws);
    const f = path.join(ws, 'f.txt');
    const mtime = fs.statSync(f, { bigint: true }).mtimeNs;
    const before = await index.before();
    fs.writeFileSync(f, 'bbbb');
    const ns = String(mtime % 1_000_000_000n).padStart(9, '0');
    execFileSync('touch', ['-m', '-d', `@${mtime / 1_000_000_000n}.${ns}`, f]);
    assert.equal(fs.statSync(f, { bigint: true }).mtimeNs, mtime, 'mtime restored to the nanosecond');
    fs.chmodSync(path.join(ws, 'g.sh'), 0o755);
    assert.deepEqual(changedPaths(before, await index.after()), ['f.txt', 'g.sh']);
  });

  it('folder renames, deletes, a file replaced by a folder, an empty folder filled: every path accounted for', async () => {
    const ws = workspace({
      'old/a.txt': 'a',
      'old/deep/b.txt': 'b',
      'gone/c.txt': 'c',
      'gone/sub/d.txt': 'd',
      'del.txt': 'x',
      swap: 'file',
    });
    fs.mkdirSync(path.join(ws, 'empty'));
    const index = indexed(ws, new NodeWatcher(ws));
    await prime(index, ws);
    const before = await index.before();
    fs.renameSync(path.join(ws, 'old'), path.join(ws, 'new'));
    fs.rmSync(path.join(ws, 'gone'), { recursive: true });
    fs.rmSync(path.join(ws, 'del.txt'));
    fs.rmSync(path.join(ws, 'swap'));
    write(ws, 'swap/inner.txt', 'now a folder');
    write(ws, 'empty/late/e.txt', 'e');
    const after = await index.after();
    assert.deepEqual(changedPaths(before, after), [
      'del.txt',
      'empty/late/e.txt',
      'gone/c.txt',
      'gone/sub/d.txt',
      'new/a.txt',
      'new/deep/b.txt',
      'old/a.txt',
      'old/deep/b.txt',
      'swap',
      'swap/inner.txt',
    ]);
    assert.deepEqual([...after.files.keys()].sort(), [
      'empty/late/e.txt',
      'new/a.txt',
      'new/deep/b.txt',
      'swap/inner.txt',
    ]);
  });
});
