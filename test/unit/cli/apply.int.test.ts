// `agent-waypoints apply` as a user runs it: the bundled command line spawned as its own process, on
// the store a run of another checkout (A: the real runner over HTTP to the scripted model) wrote,
// applied into checkout B. --dry-run prints the plan and writes nothing; --yes writes the clean files
// and keeps a file changed here (exit 2, listed); again, nothing is written; --overwrite takes the
// run's version of it; --undo twice puts B back as it was; without --yes off a terminal nothing is written.
// --patch writes the same changes as a patch `git apply` takes, touching nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openDiskStore } from '../../../src/store';
import { cli, cliBundle, type CliResult } from '../../support/cliProcess';
import { PATHS, ranElsewhere } from '../actions/bringBack/support';
import { git, read, same } from '../runner/files/journalSupport';
import { tmp } from '../loop/support';

type PlanJson = {
  files: { path: string; action: string; will_write: boolean; overwritable: boolean; reason: string }[];
  record: { id: string; files: { path: string; action: string }[] } | null;
  undoes: string | null;
};

const parsed = (r: CliResult): PlanJson => JSON.parse(r.stdout) as PlanJson;

describe('agent-waypoints apply', function () {
  this.timeout(120_000);
  before(() => cliBundle());

  it('dry run, apply with a conflict kept (exit 2), nothing the second time, --overwrite, --undo back to before', async () => {
    const storeDir = tmp('apply-store');
    const store = openDiskStore(storeDir);
    const { a, b, runId } = await ranElsewhere(store);
    await store.close();
    fs.writeFileSync(path.join(b, 'cmd.txt'), 'my local edit\n');
    const initial = read(b, PATHS);
    const env = { AGENT_WAYPOINTS_HOME: tmp('apply-home') };
    const apply = (...args: string[]) => cli(['apply', ...args, '--store', storeDir, '--workspace', b], env);
    const file = (rel: string) => fs.readFileSync(path.join(b, rel), 'utf8');

    const dry = await apply(runId, '--dry-run', '--json');
    assert.equal(dry.code, 2, dry.stderr);
    const plan = parsed(dry);
    assert.deepEqual(
      plan.files.map((f) => [f.path, f.action, f.will_write]),
      [
        ['a.txt', 'revert', true],
        ['bin.dat', 'revert', true],
        ['cmd.txt', 'conflict', false],
        ['gone.txt', 'revert', true],
        ['src/new.txt', 'revert', true],
        ['tool.sh', 'revert', true],
      ],
    );
    assert.equal(plan.record, null);
    for (const p of PATHS) assert.ok(same(read(b, [p]).get(p), initial.get(p)), `${p} untouched by the dry run`);

    const noYes = await apply(runId);
    assert.equal(noYes.code, 1);
    assert.match(noYes.stderr, /pass --yes/);
    assert.equal(file('a.txt'), 'original a\n', 'nothing written without --yes');

    const applied = await apply(runId.slice(0, 8), '--yes');
    assert.equal(applied.code, 2, applied.stderr);
    assert.match(applied.stdout, /keep {2,}cmd\.txt +the run changed it, and the copy here differs/);
    assert.match(applied.stdout, /Brought back 5 files \(restore-1\)\. 1 left as they are/);
    assert.equal(file('cmd.txt'), 'my local edit\n', 'the local edit is kept');
    const aNow = read(a, PATHS);
    for (const p of PATHS.filter((x) => x !== 'cmd.txt'))
      assert.ok(same(read(b, [p]).get(p), aNow.get(p)), `${p} as in A`);

    const again = await apply(runId, '--yes', '--json');
    assert.equal(again.code, 2, 'cmd.txt is still left as it is');
    assert.equal(parsed(again).record, null, 'nothing written, nothing recorded the second time');
    assert.deepEqual(
      parsed(again)
        .files.filter((f) => f.action !== 'unchanged')
        .map((f) => f.path),
      ['cmd.txt'],
    );

    const taken = await apply(runId, '--yes', '--overwrite', 'cmd.txt');
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(file('cmd.txt'), 'v2\n');

    const undo1 = await apply(runId, '--undo', '--yes', '--json');
    assert.equal(undo1.code, 0, undo1.stderr);
    assert.equal(parsed(undo1).undoes, 'restore-2');
    assert.equal(file('cmd.txt'), 'my local edit\n', 'the overwritten local edit is back');
    const undo2 = await apply(runId, '--undo', '--yes');
    assert.equal(undo2.code, 0, undo2.stderr);
    const back = read(b, PATHS);
    for (const p of PATHS) assert.ok(same(back.get(p), initial.get(p)), `${p} is back as before`);
    const none = await apply(runId, '--undo', '--yes');
    assert.equal(none.code, 0);
    assert.match(none.stdout, /Nothing to undo/);
  });

  it('--patch writes a patch that `git apply` takes: B ends as A, binary file and permission bits included; nothing else touched', async () => {
    const storeDir = tmp('patch-store');
    const store = openDiskStore(storeDir);
    const { a, b, runId } = await ranElsewhere(store);
    await store.close();
    const initial = read(b, PATHS);
    const patch = path.join(tmp('patch-out'), 'run.diff');
    const env = { AGENT_WAYPOINTS_HOME: tmp('patch-home') };
    const r = await cli(['apply', runId, '--patch', patch, '--store', storeDir, '--workspace', b], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Wrote the changes of 6 files/);
    for (const p of PATHS) assert.ok(same(read(b, [p]).get(p), initial.get(p)), `${p} untouched by --patch`);
    assert.match(fs.readFileSync(patch, 'utf8'), /GIT binary patch/);

    git(b, 'apply', patch);
    const [inA, inB] = [read(a, PATHS), read(b, PATHS)];
    for (const p of PATHS) assert.ok(same(inB.get(p), inA.get(p)), `${p} as in A`);
    assert.equal(fs.statSync(path.join(b, 'tool.sh')).mode & 0o777, 0o755);
  });
});
