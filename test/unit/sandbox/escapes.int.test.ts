// The escape corpus (escapes/corpus.ts) against the real sandbox — bubblewrap, the seccomp filter,
// the proxy — through the real run_command, as the current user and, when that is root (a dev
// container, CI), as the unprivileged `nobody` too: root keeps every capability unless the
// sandbox drops them, and an ordinary user meets other limits (RLIMIT_NPROC, permissions).
// Every attempt must be contained (the host unchanged, checked from outside) and show the model
// that the sandbox refused it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CORPUS } from './escapes/corpus';
import type { Verdict } from './escapes/escapeRunner';
import { REPO_ROOT } from '../runner/helpers';

const RUNNER = path.join(__dirname, 'escapes', 'escapeRunner.ts');
const NOBODY = 65534;

function runCorpus(asNobody: boolean): Promise<{ uid: number; verdicts: Verdict[] }> {
  const node = [process.execPath, '--import', 'tsx', RUNNER];
  let nobody: string[] = [];
  if (asNobody) {
    // A temp folder of its own (tsx caches there): the suite's is root's.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-sbx-nobody-'));
    fs.chownSync(tmp, NOBODY, NOBODY);
    nobody = [
      'setpriv',
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      'env',
      'HOME=/nonexistent',
      `TMPDIR=${tmp}`,
    ];
  }
  const [file, ...args] = [...nobody, ...node];
  return new Promise((resolve, reject) =>
    execFile(file!, args, { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 280_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`the corpus runner failed: ${err.message}\n${stderr.slice(-4000)}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as { uid: number; verdicts: Verdict[] });
    }),
  );
}

const root = process.getuid?.() === 0;
const users = root
  ? [
      { name: 'root', nobody: false },
      { name: 'an unprivileged user (nobody)', nobody: true },
    ]
  : [{ name: 'the current user', nobody: false }];

for (const user of users) {
  describe(`sandbox escape corpus, as ${user.name} (real bubblewrap)`, function () {
    this.timeout(300_000);
    let verdicts = new Map<string, Verdict>();
    before(async () => {
      const r = await runCorpus(user.nobody);
      assert.equal(r.uid, user.nobody ? NOBODY : process.getuid?.());
      verdicts = new Map(r.verdicts.map((v) => [v.id, v]));
    });

    it('has at least 40 attempts, each run', () => {
      const expected = CORPUS.filter((a) => !a.rootOnly || (root && !user.nobody));
      assert.ok(expected.length >= 40, `${expected.length} attempts`);
      assert.equal(new Set(expected.map((a) => a.id)).size, expected.length, 'each attempt has its own name');
      assert.deepEqual(
        [...verdicts.keys()],
        expected.map((a) => a.id),
      );
    });

    for (const a of CORPUS) {
      if (a.rootOnly && (!root || user.nobody)) continue;
      it(`contains and reports: ${a.id}`, () => {
        const v = verdicts.get(a.id);
        assert.ok(v, 'it ran');
        assert.deepEqual(v.escapes, [], `escaped:\n${v.output}`);
        assert.ok(
          v.reported,
          `the output does not show the refusal (${a.seen}${a.notSeen ? `, not ${a.notSeen}` : ''}):\n${v.output}`,
        );
      });
    }
  });
}
