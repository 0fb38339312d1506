// One resolver, one judgement: the approval policy and the tools resolve a path with the same walk
// (paths.ts over pathWalk.ts, driven synchronously for the policy and asynchronously for the tool),
// the policy judges every name the path goes by, and a tool that finds the path leading elsewhere
// when it runs refuses. The property: for any spelling, the file write_file really changes is the
// one the policy judged — and the policy asked whenever that file is protected.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  callPolicy,
  confinePath,
  createCodingRegistry,
  DEFAULT_FILE_RULES,
  DEFAULT_POLICY,
  PathError,
  type ApprovalPolicy,
} from '../../../src/runner/tools';
import { canonical } from '../../../src/runner/tools/pathWalk';
import { resolvePathSync, type JudgedPaths } from '../../../src/runner/tools/paths';
import { protectedWhy } from '../../../src/runner/tools/protectedFiles';
import { writeTree } from './files/support';
import { rmrf, tmpDir, toolCtx } from './helpers';

const WRITES_AUTO: ApprovalPolicy = {
  ...DEFAULT_POLICY,
  categories: { read: 'auto', write: 'auto', command: 'ask', subagent: 'auto' },
};
const registry = createCodingRegistry();

/** The workspace the spellings are tried on: protected folders, links into them, a dangling link, a link up. */
function hostileWorkspace(): string {
  const ws = tmpDir('aw-resolver-');
  writeTree(ws, {
    'a/f.txt': 'a\n',
    'b/': '',
    '.git/config': '[core]\n',
    '.git/hooks/': '',
    '.vscode/tasks.json': '{}\n',
  });
  fs.symlinkSync('.git', path.join(ws, 'to-git'));
  fs.symlinkSync(path.join(ws, '.git/hooks'), path.join(ws, 'to-hooks'));
  fs.symlinkSync('.vscode/new.json', path.join(ws, 'dangling'));
  fs.symlinkSync('..', path.join(ws, 'a/up'));
  return ws;
}

describe('one resolver for the policy and the tools', () => {
  let ws: string;
  beforeEach(() => {
    ws = hostileWorkspace();
  });
  afterEach(() => rmrf(ws));

  it('the synchronous form (the policy) and the asynchronous one (the tools) give the same answer', async () => {
    for (const p of [
      'a/f.txt',
      'to-git/config',
      'to-hooks/pre-commit',
      'dangling',
      'a/up/.git/config',
      'a/up/a/up/to-git/hooks/x',
      'new/deep/file',
      '.',
      '../x',
      `${ws}/a/f.txt`,
    ]) {
      const sync = (() => {
        try {
          return resolvePathSync(ws, p);
        } catch (e) {
          return (e as Error).message;
        }
      })();
      const async = await confinePath(ws, p).catch((e: Error) => e.message);
      assert.deepEqual(async, sync, p);
    }
  });

  it('a backslash is refused on POSIX, saying why: it names a different file on Windows', async () => {
    for (const p of ['.git/x\\../../config', '.vscode\\tasks.json', 'a\\b']) {
      await assert.rejects(confinePath(ws, p), (e: unknown) => {
        assert.ok(e instanceof PathError);
        assert.match(
          e.message,
          /contains a backslash\. Here it would be part of a file name, while on Windows it separates folders/,
        );
        return true;
      });
      assert.throws(() => resolvePathSync(ws, p), PathError);
    }
  });

  it('every name on the way is reported: as written, and after each symlink inside the workspace', async () => {
    fs.mkdirSync(path.join(ws, 'elsewhere'));
    fs.renameSync(path.join(ws, '.vscode'), path.join(ws, 'old-vscode'));
    fs.symlinkSync('elsewhere', path.join(ws, '.vscode')); // what VS Code reads as .vscode/tasks.json lives in elsewhere/
    fs.symlinkSync('.vscode', path.join(ws, 'chain'));
    const r = await confinePath(ws, 'chain/tasks.json');
    assert.equal(r.rel, 'elsewhere/tasks.json');
    assert.deepEqual(r.names, ['chain/tasks.json', '.vscode/tasks.json', 'elsewhere/tasks.json']);
    assert.ok(protectedWhy(r.names, DEFAULT_FILE_RULES), 'the .vscode name on the way makes it protected');
  });

  it("the file system's own name is one more reading (an 8.3 short name on Windows names the long one)", () => {
    // Driven with scripted answers: this file system maps GIT~1 to .git, as NTFS does.
    const realpaths: Record<string, string> = { '/ws/GIT~1': '/ws/.git', '/ws': '/ws' };
    const steps = canonical('/ws/GIT~1/hooks/pre-commit');
    let r = steps.next();
    while (!r.done) r = steps.next(r.value.op === 'realpath' ? (realpaths[r.value.path] ?? null) : null);
    assert.equal(r.value, '/ws/.git/hooks/pre-commit');
  });

  it('reports what is there and how many names it has (hard links)', async () => {
    fs.linkSync(path.join(ws, '.git/config'), path.join(ws, 'b/plain.txt'));
    assert.deepEqual(pick(await confinePath(ws, 'b/plain.txt')), { kind: 'file', nlink: 2 });
    assert.deepEqual(pick(await confinePath(ws, 'a/f.txt')), { kind: 'file', nlink: 1 });
    assert.deepEqual(pick(await confinePath(ws, 'a/none')), { kind: 'missing', nlink: 0 });
    assert.equal((await confinePath(ws, 'b')).kind, 'dir');
  });

  it('a tool holds to what was judged: a path that now leads elsewhere, gained names or was refused is refused', async () => {
    const judged = (entries: Record<string, unknown>): JudgedPaths => new Map(Object.entries(entries)) as JudgedPaths;
    const docs = { judged: judged({ 'docs/pre-commit': { rel: 'docs/pre-commit', linked: false } }) };
    assert.equal((await confinePath(ws, 'docs/pre-commit', docs)).rel, 'docs/pre-commit', 'as judged: it passes');
    fs.symlinkSync('.git/hooks', path.join(ws, 'docs')); // made after the judgement
    await assert.rejects(
      confinePath(ws, 'docs/pre-commit', docs),
      /now leads to "\.git\/hooks\/pre-commit", not to "docs\/pre-commit" as when this call was judged/,
    );
    fs.linkSync(path.join(ws, '.git/config'), path.join(ws, 'b/plain.txt'));
    await assert.rejects(
      confinePath(ws, 'b/plain.txt', { judged: judged({ 'b/plain.txt': { rel: 'b/plain.txt', linked: false } }) }),
      /has gained other names \(hard links\) since this call was judged/,
    );
    await assert.rejects(
      confinePath(ws, 'a/f.txt', { judged: judged({ 'a/f.txt': { refused: 'it was outside' } }) }),
      /was refused when this call was judged \(it was outside\)/,
    );
    const same = await confinePath(ws, 'a/f.txt', { judged: judged({ 'a/f.txt': { rel: 'a/f.txt', linked: false } }) });
    assert.equal(same.rel, 'a/f.txt');
  });

  it('property: write_file changes exactly the file the policy judged, and the policy asked if it is protected', async () => {
    const segment = fc.constantFrom(
      'a',
      'b',
      'new',
      '.git',
      '.GIT',
      '.git.',
      '.git ',
      '.git::$DATA',
      '.vscode',
      '.VSCode',
      'tasks.json',
      'config',
      'hooks',
      'pre-commit',
      '..',
      '.',
      '',
      'to-git',
      'to-hooks',
      'dangling',
      'up',
      'x\\..',
      '.git\\config',
    );
    const anySpelling = fc
      .tuple(fc.constantFrom('', './', 'ROOT/'), fc.array(segment, { minLength: 1, maxLength: 6 }))
      .map(([lead, segs]) => lead + segs.join('/'));
    // Built to read differently by '/' and by '\': a name with a backslash, then climbs out of it.
    const twoReadings = fc
      .tuple(
        fc.constantFrom('.git', '.vscode', 'to-git', 'a', 'b'),
        fc.constantFrom('x\\..', 'x\\y', 'x\\..\\..'),
        fc.constantFrom('..', '../config', '../../config', '../hooks/pre-commit', '../../.git/config', '../tasks.json'),
      )
      .map((parts) => parts.join('/'));
    const spelling = fc.oneof(anySpelling, twoReadings);
    let asked = 0;
    let wrote = 0;
    await fc.assert(
      fc.asyncProperty(spelling, async (raw) => {
        const root = hostileWorkspace();
        try {
          const p = raw.replace(/^ROOT\//, `${root}/`);
          const tool = registry.get('write_file')!;
          const marker = `PWNED ${Math.random()}`;
          const args = { path: p, content: marker };
          const verdict = callPolicy(WRITES_AUTO, root)(tool, args);
          if (verdict.verdict === 'ask') asked++;
          const result = await tool
            .run(args, toolCtx(root, { judged: verdict.judged, approvedBy: 'policy' }))
            .then((r) => r.output)
            .catch((e: Error) => `error: ${e.message}`);
          const touched = filesWith(root, marker);
          if (verdict.verdict === 'deny') return assert.deepEqual(touched, [], `${p}: refused, nothing written`);
          if (touched.length === 0) return assert.match(result, /^error: /, `${p}: nothing written means a failure`);
          wrote++;
          assert.equal(touched.length, 1, `${p}: one file written`);
          const judged = verdict.judged?.get(p);
          assert.deepEqual(
            judged && 'rel' in judged ? judged.rel : judged,
            touched[0],
            `${p}: the judged file was written`,
          );
          if (protectedWhy([touched[0]!], DEFAULT_FILE_RULES))
            assert.equal(
              verdict.verdict,
              'ask',
              `${p} wrote the protected ${touched[0]} and the policy said ${verdict.verdict}`,
            );
        } finally {
          rmrf(root);
        }
      }),
      { numRuns: 200 },
    );
    assert.ok(asked > 20 && wrote > 20, `the spellings reach both outcomes (asked ${asked}, wrote ${wrote})`);
  });
});

const pick = (r: { kind: string; nlink: number }) => ({ kind: r.kind, nlink: r.nlink });

/** Workspace-relative paths of the regular files holding `marker` (symlinks not followed). */
function filesWith(root: string, marker: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) walk(abs);
      else if (e.isFile() && fs.readFileSync(abs, 'utf8') === marker)
        out.push(path.relative(root, abs).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out;
}
