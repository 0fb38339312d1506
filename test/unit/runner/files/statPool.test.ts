// The stat pool on real files: whatever share the worker takes — none, some, all, or it dies —
// every slot holds what `lstat` says of its path, or says it was not statted (the caller stats it).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { STAT_WIDTH, StatKind, StatPool, statOfSlot } from '../../../../src/runner/fileJournal/statPool';
import { workspace } from './journalSupport';

/** What the main thread's own lstat says of a path, in the pool's terms. */
function expected(abs: string): {
  kind: number;
  size?: number;
  mtimeMs?: number;
  ctimeMs?: number;
  ino?: number;
  mode?: number;
} {
  let st;
  try {
    st = fs.lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    return { kind: StatKind.NotAFile };
  }
  if (!st?.isFile()) return { kind: StatKind.NotAFile };
  return { kind: StatKind.File, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode };
}

function slot(stats: Float64Array, i: number) {
  const kind = stats[i * STAT_WIDTH];
  return kind === StatKind.File ? { kind, ...statOfSlot(stats, i) } : { kind };
}

/** Every slot holds what lstat says of its path; `unstatted`: a slot may also be left for the caller. */
function assertAsLstat(paths: readonly string[], stats: Float64Array, unstatted = false): void {
  paths.forEach((abs, i) => {
    const got = slot(stats, i);
    if (!(unstatted && got.kind === StatKind.NotStatted)) assert.deepEqual(got, expected(abs), abs);
  });
}

/** A tree of regular files with a folder, a symlink, a missing path and a path under a file among them. */
function tree(n: number): { ws: string; paths: string[] } {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`d${i % 7}/f${i}.txt`] = 'x'.repeat(i % 50);
  const ws = workspace(files);
  fs.symlinkSync(path.join(ws, 'd0/f0.txt'), path.join(ws, 'link'));
  const paths = Object.keys(files).map((rel) => path.join(ws, rel));
  paths.splice(
    3,
    0,
    path.join(ws, 'd1'),
    path.join(ws, 'link'),
    path.join(ws, 'gone.txt'),
    path.join(ws, 'd0/f0.txt/x'),
  );
  return { ws, paths };
}

describe('file journal: statting every file on two threads', function () {
  this.timeout(60_000);
  const open: StatPool[] = [];
  afterEach(() => {
    while (open.length) open.pop()!.dispose();
  });
  const pool = (opts: ConstructorParameters<typeof StatPool>[0]) => {
    const p = new StatPool(opts);
    open.push(p);
    return p;
  };
  const always = { tick: async () => true };

  it('the worker takes a share, and every slot holds what lstat says — files, a folder, a symlink, missing paths', async () => {
    const { paths } = tree(600);
    const p = pool({ min: 0, chunk: 8, workerFirst: true });
    assert.equal(await p.whenReady(), true, 'the worker is up');
    const { stats, helped } = await p.statMany(paths, always);
    assert.ok(helped > 0, 'the worker statted some');
    assertAsLstat(paths, stats);
  });

  it('the same list again (the worker keeps it) is statted anew; a different list of the same length is statted as given', async () => {
    const { ws, paths } = tree(300);
    const p = pool({ min: 0, chunk: 4, workerFirst: true });
    await p.whenReady();
    await p.statMany(paths, always);
    // Changed between the two jobs: the second must see the new sizes, whichever thread statted them.
    for (let i = 0; i < 300; i += 3) fs.writeFileSync(path.join(ws, `d${i % 7}/f${i}.txt`), 'changed!'.repeat(9));
    fs.rmSync(path.join(ws, 'd2'), { recursive: true });
    const again = await p.statMany(paths, always);
    assert.ok(again.helped > 0);
    assertAsLstat(paths, again.stats);
    const other = [...paths].reverse(); // same length, other paths at each index
    const third = await p.statMany(other, always);
    assert.ok(third.helped > 0);
    assertAsLstat(other, third.stats);
  });

  it('a worker that dies mid-job leaves its slots to the main thread; the next job starts another', async () => {
    // 10,000 files: the worker needs tens of ms for all of them, so it is still at work when the
    // main thread's first chunk is done (it starts once the worker took one) and kills it.
    const { paths } = tree(10_000);
    const p = pool({ min: 0, chunk: 2, workerFirst: true });
    await p.whenReady();
    const worker = (p as unknown as { worker: { terminate(): Promise<number> } }).worker;
    let killed = false;
    const r = await p.statMany(paths, {
      tick: async (_n, helped) => {
        if (!killed && helped() > 0) {
          killed = true;
          await worker.terminate();
        }
        return true;
      },
    });
    assert.equal(killed, true, 'the main thread statted a chunk while the worker was at work');
    // Slots the worker claimed but had not filled read NotStatted: the caller stats those itself.
    assertAsLstat(paths, r.stats, true);
    assert.equal(await p.whenReady(), true, 'a new worker');
    const next = await p.statMany(paths, always);
    assert.ok(next.helped > 0);
    assertAsLstat(paths, next.stats);
  });

  it('stopped (a deadline, a cancel): the worker takes no further chunk, and what nobody statted says so', async () => {
    // 6,000 files, and the worker waits a millisecond before each chunk of 5: it would need over a
    // second for all (without the wait, tens of ms: a busy machine could hold the main thread that
    // long). The stop comes after the main thread's first chunk.
    const { paths } = tree(6000);
    const p = pool({ min: 0, chunk: 5, workerFirst: true, workerPauseMs: 1 });
    await p.whenReady();
    const r = await p.statMany(paths, { tick: async () => false });
    assert.ok(r.helped > 0 && r.helped < paths.length - 5, `the worker stopped too (${r.helped})`);
    const states = paths.map((_, i) => r.stats[i * STAT_WIDTH]);
    assert.ok(states.includes(StatKind.NotStatted), 'the rest is left');
    assertAsLstat(paths, r.stats, true);
  });

  it('below its threshold, or disposed, the main thread stats alone', async () => {
    const { paths } = tree(50);
    const small = pool({ min: 1000, chunk: 1 });
    const a = await small.statMany(paths, always);
    assert.equal(a.helped, 0);
    assertAsLstat(paths, a.stats);
    const gone = pool({ min: 0, chunk: 1 });
    await gone.whenReady();
    gone.dispose();
    assert.equal(await gone.whenReady(), false);
    const b = await gone.statMany(paths, always);
    assert.equal(b.helped, 0);
    assertAsLstat(paths, b.stats);
  });
});
