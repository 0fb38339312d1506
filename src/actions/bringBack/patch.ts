// The run's net file changes as a patch in git's binary-safe format, for `git apply`: the hand-over
// that touches nothing here — not the checkout, its index nor its branches. Both sides of each
// change are written into a temp folder of our own and compared by git itself (`git diff
// --no-index --binary`), so the patch is exactly what git reads back, binary files and permission
// bits included. A path that is not plain and relative, or a side the journal did not keep, is left
// out and said; git runs hardened (gitHardening.cjs) with no external diff or textconv.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storedPathProblem } from '../../common/storedPath';
import type { FileVersion } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { findGit } from '../../runner/fileJournal/git';
import { isRestorable } from '../../runner/fileJournal/versions';
import { gitEnv } from '../../runner/tools/shell/gitHardening.cjs';
import { versionBytes } from '../restore/files';
import type { NetChange } from './plan';

export interface RunPatch {
  /** The patch (empty when nothing could be included). */
  patch: Buffer;
  included: string[];
  left: { path: string; why: string }[];
}

const MAX_PATCH_BYTES = 512 * 1024 * 1024;

export async function runPatch(
  store: CheckpointStore,
  runId: string,
  changes: readonly NetChange[],
  workspaceRoot: string,
): Promise<RunPatch> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'aw-patch-'));
  try {
    const included: string[] = [];
    const left: RunPatch['left'] = [];
    await Promise.all(['a', 'b'].map((side) => fs.mkdir(path.join(dir, side))));
    for (const c of changes) {
      const why =
        storedPathProblem(c.path) ?? unkept(c.before, 'before the run') ?? unkept(c.after, 'as the run left it');
      if (why) {
        left.push({ path: c.path, why });
        continue;
      }
      await put(path.join(dir, 'a', c.path), await versionBytes(store, runId, c.before), c.before);
      await put(path.join(dir, 'b', c.path), await versionBytes(store, runId, c.after), c.after);
      included.push(c.path);
    }
    const patch = included.length > 0 ? await gitDiff(dir, workspaceRoot) : Buffer.alloc(0);
    return { patch, included, left };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function unkept(v: FileVersion, when: string): string | null {
  return isRestorable(v) ? null : `its content ${when} was not kept`;
}

async function put(abs: string, bytes: Buffer | null, v: FileVersion): Promise<void> {
  if (bytes === null) return;
  await fs.mkdir(path.dirname(abs), { recursive: true });
  await fs.writeFile(abs, bytes, { flag: 'wx' });
  if (v.kind === 'file' && v.mode !== undefined) await fs.chmod(abs, v.mode & 0o777);
}

/** `git diff --no-index` of a/ and b/ with no prefix, so the patch's paths are `a/<path>` and `b/<path>`. */
function gitDiff(dir: string, workspaceRoot: string): Promise<Buffer> {
  const git = findGit({ env: process.env, workspaceRoot });
  if (!git) return Promise.reject(new Error('git was not found on PATH (outside the workspace)'));
  const args = ['diff', '--no-index', '--binary', '--full-index', '--no-ext-diff', '--no-textconv', '--no-color'];
  return new Promise((resolve, reject) =>
    execFile(
      git,
      ['-c', 'core.quotepath=off', ...args, '--no-prefix', 'a', 'b'],
      { cwd: dir, encoding: 'buffer', maxBuffer: MAX_PATCH_BYTES, env: gitEnv(process.env), windowsHide: true },
      // Exit code 1: the sides differ (the patch); anything else is git's failure.
      (err, stdout, stderr) =>
        err && err.code !== 1
          ? reject(new Error(`git diff failed: ${stderr.toString().trim() || err.message}`))
          : resolve(stdout),
    ),
  );
}
