// What a command scan knows about the workspace: per folder, its own stat, its ignore rules and the
// stats of the files in it. Folders are the unit of sharing: a snapshot is a copy of the folder map
// (a few thousand entries), and a folder's file map is replaced — never changed — when one of its
// files changes, so two snapshots are compared folder by folder and untouched folders cost nothing.
import type { Stats } from 'node:fs';
import type { Frame } from '../tools/finder/ignoreChain';

/** What a change is detected by: any difference in size, times or inode means the file may have changed. */
export interface FileSig {
  size: number;
  mtimeMs: number;
  /** The inode's change time: set by the kernel on every write, chmod or utimes, so a command that restores mtime still shows. */
  ctimeMs: number;
  ino: number;
  /** Permission bits (not compared: kept so a file a command deletes can come back with them). */
  mode: number;
  /** Taken within the file system's timestamp granularity of its last change: a same-size change in that tick keeps the stat. */
  racy?: true;
  /** sha256 of the content when racy: what proves such a change (absent when there was no budget left for it). */
  fp?: string;
}

export interface DirSig {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** Date.now() just before the stat (for the racy test). */
  statAt: number;
}

export interface DirNode {
  /** Name → stat of the files listed in this folder (never mutated once in a node: replaced). */
  readonly files: ReadonlyMap<string, FileSig>;
  /** Names of the folders below it that are walked (not ignored). */
  readonly dirs: readonly string[];
  readonly sig: DirSig;
  /** Its ignore files and whether it holds a repository, as the Node engine reads them. */
  readonly frame: Frame;
  /** The control files (ignore files, .git) present in it, and the key of their state (controlKey). */
  readonly controlNames: readonly string[];
  readonly control: string;
  /** The host's watcher does not report changes here (files.watcherExclude): all files, or these names. */
  readonly unwatched: true | ReadonlySet<string> | null;
}

/** Below this many ms after a file's last change, a second change may get the same timestamp. */
const FINE_MARGIN_MS = 100;
/** File systems with whole-second timestamps (ext3, HFS+, FAT's 2 s). */
const COARSE_MARGIN_MS = 2_100;

/** The timestamp a later change would have to differ from (ctime, unless the file system has none). */
export const changeTime = (s: { mtimeMs: number; ctimeMs: number }): number => (s.ctimeMs > 0 ? s.ctimeMs : s.mtimeMs);

/** How close to `statAt` a change must be for a later change to be able to share its timestamp. */
export function racyMargin(s: { mtimeMs: number; ctimeMs: number }): number {
  return changeTime(s) % 1000 === 0 ? COARSE_MARGIN_MS : FINE_MARGIN_MS;
}

/** True when a change after `statAt` could leave this stat as it is (same tick), or the clock disagrees. */
export function isRacy(s: { mtimeMs: number; ctimeMs: number }, statAt: number): boolean {
  return changeTime(s) >= statAt - racyMargin(s);
}

/** The fields of a file's stat the scan keeps (a `Stats`, or one taken on another thread). */
export type StatLike = Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs' | 'ino' | 'mode'>;

export function fileSig(st: StatLike, statAt: number): FileSig {
  const sig: FileSig = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode & 0o7777 };
  if (isRacy(sig, statAt)) sig.racy = true;
  return sig;
}

export const dirSig = (st: Stats, statAt: number): DirSig => ({
  mtimeMs: st.mtimeMs,
  ctimeMs: st.ctimeMs,
  ino: st.ino,
  statAt,
});

export const sameStat = (a: FileSig, b: FileSig): boolean =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

/** Same stat, and same content where both were fingerprinted. */
export const sameSig = (a: FileSig, b: FileSig): boolean =>
  a === b || (sameStat(a, b) && (a.fp === undefined || b.fp === undefined || a.fp === b.fp));

export const sameDir = (a: DirSig, b: DirSig): boolean =>
  a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

export const childRel = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

/** The files of one snapshot, by '/'-separated path relative to the root. */
export class ScanFiles {
  readonly size: number;

  constructor(readonly dirs: ReadonlyMap<string, DirNode>) {
    let n = 0;
    for (const d of dirs.values()) n += d.files.size;
    this.size = n;
  }

  get(rel: string): FileSig | undefined {
    const i = rel.lastIndexOf('/');
    return this.dirs.get(i < 0 ? '' : rel.slice(0, i))?.files.get(rel.slice(i + 1));
  }

  has(rel: string): boolean {
    return this.get(rel) !== undefined;
  }

  *keys(): IterableIterator<string> {
    for (const [dir, node] of this.dirs) for (const name of node.files.keys()) yield childRel(dir, name);
  }
}

/** Paths whose signature differs between two snapshots (created, deleted or changed), sorted. */
export function diffFiles(before: ScanFiles, after: ScanFiles): string[] {
  const out: string[] = [];
  for (const [dir, a] of after.dirs) {
    const b = before.dirs.get(dir)?.files;
    if (b === a.files) continue; // the same map: nothing in this folder changed between them
    for (const [name, sa] of a.files) {
      const sb = b?.get(name);
      if (!sb || !sameSig(sb, sa)) out.push(childRel(dir, name));
    }
    if (b) for (const name of b.keys()) if (!a.files.has(name)) out.push(childRel(dir, name));
  }
  for (const [dir, b] of before.dirs) {
    if (!after.dirs.has(dir)) for (const name of b.files.keys()) out.push(childRel(dir, name));
  }
  return out.sort();
}
