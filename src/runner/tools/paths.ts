// Path confinement: the ONE resolver every path goes through before the file system is touched —
// the tools' (model-supplied), the file journal's, the restore's and the approval diff's (stored)
// (docs/design.md, reliability goals: path safety). A path is refused when it escapes the workspace
// lexically (`..`, absolute), through a symlink (checked on real paths, component by component, so
// a path that does not exist yet is judged by its nearest existing ancestor), leads into the
// extension's own storage folder, or is malformed. Stored paths must also be plain relative paths.
import { promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import { storedPathProblem } from '../../common/storedPath';
import { ToolFailure } from './types';

export const MAX_PATH_BYTES = 4096;
export const MAX_COMPONENT_BYTES = 255;
const MAX_LINK_HOPS = 32;

export class PathError extends ToolFailure {}

export interface ConfinedPath {
  /** Absolute path with every existing symlink resolved; safe to pass to fs. */
  abs: string;
  /** Relative to the workspace's real root, '/'-separated, '.' for the root itself. */
  rel: string;
}

/** For messages: the path as given, quoted, shortened if huge. */
export function showPath(p: string): string {
  return JSON.stringify(p.length > 120 ? `${p.slice(0, 100)}…(${p.length} chars)` : p);
}

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

function checkShape(p: unknown): string {
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
  return p === '' ? '.' : p;
}

export interface ConfineOptions {
  /** The extension's own storage folder (checkpoints, blobs): refused, even when it lies inside the workspace. */
  storageDir?: string | undefined;
}

/** Resolves `userPath` against the workspace root; throws PathError (with a clear message) when it is not safe. */
export async function confinePath(
  workspaceRoot: string,
  userPath: string,
  opts: ConfineOptions = {},
): Promise<ConfinedPath> {
  const p = checkShape(userPath);
  const root = path.resolve(workspaceRoot);
  const realRoot = await fs.realpath(root);
  const lexical = path.resolve(root, p);
  // Accept an absolute path spelled through either the root as configured or its real location.
  const base = isInside(root, lexical) ? root : isInside(realRoot, lexical) ? realRoot : null;
  if (base === null) {
    throw new PathError(
      `Path ${showPath(p)} is outside the workspace: it resolves to ${lexical}, which is not under ${root}.`,
    );
  }
  const parts = path.relative(base, lexical).split(path.sep).filter(Boolean);
  const abs = await walkReal(realRoot, parts, p, 0);
  if (opts.storageDir && isInside(await realOrResolved(opts.storageDir), abs)) {
    throw new PathError(`Path ${showPath(p)} is inside Agent Waypoints' own storage folder, which no tool may touch.`);
  }
  return { abs, rel: path.relative(realRoot, abs).split(path.sep).join('/') || '.' };
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

async function realOrResolved(p: string): Promise<string> {
  return fs.realpath(p).catch(() => path.resolve(p));
}

/** Follows `parts` from the real root, resolving each existing symlink and checking where it lands. */
async function walkReal(realRoot: string, parts: string[], shown: string, hops: number): Promise<string> {
  let cur = realRoot;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(cur, parts[i] as string);
    const st = await lstatOrNull(next);
    if (!st) return path.join(next, ...parts.slice(i + 1)); // the rest does not exist yet: `cur` (real, inside) decides
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    cur = await followLink(realRoot, next, shown, hops);
  }
  return cur;
}

async function followLink(realRoot: string, link: string, shown: string, hops: number): Promise<string> {
  if (hops >= MAX_LINK_HOPS) throw new PathError(`Path ${showPath(shown)} has too many levels of symlinks.`);
  const linkRel = path.relative(realRoot, link);
  let target: string;
  try {
    target = await fs.realpath(link);
  } catch {
    // Dangling link: writing through it would create its target, so judge the target path itself.
    target = path.resolve(path.dirname(link), await fs.readlink(link));
    if (!isInside(realRoot, target)) throw escaped(shown, linkRel, target);
    return walkReal(realRoot, path.relative(realRoot, target).split(path.sep).filter(Boolean), shown, hops + 1);
  }
  if (!isInside(realRoot, target)) throw escaped(shown, linkRel, target);
  return target;
}

function escaped(shown: string, linkRel: string, target: string): PathError {
  return new PathError(`Path ${showPath(shown)} leaves the workspace through the symlink "${linkRel}" → ${target}.`);
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fs.lstat(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw e;
  }
}
