// The walk behind paths.ts: from the workspace's real root, component by component, following each
// symlink one hop at a time, to the real location a path names. Written once as a generator that
// asks for each file-system answer it needs, and driven either synchronously (the approval policy
// judges while a batch is planned, synchronously) or asynchronously (a tool, right before it
// touches the file): the policy and the tool cannot read one path two ways, because there is one
// way, and the tool compares its answer with the policy's before it acts.
import { lstatSync, promises as fs, readlinkSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';

const MAX_LINK_HOPS = 32;

export type FsQuestion = { op: 'lstat' | 'realpath' | 'readlink'; path: string };
/** lstat: the entry or null (missing); realpath: the real path or null (cannot be resolved); readlink: the link's text. */
export type FsAnswer = Stats | string | null;
export type Steps<T> = Generator<FsQuestion, T, FsAnswer>;

/** A refusal the walk finds, worded to follow `Path "…"` (paths.ts adds that). */
export class WalkRefusal extends Error {
  override readonly name = 'WalkRefusal';
}

export interface Walked {
  /** Real location: every existing component real (no symlink), the part that does not exist yet as written. */
  abs: string;
  /**
   * The workspace-relative names ('/'-separated) the path goes by on its way: as written (after
   * `.`/`..`), and after each symlink hop that lands inside the workspace. A link named `.vscode`
   * that points elsewhere makes what it points to be read as `.vscode`, so each name is judged.
   */
  via: string[];
}

export function* lstat(p: string): Steps<Stats | null> {
  return (yield { op: 'lstat', path: p }) as Stats | null;
}
export function* realpath(p: string): Steps<string | null> {
  return (yield { op: 'realpath', path: p }) as string | null;
}
function* readlink(p: string): Steps<string> {
  return (yield { op: 'readlink', path: p }) as string;
}

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}

const parts = (from: string, to: string): string[] => path.relative(from, to).split(path.sep).filter(Boolean);
const slashed = (ps: readonly string[]): string => ps.join('/') || '.';

/** The real root of the workspace; a workspace folder that cannot be resolved is refused. */
export function* realRootOf(root: string): Steps<string> {
  const real = yield* realpath(root);
  if (real === null)
    throw new WalkRefusal(`cannot be resolved: the workspace folder ${root} does not exist or cannot be read`);
  return real;
}

/** Walks `lexical` (absolute, already normalised, known to lie under `root` or `realRoot`). */
export function* walkPath(root: string, realRoot: string, lexical: string): Steps<Walked> {
  const base = isInside(root, lexical) ? root : realRoot;
  const start = parts(base, lexical);
  const via = [slashed(start)];
  const abs = yield* walkFrom(realRoot, start, { root, realRoot, via, hops: 0 });
  return { abs, via: [...new Set(via)] };
}

interface WalkState {
  root: string;
  realRoot: string;
  via: string[];
  hops: number;
}

function* walkFrom(realRoot: string, ps: readonly string[], w: WalkState): Steps<string> {
  let cur = realRoot;
  for (let i = 0; i < ps.length; i++) {
    const next = path.join(cur, ps[i] as string);
    const st = yield* lstat(next);
    if (!st) return path.join(next, ...ps.slice(i + 1)); // the rest does not exist yet: `cur` (real, inside) decides
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    // One hop, then the walk starts again from the root with where the link leads and the rest.
    if (++w.hops > MAX_LINK_HOPS) throw new WalkRefusal('has too many levels of symlinks');
    const landed = yield* hop(next, w);
    const rest = [...landed, ...ps.slice(i + 1)];
    w.via.push(slashed(rest));
    return yield* walkFrom(realRoot, rest, w);
  }
  return cur;
}

/**
 * The name the file system itself gives the existing part of `abs` (a real path, no symlinks):
 * on Windows the long form of an 8.3 short name (`GIT~1` is `.git`), on macOS the stored case.
 * Another reading of the same file, judged with the others.
 */
export function* canonical(abs: string): Steps<string> {
  const missing: string[] = [];
  for (let cur = abs; ; cur = path.dirname(cur)) {
    const real = yield* realpath(cur);
    if (real !== null) return path.join(real, ...missing);
    if (path.dirname(cur) === cur) return abs;
    missing.unshift(path.basename(cur));
  }
}

/** Where the link at `link` (its folder real) leads, relative to the real root; refused when it leaves the workspace. */
function* hop(link: string, w: WalkState): Steps<string[]> {
  const target = path.resolve(path.dirname(link), yield* readlink(link));
  if (isInside(w.realRoot, target)) return parts(w.realRoot, target);
  if (isInside(w.root, target)) return parts(w.root, target); // the root as configured, not its real path
  // Out of the workspace by name; it may still come back in (a link through a folder outside).
  const real = yield* realpath(target);
  if (real !== null && isInside(w.realRoot, real)) return parts(w.realRoot, real);
  const linkRel = path.relative(w.realRoot, link);
  throw new WalkRefusal(`leaves the workspace through the symlink "${linkRel}" → ${real ?? target}`);
}

const gone = (e: unknown): boolean => {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

function answerSync(q: FsQuestion): FsAnswer {
  if (q.op === 'readlink') return readlinkSync(q.path);
  if (q.op === 'realpath') {
    try {
      return realpathSync.native(q.path);
    } catch {
      return null;
    }
  }
  try {
    return lstatSync(q.path);
  } catch (e) {
    if (gone(e)) return null;
    throw e;
  }
}

async function answerAsync(q: FsQuestion): Promise<FsAnswer> {
  if (q.op === 'readlink') return fs.readlink(q.path);
  if (q.op === 'realpath') return fs.realpath(q.path).catch(() => null);
  return fs.lstat(q.path).catch((e: unknown) => {
    if (gone(e)) return null;
    throw e;
  });
}

/** Runs `steps` with synchronous file-system calls (a few lstat per path). */
export function runSync<T>(steps: Steps<T>): T {
  let r = steps.next();
  while (!r.done) r = steps.next(answerSync(r.value));
  return r.value;
}

/** Runs the same `steps` with asynchronous calls. */
export async function runAsync<T>(steps: Steps<T>): Promise<T> {
  let r = steps.next();
  while (!r.done) r = steps.next(await answerAsync(r.value));
  return r.value;
}
