// Path confinement: the ONE resolver every path goes through before the file system is touched —
// the tools' (model-supplied), the approval policy's (the same paths, judged before the call runs),
// the file journal's, the restore's and the approval diff's (stored) (docs/design.md, reliability
// goals: path safety). A path is refused when it escapes the workspace lexically (`..`, absolute),
// through a symlink (followed hop by hop on real paths, so a path that does not exist yet is judged
// by its nearest existing ancestor), leads into the extension's own storage folder, is malformed, or
// names a different file on another system: a backslash separates folders on Windows and is part
// of a name elsewhere. (Other such spellings — case, trailing dots and spaces, `:stream` — are
// judged in every reading by protectedFiles.ts.) The walk itself is pathWalk.ts.
import type { Stats } from 'node:fs';
import path from 'node:path';
import { storedPathProblem } from '../../common/storedPath';
import {
  canonical,
  isInside,
  lstat,
  realpath,
  realRootOf,
  runAsync,
  runSync,
  type Steps,
  walkPath,
  WalkRefusal,
} from './pathWalk';
import { type Judged, type JudgedPaths, ToolFailure } from './types';

export { isInside } from './pathWalk';

export const MAX_PATH_BYTES = 4096;
export const MAX_COMPONENT_BYTES = 255;

export class PathError extends ToolFailure {}

export interface ConfinedPath {
  /** Absolute path with every existing symlink resolved; safe to pass to fs. */
  abs: string;
  /** Relative to the workspace's real root, '/'-separated, '.' for the root itself. */
  rel: string;
  /**
   * Every workspace-relative name the path goes by: on its way (pathWalk.ts Walked.via), `rel`, and
   * the file system's own name for it (pathWalk.ts canonical) when that differs.
   */
  names: string[];
  /** What is there now; `nlink` is its number of names (hard links), 0 when missing. */
  kind: 'file' | 'dir' | 'other' | 'missing';
  nlink: number;
}

export type { Judged, JudgedPaths } from './types';

/** For messages: the path as given, quoted, shortened if huge. */
export function showPath(p: string): string {
  return JSON.stringify(p.length > 120 ? `${p.slice(0, 100)}…(${p.length} chars)` : p);
}

function checkShape(p: unknown, platform: NodeJS.Platform): string {
  if (typeof p !== 'string') throw new PathError(`Path must be a string, got ${typeof p}.`);
  if (p.includes('\0')) throw new PathError(`Path ${showPath(p)} contains a NUL byte.`);
  const bytes = Buffer.byteLength(p, 'utf8');
  if (bytes > MAX_PATH_BYTES)
    throw new PathError(`Path ${showPath(p)} is too long (${bytes} bytes; the limit is ${MAX_PATH_BYTES}).`);
  const long = p.split(/[\\/]/).find((c) => Buffer.byteLength(c, 'utf8') > MAX_COMPONENT_BYTES);
  if (long !== undefined) {
    throw new PathError(
      `Path ${showPath(p)} has a component of ${Buffer.byteLength(long, 'utf8')} bytes (the limit is ${MAX_COMPONENT_BYTES}).`,
    );
  }
  if (platform !== 'win32' && p.includes('\\')) {
    throw new PathError(
      `Path ${showPath(p)} contains a backslash. Here it would be part of a file name, while on Windows it separates ` +
        'folders, so the path names different files on different systems and is refused. Use "/" between folders.',
    );
  }
  return p === '' ? '.' : p;
}

export interface ConfineOptions {
  /** The extension's own storage folder (checkpoints, blobs): refused, even when it lies inside the workspace. */
  storageDir?: string | undefined;
  /**
   * What the policy judged the call's paths to be (the runner passes it with an approved call): a
   * path that now leads elsewhere, or to a file that has gained other names, is refused.
   */
  judged?: JudgedPaths | undefined;
}

function* resolveSteps(workspaceRoot: string, userPath: string, opts: ConfineOptions): Steps<ConfinedPath> {
  const p = checkShape(userPath, process.platform);
  const root = path.resolve(workspaceRoot);
  const realRoot = yield* refusing(p, realRootOf(root));
  const lexical = path.resolve(root, p);
  // Accept an absolute path spelled through either the root as configured or its real location.
  if (!isInside(root, lexical) && !isInside(realRoot, lexical)) {
    throw new PathError(
      `Path ${showPath(p)} is outside the workspace: it resolves to ${lexical}, which is not under ${root}.`,
    );
  }
  const { abs, via } = yield* refusing(p, walkPath(root, realRoot, lexical));
  if (opts.storageDir) {
    const storage = yield* realpath(opts.storageDir);
    if (isInside(storage ?? path.resolve(opts.storageDir), abs))
      throw new PathError(
        `Path ${showPath(p)} is inside Agent Waypoints' own storage folder, which no tool may touch.`,
      );
  }
  const st: Stats | null = yield* lstat(abs);
  const relOf = (a: string): string => path.relative(realRoot, a).split(path.sep).join('/') || '.';
  const rel = relOf(abs);
  const fsName = yield* canonical(abs);
  const names = [...via, rel, ...(isInside(realRoot, fsName) ? [relOf(fsName)] : [])];
  const kind = !st ? 'missing' : st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  return { abs, rel, names: [...new Set(names)], kind, nlink: st ? st.nlink : 0 };
}

/** The walk's refusals as PathErrors naming the path. */
function* refusing<T>(p: string, steps: Steps<T>): Steps<T> {
  try {
    return yield* steps;
  } catch (e) {
    if (e instanceof WalkRefusal) throw new PathError(`Path ${showPath(p)} ${e.message}.`);
    throw e;
  }
}

/** Resolves `userPath` against the workspace root; throws PathError (with a clear message) when it is not safe. */
export async function confinePath(
  workspaceRoot: string,
  userPath: string,
  opts: ConfineOptions = {},
): Promise<ConfinedPath> {
  const resolved = await runAsync(resolveSteps(workspaceRoot, userPath, opts));
  const judged = opts.judged?.get(userPath);
  if (judged) holdToJudgement(userPath, resolved, judged);
  return resolved;
}

/** The same resolution, synchronously: for the approval policy, which judges while a batch is planned. */
export function resolvePathSync(workspaceRoot: string, userPath: string, opts: ConfineOptions = {}): ConfinedPath {
  return runSync(resolveSteps(workspaceRoot, userPath, opts));
}

/** What the policy records of a path: its resolution, or the resolver's refusal. */
export function judgement(resolved: ConfinedPath | { refused: string }): Judged {
  if ('refused' in resolved) return resolved;
  return { rel: resolved.rel, linked: isLinked(resolved) };
}

/** A regular file with other names (hard links): one of them may lie outside the workspace. */
export function isLinked(r: Pick<ConfinedPath, 'kind' | 'nlink'>): boolean {
  return r.kind === 'file' && r.nlink > 1;
}

/**
 * The call runs on what was judged or not at all: the policy's verdict (and the user's decision,
 * which the batch was planned with) was about that file. A symlink made in between — by an earlier
 * call of the same batch, say — must not carry the call to another file.
 */
function holdToJudgement(userPath: string, now: ConfinedPath, judged: Judged): void {
  const again = 'Nothing was touched; call the tool again to have the path judged as it is now.';
  if ('refused' in judged)
    throw new PathError(
      `Path ${showPath(userPath)} was refused when this call was judged (${judged.refused}). ${again}`,
    );
  if (now.rel !== judged.rel) {
    throw new PathError(
      `Path ${showPath(userPath)} now leads to "${now.rel}", not to "${judged.rel}" as when this call was judged ` +
        `(a symlink changed in between, perhaps by an earlier call of this batch). ${again}`,
    );
  }
  if (isLinked(now) && !judged.linked) {
    throw new PathError(
      `"${now.rel}" has gained other names (hard links) since this call was judged; one of them may lie outside the workspace. ${again}`,
    );
  }
}

/**
 * A path from stored data (the file journal, an imported run): it must be a plain relative path
 * (storedPathProblem) and then confine like any other. `rel` of the result differs from `stored`
 * when a symlink inside the workspace now stands on the way: the caller decides what that means.
 */
export async function confineStoredPath(
  workspaceRoot: string,
  stored: string,
  opts: ConfineOptions = {},
): Promise<ConfinedPath> {
  const problem = storedPathProblem(stored);
  if (problem) throw new PathError(`Path ${showPath(stored)} is outside the workspace: ${problem}.`);
  return confinePath(workspaceRoot, stored, opts);
}
