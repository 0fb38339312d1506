// Bringing the index up to date without walking the tree again. What proves what:
// - A folder's stat (mtime, ctime, inode) changes whenever an entry is created, deleted or renamed
//   in it — so every folder is statted (a few hundred stats for 50,000 files), and only the ones
//   that moved are read again (all their files statted: an entry may have been replaced).
// - A folder statted within the timestamp granularity of its last change ("racy") is read again
//   regardless: a second change in that tick would not move its stat.
// - An ignore file, .git or .git/info/exclude changed in place does not move its folder's stat:
//   they are statted themselves, and a change re-walks the folder's whole subtree with new rules.
// - A file changed in place moves only its own stat: which files to stat is the caller's choice —
//   all of them after a command (the proof), or the ones the watcher named before it (a hint).
import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { IgnoreChain } from '../tools/finder/ignoreChain';
import { childRel, type DirNode, dirSig, type FileSig, isRacy, sameDir } from './scanTree';
import {
  controlKey,
  controlNamesOf,
  dropTree,
  judge,
  readEntries,
  unwatchedOf,
  type WalkContext,
  walkTree,
} from './scanWalk';
import type { StatPool } from './statPool';
import type { Hints } from './watcher';

export interface RefreshPlan {
  /** Stat every file (after a command; or before it when the hints cannot narrow it). */
  statAll: boolean;
  hints: Hints;
  /** Stats every file ahead on two threads when all are statted (statPool.ts). */
  pool?: StatPool;
}

/** Every file's stat taken ahead of the walk: per folder node, where its files' slots start. */
interface Ahead {
  stats: Float64Array;
  base: Map<DirNode, number>;
  statAt: number;
}

interface Inherited {
  hinted: boolean;
  unwatched: boolean;
}

/** Refreshes `dirs` (the index's folder map, changed in place) from the root down. */
export async function refreshTree(
  ctx: WalkContext,
  dirs: Map<string, DirNode>,
  ancestors: IgnoreChain,
  plan: RefreshPlan,
): Promise<void> {
  for (const node of dirs.values()) ctx.files += node.files.size;
  const ahead = plan.statAll && plan.pool && ctx.files >= plan.pool.min ? await statAhead(ctx, dirs, plan.pool) : null;
  const up = { hinted: plan.hints.paths.has(''), unwatched: false };
  await refreshDir(ctx, dirs, '', ancestors, plan, up, ahead);
}

/**
 * Every file the index holds, statted before the folders are: a folder found unmoved afterwards
 * holds the same entries (its stat proves none was created, deleted or renamed since the last
 * scan), so those stats are its files' — taken earlier than the folder's, which only widens the
 * racy window (`statAt` is the time before the first of them). A moved folder's files are statted
 * again as it is read.
 */
async function statAhead(ctx: WalkContext, dirs: Map<string, DirNode>, pool: StatPool): Promise<Ahead | null> {
  const paths: string[] = [];
  const base = new Map<DirNode, number>();
  for (const [rel, node] of dirs) {
    base.set(node, paths.length);
    for (const p of pathsOf(ctx, rel, node)) paths.push(p);
  }
  const statAt = Date.now();
  const { stats, helped } = await pool.statMany(paths, { tick: (n) => ctx.tick(n) });
  ctx.ahead = paths.length;
  ctx.helped = helped;
  return ctx.stopped ? null : { stats, base, statAt };
}

async function refreshDir(
  ctx: WalkContext,
  dirs: Map<string, DirNode>,
  rel: string,
  parents: IgnoreChain,
  plan: RefreshPlan,
  up: Inherited,
  ahead: Ahead | null,
): Promise<void> {
  if (!(await ctx.tick())) return;
  const old = dirs.get(rel);
  // Listed by its parent but not walked (unreadable, or the walk stopped): walk it now.
  if (!old) return walkTree(ctx, rel, parents, up.unwatched, dirs);
  const abs = ctx.abs(rel);
  const statAt = Date.now();
  const st = lstatOrUndefined(abs);
  const moved = !st || !sameDir(old.sig, dirSig(st, statAt)) || isRacy(old.sig, old.sig.statAt);
  const entries = moved && st?.isDirectory() ? readEntries(abs) : undefined;
  if (!st?.isDirectory() || (moved && !entries)) {
    // Gone, replaced, or unreadable now: its parent's stat moved too, or will be read again.
    ctx.files -= dropTree(dirs, rel);
    return;
  }
  const controlNames = entries ? controlNamesOf(entries) : old.controlNames;
  if (controlKey(abs, controlNames) !== old.control) {
    ctx.files -= dropTree(dirs, rel);
    ctx.rulesChanged.push(rel);
    return walkTree(ctx, rel, parents, up.unwatched, dirs);
  }
  const chain = parents.child(old.frame);
  const hinted = up.hinted || plan.hints.paths.has(rel);
  let node: DirNode = { ...old, sig: dirSig(st, statAt) };
  const before = new Set(old.dirs);
  if (entries) {
    ctx.reread++;
    const listing = judge(ctx, rel, entries, chain);
    const files = new Map<string, FileSig>();
    ctx.files -= old.files.size;
    const fileStatAt = Date.now();
    for (const name of listing.files) {
      if (!ctx.admit()) break;
      const prev = old.files.get(name);
      const sig = ctx.sigFor(abs, name, prev, fileStatAt);
      if (!sig) ctx.files--;
      else if (sig === prev) files.set(name, sig);
      else ctx.put(files, abs, name, sig);
    }
    const kept = new Set(listing.dirs);
    for (const d of old.dirs) if (!kept.has(d)) ctx.files -= dropTree(dirs, childRel(rel, d));
    node = {
      ...node,
      files: sameEntries(old.files, files) ? old.files : files,
      dirs: listing.dirs,
      controlNames,
      unwatched: unwatchedOf(ctx, rel, listing.files, up.unwatched),
    };
  } else {
    const slots = ahead?.base.get(old);
    node = {
      ...node,
      files:
        slots === undefined
          ? statPicked(ctx, old, { rel, abs }, plan, hinted)
          : statAheadOf(ctx, old, abs, ahead!, slots),
    };
  }
  dirs.set(rel, node);
  for (const d of node.dirs) {
    const r = childRel(rel, d);
    if (before.has(d))
      await refreshDir(ctx, dirs, r, chain, plan, { hinted, unwatched: node.unwatched === true }, ahead);
    else await walkTree(ctx, r, chain, node.unwatched === true, dirs);
    if (ctx.stopped) return;
  }
}

/** The files of an unmoved folder: the picked ones statted; a new map only if one changed. */
function statPicked(
  ctx: WalkContext,
  old: DirNode,
  { rel, abs }: { rel: string; abs: string },
  plan: RefreshPlan,
  hinted: boolean,
): ReadonlyMap<string, FileSig> {
  const all = plan.statAll || hinted || old.unwatched === true;
  const named = plan.hints.byDir.get(rel);
  const unwatched = old.unwatched instanceof Set ? old.unwatched : undefined;
  let files: Map<string, FileSig> | undefined;
  const statAt = Date.now();
  for (const [name, prev] of old.files) {
    if (!(all || prev.racy || named?.has(name) || unwatched?.has(name))) continue;
    const sig = ctx.sigFor(abs, name, prev, statAt);
    if (sig === prev) continue;
    files ??= new Map(old.files);
    if (sig) ctx.put(files, abs, name, sig);
    else {
      files.delete(name); // gone since the folder's stat: the folder shows it next time
      ctx.files--;
    }
  }
  return files ?? old.files;
}

/** A folder's files' absolute paths, made once per file map (a map is replaced, never changed). */
const pathCache = new WeakMap<ReadonlyMap<string, FileSig>, { abs: string; paths: string[] }>();

function pathsOf(ctx: WalkContext, rel: string, node: DirNode): readonly string[] {
  const abs = ctx.abs(rel);
  const hit = pathCache.get(node.files);
  if (hit?.abs === abs) return hit.paths;
  const prefix = abs + path.sep;
  const paths = [...node.files.keys()].map((name) => prefix + name);
  pathCache.set(node.files, { abs, paths });
  return paths;
}

/** statPicked when every file is statted and its stats were taken ahead (slots from `from` on). */
function statAheadOf(
  ctx: WalkContext,
  old: DirNode,
  abs: string,
  ahead: Ahead,
  from: number,
): ReadonlyMap<string, FileSig> {
  let files: Map<string, FileSig> | undefined;
  let i = from;
  for (const [name, prev] of old.files) {
    const sig = ctx.sigFromSlot(abs, name, prev, ahead.statAt, ahead.stats, i++);
    if (sig === prev) continue;
    files ??= new Map(old.files);
    if (sig) ctx.put(files, abs, name, sig);
    else {
      files.delete(name);
      ctx.files--;
    }
  }
  return files ?? old.files;
}

function sameEntries(a: ReadonlyMap<string, FileSig>, b: ReadonlyMap<string, FileSig>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of b) if (a.get(k) !== v) return false;
  return true;
}

function lstatOrUndefined(abs: string) {
  try {
    return lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
