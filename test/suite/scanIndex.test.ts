// The command scan's index in a real extension host: VS Code's file watcher is what tells it which
// files changed in place before a command (src/workspaceWatcher.ts). A file changed on disk while
// its folder's stat stays the same can only be seen by a narrowed scan if VS Code reported it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { activated } from './helpers';

const DIR = 'scan-index';

/** Resolves once the clock is past the racy margin of `abs`'s last change (a condition on the clock, not a fixed sleep). */
async function pastRacyMargin(abs: string): Promise<void> {
  const changed = fs.lstatSync(abs).ctimeMs;
  while (Date.now() < changed + 2_200) await new Promise((r) => setTimeout(r, 50));
}

describe('command scan index in a real extension host', function () {
  this.timeout(60_000);
  let root: string;

  before(() => {
    root = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    fs.mkdirSync(path.join(root, DIR), { recursive: true });
    fs.writeFileSync(path.join(root, DIR, 'watched.txt'), 'one');
  });
  after(() => fs.rmSync(path.join(root, DIR), { recursive: true, force: true }));

  it("VS Code's file watcher names a file changed in place: the scan before a command stats it, not the whole tree", async () => {
    const api = await activated();
    const index = api.scanIndex;
    assert.ok(index, 'the extension shares one command-scan index');
    const rel = `${DIR}/watched.txt`;
    const abs = path.join(root, rel);
    // Indexed, and statted again once its stat proves itself (past the racy margin).
    await index.before();
    await index.after();
    await pastRacyMargin(abs);
    await index.after();
    const total = (await index.before()).files.size;
    fs.appendFileSync(abs, ' and two'); // in place: its folder's stat does not move
    const size = fs.statSync(abs).size;
    // Each scan takes the events gathered so far; wait until one has taken VS Code's event for it.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const scan = await index.before();
      assert.equal(scan.work.kind, 'refresh');
      if (scan.files.get(rel)?.size === size) {
        assert.equal(scan.work.narrowed, true, 'chosen by the watcher, not by statting every file');
        assert.ok(scan.work.statted < total, `statted ${scan.work.statted} of ${total} files`);
        break;
      }
      assert.equal(scan.work.narrowed, true);
      assert.ok(Date.now() < deadline, "VS Code's watcher never reported the change");
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('a big workspace: every file statted after a command on two threads — a worker shares the stats in the extension host', async () => {
    const api = await activated();
    const index = api.scanIndex!;
    const big = path.join(root, `${DIR}-big`);
    const n = 4_500; // above the size where a second thread helps (statPool.ts)
    for (let i = 0; i < n; i++) {
      const dir = path.join(big, `d${i % 30}`);
      if (i < 30) fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `v${i}`);
    }
    try {
      await index.before();
      await index.after(); // the tree walked; the worker boots since the workspace is big
      assert.equal(await index.sharedStats(), true, 'a worker thread started in the extension host');
      const changed = path.join(big, 'd7', 'f7.txt');
      // Each scan's share is the threads' race: scan until the worker took one (a condition, bounded).
      const deadline = Date.now() + 30_000;
      for (let round = 0; ; round++) {
        const before = await index.before();
        fs.appendFileSync(changed, ` r${round}`);
        const after = await index.after();
        assert.ok(after.work.ahead >= n, `every file statted ahead (${after.work.ahead})`);
        assert.ok([...after.files.keys()].filter((k) => k.startsWith(`${DIR}-big/`)).length === n, 'every file listed');
        const diff = [...after.files.keys()].filter((k) => before.files.get(k)?.size !== after.files.get(k)?.size);
        assert.deepEqual(diff, [`${DIR}-big/d7/f7.txt`], 'the one change, found');
        if (after.work.helped > 0) break;
        assert.ok(Date.now() < deadline, 'the worker never took a share of the stats');
      }
    } finally {
      fs.rmSync(big, { recursive: true, force: true });
    }
  });
});
