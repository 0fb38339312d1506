// How a search stops: the Node engine's worker deadline (a catastrophically backtracking pattern
// must not freeze the extension host) and cancel; the ripgrep process killed on cancel and at the
// deadline; falling back to Node when the binary will not start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createFileFinder, fileLimits } from '../../../../src/runner/tools';
import { alive, rmrf, tmpDir, waitFor } from '../helpers';
import { caller, writeTree } from './support';

/** A stand-in for rg that records its pid and hangs: what a very long search looks like from outside. */
function hangingRipgrep(dir: string): { bin: string; pid: () => number } {
  const bin = path.join(dir, 'rg');
  const pidFile = path.join(dir, 'rg.pid');
  fs.writeFileSync(bin, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 60\n`, { mode: 0o755 });
  return { bin, pid: () => Number(fs.readFileSync(pidFile, 'utf8')) };
}

describe('runner/tools search stops', () => {
  let root: string;
  let tools: string;
  const savedDeadline = fileLimits.deadlineMs;
  beforeEach(() => {
    root = tmpDir('aw-stops-');
    tools = tmpDir('aw-fake-rg-');
    writeTree(root, { 'src/long.txt': `${'a'.repeat(40)}!\n`, 'src/a.txt': 'aaa\n' });
  });
  afterEach(() => {
    fileLimits.deadlineMs = savedDeadline;
    rmrf(root);
    rmrf(tools);
  });

  it('node: a catastrophically backtracking pattern ends at the deadline with what was found; the host stays responsive', async () => {
    fileLimits.deadlineMs = 1000;
    const call = caller(createFileFinder(), root);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const t0 = Date.now();
    const r = await call('search_text', { pattern: '^(a+)+$' });
    clearInterval(ticker);
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^src\/a\.txt:1: aaa\n\[search_text stopped after 1 s while searching src\/long\.txt \(file 2 of 2\): matches after that point are missing\. The pattern may be too slow/,
    );
    assert.ok(Date.now() - t0 < 5000, 'ended at the deadline');
    assert.ok(ticks >= 10, `the event loop kept running while the worker searched (${ticks} ticks)`);
  });

  it('node: cancel stops a running search', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const t0 = Date.now();
    const r = await caller(createFileFinder(), root)('search_text', { pattern: '^(a+)+$' }, { signal: ac.signal });
    assert.equal(r.is_error, true);
    assert.match(r.output, /Cancelled/);
    assert.ok(Date.now() - t0 < 5000);
  });

  it('ripgrep: cancel kills the process before the tool returns', async () => {
    const rg = hangingRipgrep(tools);
    const ac = new AbortController();
    const pending = caller(createFileFinder({ ripgrepPath: rg.bin }), root)(
      'search_text',
      { pattern: 'a' },
      { signal: ac.signal },
    );
    await waitFor(() => fs.existsSync(path.join(tools, 'rg.pid')) && fs.statSync(path.join(tools, 'rg.pid')).size > 0);
    const pid = rg.pid();
    assert.equal(alive(pid), true);
    ac.abort();
    const r = await pending;
    assert.equal(r.output, 'Cancelled.');
    assert.equal(alive(pid), false, 'the ripgrep process is gone');
  });

  it('ripgrep: the deadline kills the process and the answer says the search stopped', async () => {
    fileLimits.deadlineMs = 1000;
    const rg = hangingRipgrep(tools);
    const r = await caller(createFileFinder({ ripgrepPath: rg.bin }), root)('search_text', { pattern: 'a' });
    assert.equal(r.is_error, true);
    assert.match(
      r.output,
      /^No matches for "a" in the workspace\.\n\[search_text stopped after 1 s: matches after that point are missing/,
    );
    assert.equal(alive(rg.pid()), false);
  });

  it('a ripgrep binary that will not start: the Node engine answers, and the host is told once', async () => {
    const reasons: string[] = [];
    const finder = createFileFinder({
      ripgrepPath: path.join(tools, 'missing-rg'),
      onFallback: (r) => reasons.push(r),
    });
    assert.equal(finder.engine, 'ripgrep');
    const call = caller(finder, root);
    assert.equal((await call('search_text', { pattern: '^aaa$' })).output, 'src/a.txt:1: aaa');
    assert.equal((await call('list_files', { path: 'src' })).output, 'a.txt\nlong.txt');
    assert.equal(finder.engine, 'node');
    assert.deepEqual(finder.calls, { ripgrep: 0, node: 2 });
    assert.equal(reasons.length, 1);
    assert.match(reasons[0]!, /ripgrep \(.*missing-rg\) could not start: .*ENOENT/);
  });
});
