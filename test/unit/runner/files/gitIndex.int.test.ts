// What git had of a file before a command, read-only: git's index file read by us (gitIndex.ts),
// checked against git's own listing of it in every index version, and `git status` where we do not
// read the index. The answers of both ways, and where they differ.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cleanContents, notAsRecorded, repoBefore } from '../../../../src/runner/fileJournal/git';
import { type IndexEntry, readGitIndex, UnsupportedIndex } from '../../../../src/runner/fileJournal/gitIndex';
import { FileChangeRecorder } from '../../../../src/runner/fileJournal/recorder';
import { fileSig } from '../../../../src/runner/fileJournal/scanTree';
import { runCommand } from '../../../../src/runner/tools';
import { tmpDir } from '../helpers';
import { git, workspace, writtenBeforeGitLooks } from './journalSupport';

/** `git ls-files --stage --debug`: what git itself reads from the index, entry by entry. */
function gitsEntries(ws: string): Map<string, Omit<IndexEntry, 'intentToAdd'>> {
  const out = new Map<string, Omit<IndexEntry, 'intentToAdd'>>();
  const text = git(ws, '-c', 'core.quotepath=off', 'ls-files', '--stage', '--debug', '-z');
  const re =
    /(\d+) ([0-9a-f]{40}) (\d)\t([^\0]+)\0\s+ctime: (\d+):(\d+)\s+mtime: (\d+):(\d+)\s+dev: \d+\s+ino: (\d+)\s+uid: \d+\s+gid: \d+\s+size: (\d+)\s+flags: [0-9a-f]+\s*/gy;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.set(m[4]!, {
      mode: parseInt(m[1]!, 8),
      blob: m[2]!,
      stage: Number(m[3]),
      ctimeSec: Number(m[5]),
      ctimeNsec: Number(m[6]),
      mtimeSec: Number(m[7]),
      mtimeNsec: Number(m[8]),
      ino: Number(m[9]),
      size: Number(m[10]),
    });
  }
  assert.equal(re.lastIndex === 0 ? text.length : re.lastIndex, text.length, 'all of git’s listing was parsed');
  return out;
}

function indexOf(ws: string) {
  const file = path.join(ws, '.git', 'index');
  return readGitIndex(fs.readFileSync(file), fs.statSync(file, { bigint: true }).mtimeNs);
}

const sigOf = (ws: string) => (rel: string) => {
  const st = fs.lstatSync(path.join(ws, rel), { throwIfNoEntry: false });
  return st && fileSig(st, Date.now());
};

describe("file journal: git's index, read by us", () => {
  const FILES = {
    'a.txt': 'a\n',
    'dir with space/b c.txt': 'spaced\n',
    'ünïcödé/ß.txt': 'unicode\n',
    [`deep/${'x'.repeat(180)}/${'y'.repeat(60)}.txt`]: 'long\n',
    'deep/sibling.txt': 'prefix shared with the long one\n',
    'exec.sh': '#!/bin/sh\n',
  };

  // Version 3 is written only when an entry needs its extended flags (below).
  for (const version of [2, 4]) {
    it(`index version ${version}: every entry as git lists it (names with spaces, non-ASCII, long, shared prefixes; modes; a symlink)`, () => {
      const ws = workspace(FILES);
      fs.chmodSync(path.join(ws, 'exec.sh'), 0o755);
      fs.symlinkSync('a.txt', path.join(ws, 'link'));
      git(ws, 'init', '-q');
      git(ws, 'add', '-A');
      git(ws, 'commit', '-qm', 'initial');
      git(ws, 'update-index', '--index-version', String(version));
      const idx = indexOf(ws);
      assert.equal(idx.version, version);
      const expected = gitsEntries(ws);
      assert.equal(idx.count, expected.size);
      assert.equal(expected.size, Object.keys(FILES).length + 1);
      const got = idx.lookup([...expected.keys(), 'not/there.txt', 'a.tx']);
      assert.deepEqual(
        new Map([...got].map(([p, e]) => [p, { ...e, intentToAdd: undefined }])),
        new Map([...expected].map(([p, e]) => [p, { ...e, intentToAdd: undefined }])),
      );
      assert.equal(got.get('link')!.mode, 0o120000);
      assert.equal(got.get('exec.sh')!.mode, 0o100755);
      assert.deepEqual([...idx.lookup(['deep/sibling.txt']).keys()], ['deep/sibling.txt'], 'one name asked, one found');
    });
  }

  for (const version of [3, 4]) {
    it(`index version ${version}: extended flags (skip-worktree, git add -N) and a conflict's stages`, () => {
      const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'base\n' }, { git: true });
      git(ws, 'checkout', '-q', '-b', 'other');
      fs.writeFileSync(path.join(ws, 'c.txt'), 'theirs\n');
      git(ws, 'commit', '-qam', 'theirs');
      git(ws, 'checkout', '-q', '-');
      fs.writeFileSync(path.join(ws, 'c.txt'), 'ours\n');
      git(ws, 'commit', '-qam', 'ours');
      assert.throws(() => git(ws, 'merge', '-q', 'other'), 'a conflict in c.txt');
      git(ws, 'update-index', '--skip-worktree', 'b.txt');
      fs.writeFileSync(path.join(ws, 'new.txt'), 'new\n');
      git(ws, 'add', '-N', 'new.txt');
      git(ws, 'update-index', '--index-version', String(version));
      const idx = indexOf(ws);
      assert.equal(idx.version, version);
      const got = idx.lookup(['a.txt', 'b.txt', 'c.txt', 'new.txt']);
      assert.ok(got.get('c.txt')!.stage > 0);
      assert.equal(notAsRecorded(got.get('c.txt')!, sigOf(ws)('c.txt'), idx.mtimeNs), 'it had a merge conflict in git');
      assert.equal(got.get('new.txt')!.intentToAdd, true);
      assert.equal(got.get('a.txt')!.intentToAdd, false);
      assert.equal(got.get('b.txt')!.blob, gitsEntries(ws).get('b.txt')!.blob);
      assert.equal(
        notAsRecorded(got.get('new.txt')!, sigOf(ws)('new.txt'), idx.mtimeNs),
        'it was only marked to be added to git (`git add -N`)',
      );
    });
  }

  it('refuses what it does not read: a split index, a cut-short or foreign file (the caller asks git status instead)', async () => {
    const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, { git: true });
    const whole = fs.readFileSync(path.join(ws, '.git', 'index'));
    const st = fs.statSync(path.join(ws, '.git', 'index'), { bigint: true });
    assert.throws(() => readGitIndex(whole.subarray(0, 60), st.mtimeNs), UnsupportedIndex);
    assert.throws(
      () => readGitIndex(Buffer.concat([whole.subarray(0, 40), Buffer.alloc(40)]), st.mtimeNs),
      UnsupportedIndex,
    );
    assert.throws(() => readGitIndex(Buffer.from('{"not":"an index"}'.repeat(4)), st.mtimeNs), UnsupportedIndex);
    git(ws, 'update-index', '--split-index');
    assert.throws(() => indexOf(ws), /split index/);
    const before = await repoBefore(ws, '', { sigOf: sigOf(ws) });
    assert.equal(before?.kind, 'status', 'git status answers instead');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'changed\n');
    assert.equal(String((await cleanContents(ws, before!, ['a.txt'])).get('a.txt')), 'a\n');
  });

  it("a hostile repository: an index that is a FIFO, a device or a directory is not read, and the host's thread never waits on it; git status answers instead", async () => {
    for (const plant of ['fifo', 'device', 'dir'] as const) {
      const ws = workspace({ 'a.txt': 'a\n' }, { git: true });
      const index = path.join(ws, '.git', 'index');
      fs.rmSync(index);
      if (plant === 'fifo') execFileSync('mkfifo', [index]);
      else if (plant === 'device') fs.symlinkSync('/dev/zero', index);
      else fs.mkdirSync(index);
      // The event loop keeps turning while the repository is asked (a blocking open of the FIFO would
      // stop it for good). For git status, which opens the FIFO in its own process, a writer comes
      // and goes, so it fails at once instead of at its timeout.
      let last = Date.now();
      let longest = 0;
      const tick = setInterval(() => {
        longest = Math.max(longest, Date.now() - last);
        last = Date.now();
      }, 20);
      const writer =
        plant === 'fifo' &&
        setTimeout(() => fs.open(index, 'w', (err, fd) => (err ? undefined : fs.close(fd, () => undefined))), 300);
      try {
        const before = await repoBefore(ws, '', { sigOf: sigOf(ws) });
        assert.notEqual(before?.kind, 'index', plant);
      } finally {
        clearInterval(tick);
        if (writer) clearTimeout(writer);
      }
      assert.ok(longest < 1_000, `${plant}: the event loop stalled ${longest} ms`);
    }
  });

  for (const way of ['index', 'status'] as const) {
    it(`the ${way} way: clean files from git in one batch (spaces, subfolders); why not for dirty, filtered and untracked ones`, async () => {
      const ws = workspace(
        {
          'a b/c d.txt': 'spaced\n',
          'top.txt': 'top\n',
          'dirty.txt': 'd\n',
          'staged.txt': 'committed\n',
          'pic.lfs': 'pointer\n',
          '.gitattributes': '*.lfs filter=lfs\n',
        },
        { git: true },
      );
      fs.writeFileSync(path.join(ws, 'dirty.txt'), 'changed\n');
      fs.writeFileSync(path.join(ws, 'staged.txt'), 'staged, not committed\n');
      writtenBeforeGitLooks(path.join(ws, 'staged.txt'));
      git(ws, 'add', 'staged.txt');
      const repo = (await repoBefore(ws, '', { sigOf: sigOf(ws), way }))!;
      assert.equal(repo.kind, way);
      const got = await cleanContents(ws, repo, [
        'a b/c d.txt',
        'top.txt',
        'dirty.txt',
        'staged.txt',
        'pic.lfs',
        'new.txt',
      ]);
      assert.equal(String(got.get('a b/c d.txt')), 'spaced\n');
      assert.equal(String(got.get('top.txt')), 'top\n');
      assert.equal(got.get('pic.lfs'), 'git reads it through the "lfs" filter');
      assert.equal(got.get('new.txt'), 'it was not tracked by git');
      if (way === 'index') {
        assert.match(String(got.get('dirty.txt')), /^it differed from what git's index recorded/);
        assert.equal(String(got.get('staged.txt')), 'staged, not committed\n', 'what the index holds, as the file was');
      } else {
        assert.equal(got.get('dirty.txt'), 'it had changes not committed to git');
        assert.equal(got.get('staged.txt'), 'it had changes not committed to git');
      }
      assert.match(git(ws, 'status', '--porcelain'), /^ M dirty\.txt$/m, 'nothing in the repository changed');
      assert.match(git(ws, 'status', '--porcelain'), /^M {2}staged\.txt$/m);
    });
  }

  it("git's own test: size, inode, mtime and ctime as recorded (32-bit, seconds where git kept no nanoseconds); racily clean entries do not vouch", () => {
    const ws = workspace({ 'a.txt': 'a\n' }, { git: true });
    const idx = indexOf(ws);
    const e = idx.lookup(['a.txt']).get('a.txt')!;
    const sig = sigOf(ws)('a.txt')!;
    assert.equal(notAsRecorded(e, sig, idx.mtimeNs), null);
    assert.equal(notAsRecorded({ ...e, mtimeNsec: 0 }, sig, idx.mtimeNs + 1_000_000_000n), null, 'seconds only');
    assert.equal(notAsRecorded(e, { ...sig, ino: sig.ino + 2 ** 32 }, idx.mtimeNs), null, 'the inode as 32 bits');
    const differs = /^it differed from what git's index recorded/;
    assert.match(notAsRecorded(e, { ...sig, size: sig.size + 1 }, idx.mtimeNs)!, differs);
    assert.match(notAsRecorded(e, { ...sig, mtimeMs: sig.mtimeMs + 0.01 }, idx.mtimeNs)!, differs, '10 µs later');
    assert.match(notAsRecorded(e, { ...sig, ctimeMs: sig.ctimeMs + 1000 }, idx.mtimeNs)!, differs);
    assert.match(notAsRecorded(e, { ...sig, ino: sig.ino + 1 }, idx.mtimeNs)!, differs);
    const entryNs = BigInt(e.mtimeSec) * 1_000_000_000n + BigInt(e.mtimeNsec);
    const racy = /^it changed within the timestamp of git's last look at it/;
    assert.match(notAsRecorded(e, sig, entryNs)!, racy, 'the index written in the tick the file changed');
    assert.match(notAsRecorded({ ...e, mtimeNsec: 0 }, sig, BigInt(e.mtimeSec) * 1_000_000_000n + 999_999_999n)!, racy);
    assert.equal(notAsRecorded({ ...e, stage: 2 }, sig, idx.mtimeNs), 'it had a merge conflict in git');
    assert.equal(
      notAsRecorded(e, undefined, idx.mtimeNs),
      "the scan before the command did not stat it, so git's record cannot vouch for it",
    );
  });

  it('an index read before is taken again while its stat is unchanged; rewritten by git, or in place, or just written, it is read again', async () => {
    const ws = workspace({ 'a.txt': 'committed a\n', 'b.txt': 'b\n' }, { git: true });
    const indexFile = path.join(ws, '.git', 'index');
    // A condition on the clock: the index's last change is older than the racy margin.
    const settledIndex = async () => {
      while (Date.now() < fs.statSync(indexFile).ctimeMs + 150) await new Promise((r) => setTimeout(r, 20));
    };
    const read = async () => {
      const r = (await repoBefore(ws, '', { sigOf: sigOf(ws) }))!;
      assert.equal(r.kind, 'index');
      return r as Extract<typeof r, { kind: 'index' }>;
    };
    await settledIndex();
    const first = await read();
    assert.equal((await read()).index, first.index, 'unchanged: the parsed index is kept');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'added a\n');
    writtenBeforeGitLooks(path.join(ws, 'a.txt')); // (not racily clean in the index git writes now)
    git(ws, 'add', 'a.txt'); // git writes a new index and renames it over the old one
    const written = Date.now();
    const afterAdd = await read();
    assert.notEqual(afterAdd.index, first.index, 'rewritten by git: read again');
    assert.equal(String((await cleanContents(ws, afterAdd, ['a.txt'])).get('a.txt')), 'added a\n');
    const fresh = await read();
    if (Date.now() - written < 90)
      assert.notEqual(fresh.index, afterAdd.index, 'read within the tick of its write: not kept');
    await settledIndex();
    const kept = await read();
    assert.equal((await read()).index, kept.index);
    fs.writeFileSync(indexFile, fs.readFileSync(indexFile)); // the same bytes, in place: its ctime moves
    assert.notEqual((await read()).index, kept.index, 'written in place: read again');
  });

  it('a command that rewrites the index (git add, git rm --cached): the earlier content is still the one git had before it', async () => {
    const ws = workspace({ 'a.txt': 'committed a\n', 'b.txt': 'committed b\n' }, { git: true });
    const recorder = new FileChangeRecorder({ workspaceRoot: ws });
    const noStore = { put: async (c: string | Uint8Array) => `${c.length}`.padStart(64, '0'), effects: async () => [] };
    const command = {
      command: 'echo changed > a.txt && git add a.txt && echo changed > b.txt && git rm -q --cached b.txt',
      cwd: '.',
      timeout_ms: 60_000,
    };
    const watch = (await recorder.watch(runCommand, command, noStore))!;
    const out = await runCommand.run(command as never, {
      workspaceRoot: ws,
      signal: new AbortController().signal,
      idempotencyKey: 'k',
      outputCap: 32 * 1024,
    });
    assert.equal(out.is_error, false, out.output);
    const { files } = await watch.finish(undefined);
    const byPath = new Map(files.map((f) => [f.path, f]));
    assert.deepEqual([...byPath.keys()].sort(), ['a.txt', 'b.txt']);
    for (const [p, text] of [
      ['a.txt', 'committed a\n'],
      ['b.txt', 'committed b\n'],
    ] as const) {
      const before = byPath.get(p)!.before;
      assert.ok(before.kind === 'file' && before.size === Buffer.byteLength(text), JSON.stringify(before));
    }
    assert.match(
      git(ws, 'status', '--porcelain'),
      /^M {2}a\.txt$/m,
      'the command’s git add stands; ours wrote nothing',
    );
  });

  it('never runs a filter program: a filter set by a .gitattributes only in the index, or only in the work tree (ignored by git), is seen', async () => {
    const marker = path.join(tmpDir('aw-git-filter-'), 'RAN');
    const ws = workspace(
      { 'a.txt': 'a\n', 'sub/b.txt': 'b\n', 'sub/.gitattributes': '*.txt filter=evil\n', '.gitignore': 'c.*\n' },
      { git: true },
    );
    git(ws, 'config', 'filter.evil.smudge', `touch '${marker}'; cat`);
    git(ws, 'config', 'filter.evil.clean', 'cat');
    fs.rmSync(path.join(ws, 'sub', '.gitattributes')); // in the index only now
    fs.writeFileSync(path.join(ws, '.gitattributes'), 'c.txt filter=evil\n'); // in the work tree only
    fs.writeFileSync(path.join(ws, 'c.txt'), 'c\n');
    writtenBeforeGitLooks(path.join(ws, 'c.txt'));
    git(ws, 'add', '-f', 'c.txt');
    git(ws, 'commit', '-qm', 'c');
    assert.deepEqual(indexOf(ws).attributeFiles, ['sub/.gitattributes']);
    const repo = (await repoBefore(ws, '', { sigOf: sigOf(ws) }))!;
    assert.equal(repo.kind, 'index');
    const got = await cleanContents(ws, repo, ['a.txt', 'sub/b.txt', 'c.txt']);
    assert.equal(String(got.get('a.txt')), 'a\n');
    assert.equal(got.get('sub/b.txt'), 'git reads it through the "evil" filter');
    assert.equal(got.get('c.txt'), 'git reads it through the "evil" filter');
    assert.ok(!fs.existsSync(marker), 'the filter program never ran');
    fs.writeFileSync(path.join(ws, 'sub', '.gitattributes'), '*.txt filter=evil\n'); // back in the work tree
    const again = await cleanContents(ws, (await repoBefore(ws, '', { sigOf: sigOf(ws) }))!, ['sub/b.txt']);
    assert.equal(again.get('sub/b.txt'), 'git reads it through the "evil" filter');
    assert.ok(!fs.existsSync(marker), 'the filter program never ran');
  });
});
