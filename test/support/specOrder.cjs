// The order a tier's files are handed to mocha's parallel workers: the slowest first, each to the
// worker that frees up next, so the last files to start are short ones and neither core idles while
// the other finishes a long file (longest-first scheduling). The files a tier names here come first
// in that order; the rest follow in path order. test/unit/specOrder.test.ts checks every name exists.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** Every file under `dir` (relative to the repository, `/`-separated) that `keep` accepts, sorted. */
function filesUnder(dir, keep) {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true })
    .map((f) => `${dir}/${String(f).split(path.sep).join('/')}`)
    .filter(keep)
    .sort();
}

/** The tier's files: `slowestFirst` (those that exist), then the others in path order. */
function ordered(files, slowestFirst) {
  const first = slowestFirst.filter((f) => files.includes(f));
  return [...first, ...files.filter((f) => !first.includes(f))];
}

const tiers = {
  unit: {
    files: () => filesUnder('test/unit', (f) => f.endsWith('.test.ts') && !f.endsWith('.int.test.ts')),
    slowestFirst: [
      'test/unit/loop/bounds.test.ts',
      'test/unit/context/tokens.test.ts',
      'test/unit/runner/files/engines.test.ts',
    ],
  },
  int: {
    files: () => filesUnder('test/unit', (f) => f.endsWith('.int.test.ts')),
    slowestFirst: [
      'test/unit/runner/repoFiles.int.test.ts',
      'test/unit/store/pg/torture.int.test.ts',
      'test/unit/cli/workerTakeover.int.test.ts',
      'test/unit/sandbox/escapes.int.test.ts',
      'test/unit/loop/crash.int.test.ts',
      'test/unit/mcp/large.int.test.ts',
      'test/unit/context/longRun.int.test.ts',
      'test/unit/mcp/servers.int.test.ts',
      'test/unit/loop/loop.int.test.ts',
      'test/unit/context/crashCondense.int.test.ts',
      'test/unit/loop/fence.int.test.ts',
      'test/unit/mcp/crash.int.test.ts',
      'test/unit/cli/cli.int.test.ts',
    ],
  },
  e2e: {
    files: () => filesUnder('test/e2e', (f) => f.endsWith('.e2e.ts')),
    slowestFirst: [
      'test/e2e/agent.e2e.ts',
      'test/e2e/runView.e2e.ts',
      'test/e2e/mcp.e2e.ts',
      'test/e2e/security.e2e.ts',
      'test/e2e/cli.e2e.ts',
      'test/e2e/handoff.e2e.ts',
      'test/e2e/context.e2e.ts',
      'test/e2e/models.e2e.ts',
    ],
  },
};

/** The files of a tier in the order its workers take them. */
function specFiles(tier) {
  const t = tiers[tier];
  return ordered(t.files(), t.slowestFirst);
}

module.exports = { specFiles, tiers };
