// Property: whatever a command does and whatever the watcher reports (every event, some, none, or
// an overflow), the index's scans list exactly the files a full walk lists, and the paths it says a
// command changed include every path whose content or mode the command changed. Operations run
// back to back, so many land in the same kernel timestamp tick as a scan (the racy case: a
// same-size rewrite that keeps size, mtime and ctime) — the fingerprints must catch those.
// Also a table of the racy proof itself, and that an index is not trusted across a reload.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Emitter } from '../../../../src/common/emitter';
import { sha256 } from '../../../../src/common/hash';
import { changedPaths } from '../../../../src/runner/fileJournal/scan';
import type { Scan } from '../../../../src/runner/fileJournal/scanIndex';
import { WorkspaceIndex } from '../../../../src/runner/fileJournal/scanIndex';
import { Fingerprints } from '../../../../src/runner/fileJournal/scanRacy';
import { fileSig, sameSig } from '../../../../src/runner/fileJournal/scanTree';
import type { WatchEvent, WorkspaceWatcher } from '../../../../src/runner/fileJournal/watcher';
import { workspace } from './journalSupport';
import { trials } from '../../../support/trials';

/** Reports only what the test passes on: events can be dropped, or lost altogether. */
class ManualWatcher implements WorkspaceWatcher {
  private readonly events = new Emitter<WatchEvent>();
  onEvent(l: (e: WatchEvent) => void) {
    return this.events.on(l);
  }
  unwatched() {
    return [];
  }
  emit(e: WatchEvent) {
    this.events.emit(e);
  }
  dispose() {
    this.events.dispose();
  }
}

const FILES = ['a.txt', 'b.log', 'd1/c.txt', 'd1/e/f.txt', 'd2/g.txt'] as const;
const DIRS = ['d1', 'd1/e', 'd2', 'd3'] as const;

type Op =
  | { t: 'write'; path: string; text: string }
  | { t: 'sameSize'; path: string; keepMtime: boolean }
  | { t: 'rm'; path: string }
  | { t: 'mv'; from: string; to: string }
  | { t: 'mvDir'; from: string; to: string }
  | { t: 'rmDir'; path: string }
  | { t: 'mkdir'; path: string }
  | { t: 'chmod'; path: string }
  | { t: 'ignore'; text: string };

const file = fc.constantFrom<string>(...FILES, 'd3/h.txt', 'd1/e/new.log');
const dir = fc.constantFrom<string>(...DIRS);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('write' as const), path: file, text: fc.constantFrom('x', 'yy', 'zzz') }),
  fc.record({ t: fc.constant('sameSize' as const), path: file, keepMtime: fc.boolean() }),
  fc.record({ t: fc.constant('rm' as const), path: file }),
  fc.record({ t: fc.constant('mv' as const), from: file, to: file }),
  fc.record({ t: fc.constant('mvDir' as const), from: dir, to: fc.constantFrom('d4', 'd5/sub') }),
  fc.record({ t: fc.constant('rmDir' as const), path: dir }),
  fc.record({ t: fc.constant('mkdir' as const), path: fc.constantFrom('d6', 'd1/e/g') }),
  fc.record({ t: fc.constant('chmod' as const), path: file }),
  fc.record({ t: fc.constant('ignore' as const), text: fc.constantFrom('*.log\n', 'd2/\n', '', '!b.log\n*.log\n') }),
);
/** An op, and whether the watcher reports it (undefined: it overflows after it). */
const step = fc.tuple(op, fc.constantFrom<boolean | undefined>(true, true, false, undefined));

/** Applies `o`; returns the absolute paths it touched (for the watcher). */
function apply(ws: string, o: Op): string[] {
  const abs = (p: string) => path.join(ws, p);
  const exists = (p: string) => fs.existsSync(abs(p));
  const isFile = (p: string) => fs.lstatSync(abs(p), { throwIfNoEntry: false })?.isFile() === true;
  try {
    switch (o.t) {
      case 'write':
        fs.mkdirSync(path.dirname(abs(o.path)), { recursive: true });
        fs.writeFileSync(abs(o.path), o.text);
        return [abs(o.path)];
      case 'sameSize': {
        if (!isFile(o.path)) return [];
        const st = fs.statSync(abs(o.path));
        const old = fs.readFileSync(abs(o.path));
        fs.writeFileSync(abs(o.path), Buffer.from(old.map((b) => (b === 0x71 ? 0x70 : 0x71))));
        if (o.keepMtime) fs.utimesSync(abs(o.path), st.atime, st.mtime);
        return [abs(o.path)];
      }
      case 'rm':
        fs.rmSync(abs(o.path), { force: true, recursive: true });
        return [abs(o.path)];
      case 'mv':
      case 'mvDir':
        if (!exists(o.from) || exists(o.to) || o.to.startsWith(`${o.from}/`)) return [];
        fs.mkdirSync(path.dirname(abs(o.to)), { recursive: true });
        fs.renameSync(abs(o.from), abs(o.to));
        return [abs(o.from), abs(o.to)];
      case 'rmDir':
        fs.rmSync(abs(o.path), { recursive: true, force: true });
        return [abs(o.path)];
      case 'mkdir':
        fs.mkdirSync(abs(o.path), { recursive: true });
        return [abs(o.path)];
      case 'chmod':
        if (!isFile(o.path)) return [];
        fs.chmodSync(abs(o.path), (fs.statSync(abs(o.path)).mode & 0o777) ^ 0o100);
        return [abs(o.path)];
      case 'ignore':
        fs.writeFileSync(abs('.ignore'), o.text);
        return [abs('.ignore')];
    }
  } catch (err) {
    // A path that is a folder where the op wants a file (or the reverse): nothing happened.
    if (['EISDIR', 'ENOTDIR', 'EEXIST', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) return [];
    throw err;
  }
}

/** What a full walk (a fresh index) lists, with each file's content and mode. */
async function truth(ws: string): Promise<Map<string, string>> {
  const fresh = new WorkspaceIndex({ root: ws });
  const scan = await fresh.before();
  fresh.dispose();
  const out = new Map<string, string>();
  for (const rel of scan.files.keys()) {
    const abs = path.join(ws, rel);
    out.set(rel, `${fs.statSync(abs).mode & 0o777}:${sha256(fs.readFileSync(abs))}`);
  }
  return out;
}

const sorted = (s: Scan) => [...s.files.keys()].sort();

async function run(ws: string, watcher: ManualWatcher, ops: readonly [Op, boolean | undefined][]): Promise<void> {
  for (const [o, report] of ops) {
    const touched = apply(ws, o);
    if (report) for (const p of touched) watcher.emit({ kind: 'changed', path: p });
    if (report === undefined) watcher.emit({ kind: 'lost', reason: 'overflow', lasting: false });
  }
}

describe('file journal: the command scan index finds every change a full walk finds (property)', function () {
  this.timeout(300_000);

  it('lists what a full walk lists, and reports every path whose content or mode a command changed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 5 }),
        fc.array(step, { minLength: 1, maxLength: 6 }),
        fc.array(step, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (user, command1, command2, twoThreads) => {
          const ws = workspace(Object.fromEntries(FILES.map((f) => [f, `q-${f}`])));
          fs.mkdirSync(path.join(ws, 'd3'));
          const watcher = new ManualWatcher();
          // Half the runs stat every file on two threads, the worker first (statPool.ts): the same answers.
          const statPool = twoThreads ? { min: 0, chunk: 1, workerFirst: true } : undefined;
          const index = new WorkspaceIndex({ root: ws, watcher, ...(statPool ? { statPool } : {}) });
          if (twoThreads) assert.equal(await index.sharedStats(), true);
          try {
            await index.before();
            await index.after();
            for (const [userOps, commandOps] of [
              [user, command1],
              [[], command2],
            ] as const) {
              await run(ws, watcher, userOps);
              const before = await index.before();
              const was = await truth(ws);
              assert.deepEqual(sorted(before), [...was.keys()].sort(), 'before: the files a full walk lists');
              await run(ws, watcher, commandOps);
              const after = await index.after();
              const now = await truth(ws);
              assert.deepEqual(sorted(after), [...now.keys()].sort(), 'after: the files a full walk lists');
              const reported = new Set(changedPaths(before, after));
              for (const p of new Set([...was.keys(), ...now.keys()]))
                if (was.get(p) !== now.get(p))
                  assert.ok(reported.has(p), `${p} changed by the command but not reported (${[...reported]})`);
            }
          } finally {
            index.dispose();
            watcher.dispose();
            fs.rmSync(ws, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: trials(60, 'AW_PROPERTY_RUNS'), endOnFailure: true },
    );
  });
});

describe('file journal: the racy proof, and an index across a reload', () => {
  it('a stat taken within the timestamp tick of a change: a same-size rewrite keeping size and times is told by its content', () => {
    const ws = workspace({ 'f.txt': 'aaaa' });
    const abs = path.join(ws, 'f.txt');
    const st = fs.lstatSync(abs);
    const racy = fileSig(st, st.ctimeMs); // statted in the tick of its change
    assert.equal(racy.racy, true);
    const cases: [string, string, boolean][] = [
      ['same content', 'aaaa', true],
      ['same size, other content', 'bbbb', false],
    ];
    for (const [name, text, same] of cases) {
      const proofs = new Fingerprints();
      const prev = proofs.judge(abs, { ...racy }, undefined);
      assert.equal(prev.fp, sha256('aaaa'), 'a racy file is fingerprinted when statted');
      fs.writeFileSync(abs, text);
      // The next scan's stat, forced equal to the first (as when the rewrite fell in the same tick).
      const next = proofs.judge(abs, { ...racy }, prev);
      assert.equal(sameSig(prev, next), same, name);
      fs.writeFileSync(abs, 'aaaa');
    }
    const old = fileSig(st, st.ctimeMs + 5_000);
    assert.equal(old.racy, undefined, 'statted well after its change: the stat is proof');
  });

  it('after a reload the index is not trusted: a new one walks the tree, and finds a change made while none was watching', async () => {
    const ws = workspace({ 'a.txt': 'one', 'd/b.txt': 'two' });
    const first = new WorkspaceIndex({ root: ws });
    const s1 = await first.before();
    first.dispose(); // the window reloads
    fs.writeFileSync(path.join(ws, 'd/b.txt'), 'TWO');
    const second = new WorkspaceIndex({ root: ws });
    const s2 = await second.before();
    assert.equal(s2.work.kind, 'walk');
    assert.equal(s2.work.why, 'first scan');
    assert.deepEqual(changedPaths(s1, s2), ['d/b.txt']);
    second.dispose();
  });
});
