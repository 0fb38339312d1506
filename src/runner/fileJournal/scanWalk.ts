// Reading folders for the command scan with the rules list_files applies — the Node engine's own
// ignore chain (tools/finder/ignoreChain.ts: .gitignore inside repositories, .ignore/.rgignore,
// .git/info/exclude) plus the exclude globs — so the scan sees exactly the files list_files lists
// (the engine tests prove ripgrep lists the same). Unlike a file listing, the scan also keeps every
// folder it walked, empty ones included: a file created in any of them changes that folder's stat.
import { lstatSync, readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { type IgnoreChain, loadFrame } from '../tools/finder/ignoreChain';
import type { IgnoreRules } from '../tools/finder/gitignore';
import { Fingerprints } from './scanRacy';
import { childRel, type DirNode, dirSig, type FileSig, fileSig, type StatLike } from './scanTree';
import { STAT_WIDTH, StatKind, statOfSlot } from './statPool';

/** Files whose change changes which files are listed below their folder. */
const CONTROL = ['.git', '.gitignore', '.ignore', '.rgignore'] as const;
const NO_THROW = { throwIfNoEntry: false } as const;
/** Stats between two turns of the event loop (and checks of the clock and the signal). */
const BATCH = 2_000;

export type StopReason = 'limit' | 'deadline' | 'cancel';

/** One walk or refresh: the rules, its bounds, and what it did. */
export class WalkContext {
  stopped: StopReason | null = null;
  files = 0;
  statted = 0;
  reread = 0;
  walked = 0;
  /** Files statted ahead of the folders (statPool.ts), and how many of those by the worker. */
  ahead = 0;
  helped = 0;
  /** Folders walked again because their rules changed (a file newly listed there may have existed, hidden). */
  readonly rulesChanged: string[] = [];
  /** Content fingerprints of racy files (scanRacy.ts). */
  readonly proofs = new Fingerprints();
  private ops = 0;

  constructor(
    readonly root: string,
    readonly overrides: IgnoreRules,
    readonly unwatched: IgnoreRules | null,
    private readonly bounds: { maxFiles: number; deadline: number; signal?: AbortSignal },
  ) {}

  abs(rel: string): string {
    return rel === '' ? this.root : path.join(this.root, rel);
  }

  /** Counts work; every BATCH operations gives the event loop a turn and checks the bounds. */
  async tick(n = 1): Promise<boolean> {
    this.ops += n;
    if (this.ops >= BATCH) {
      this.ops = 0;
      await new Promise<void>((r) => setImmediate(r));
    }
    if (this.stopped) return false;
    if (this.bounds.signal?.aborted) this.stopped = 'cancel';
    else if (Date.now() >= this.bounds.deadline) this.stopped = 'deadline';
    return this.stopped === null;
  }

  /**
   * The signature to keep for a file (`prev`: the index's): `prev` itself when the stat proves it
   * unchanged; undefined when it is gone or no longer a regular file.
   */
  sigFor(dir: string, name: string, prev: FileSig | undefined, statAt: number): FileSig | undefined {
    this.statted++;
    // Plain concatenation: `dir` is absolute and normal already, and path.join per file is measurable.
    const abs = dir + path.sep + name;
    let st;
    try {
      st = lstatSync(abs, NO_THROW);
    } catch {
      return undefined; // ENOTDIR, EACCES …: not a file the scan can see
    }
    if (!st?.isFile()) return undefined;
    return this.sigOf(abs, st, prev, statAt);
  }

  /**
   * sigFor from a stat taken ahead (statPool.ts: slot `i` of `stats`, taken at `statAt` or later);
   * a slot not filled is statted now.
   */
  sigFromSlot(
    dir: string,
    name: string,
    prev: FileSig | undefined,
    statAt: number,
    stats: Float64Array,
    i: number,
  ): FileSig | undefined {
    const kind = stats[i * STAT_WIDTH];
    if (kind === StatKind.NotStatted) return this.sigFor(dir, name, prev, statAt);
    this.statted++;
    if (kind !== StatKind.File) return undefined;
    return this.sigOf(dir + path.sep + name, statOfSlot(stats, i), prev, statAt);
  }

  private sigOf(abs: string, st: StatLike, prev: FileSig | undefined, statAt: number): FileSig {
    // The common case, without a new object: proven unchanged by its stat.
    if (
      prev &&
      !prev.racy &&
      prev.size === st.size &&
      prev.mtimeMs === st.mtimeMs &&
      prev.ctimeMs === st.ctimeMs &&
      prev.ino === st.ino
    )
      return prev;
    return this.proofs.judge(abs, fileSig(st, statAt), prev);
  }

  /** Puts a new signature into a map this scan is building (never one a snapshot holds). */
  put(into: Map<string, FileSig>, dir: string, name: string, sig: FileSig): void {
    into.set(name, sig);
    this.proofs.track(into, name, dir + path.sep + name, sig);
  }

  /** Counts a newly listed file; false (and stopped) past the cap. */
  admit(): boolean {
    if (this.files >= this.bounds.maxFiles) {
      this.stopped ??= 'limit';
      return false;
    }
    this.files++;
    return true;
  }
}

/** The state of a folder's control files: any change here re-reads the rules of its whole subtree. */
export function controlKey(abs: string, names: readonly string[]): string {
  const parts: string[] = [];
  for (const name of names) {
    const st = statOrNull(path.join(abs, name));
    if (!st) parts.push(`${name}:-`);
    else if (name !== '.git') parts.push(`${name}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
    else if (!st.isDirectory()) parts.push('.git:file');
    else {
      // The repository's own churn (index, objects) does not matter: only its exclude file.
      const ex = statOrNull(path.join(abs, '.git', 'info', 'exclude'));
      parts.push(`.git:dir:${ex ? `${ex.size}:${ex.mtimeMs}:${ex.ctimeMs}:${ex.ino}` : '-'}`);
    }
  }
  return parts.join('|');
}

/** controlKey over every control name (for the folders above the root, which are not listed). */
export const anyControlKey = (abs: string): string => controlKey(abs, CONTROL);

function statOrNull(p: string) {
  try {
    return statSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

export interface Listing {
  files: string[];
  dirs: string[];
}

/** A folder's entries as list_files judges them: regular files and folders not ignored (no symlinks). */
export function judge(ctx: WalkContext, rel: string, entries: readonly Dirent[], chain: IgnoreChain): Listing {
  const out: Listing = { files: [], dirs: [] };
  const abs = ctx.abs(rel);
  for (const e of entries) {
    const isDir = e.isDirectory();
    if (!isDir && !e.isFile()) continue;
    const r = childRel(rel, e.name);
    if (ctx.overrides.match(r, isDir) === 'ignore' || chain.ignored(path.join(abs, e.name), isDir)) continue;
    (isDir ? out.dirs : out.files).push(e.name);
  }
  return out;
}

export const controlNamesOf = (entries: readonly Dirent[]): string[] =>
  entries.filter((e) => (CONTROL as readonly string[]).includes(e.name)).map((e) => e.name);

/** undefined: unreadable or gone (as ripgrep, nothing is listed from it). */
export function readEntries(abs: string): Dirent[] | undefined {
  try {
    return readdirSync(abs, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

/** Which of a folder's files the host's watcher does not report (files.watcherExclude). */
export function unwatchedOf(
  ctx: WalkContext,
  rel: string,
  files: readonly string[],
  parentUnwatched: boolean,
): DirNode['unwatched'] {
  if (!ctx.unwatched) return null;
  if (parentUnwatched || (rel !== '' && ctx.unwatched.match(rel, true) === 'ignore')) return true;
  const names = files.filter((n) => ctx.unwatched!.match(childRel(rel, n), false) === 'ignore');
  return names.length ? new Set(names) : null;
}

/**
 * Walks the folder `rel` and everything below it into `into`: stat, entries, ignore files, a stat
 * per file. `parents`: the chain of the folders above it.
 */
export async function walkTree(
  ctx: WalkContext,
  rel: string,
  parents: IgnoreChain,
  parentUnwatched: boolean,
  into: Map<string, DirNode>,
): Promise<void> {
  if (!(await ctx.tick())) return;
  const abs = ctx.abs(rel);
  const statAt = Date.now();
  let st;
  try {
    st = lstatSync(abs, { throwIfNoEntry: false });
  } catch {
    return;
  }
  const entries = st?.isDirectory() ? readEntries(abs) : undefined;
  if (!st || !entries) return;
  ctx.walked++;
  // The control files' state before their rules are read: a change in between shows next time.
  const controlNames = controlNamesOf(entries);
  const control = controlKey(abs, controlNames);
  const frame = await loadFrame(abs, new Set(entries.map((e) => e.name)));
  const chain = parents.child(frame);
  const listing = judge(ctx, rel, entries, chain);
  const files = new Map<string, FileSig>();
  const fileStatAt = Date.now();
  for (const name of listing.files) {
    if (!ctx.admit()) break;
    const sig = ctx.sigFor(abs, name, undefined, fileStatAt);
    if (sig) ctx.put(files, abs, name, sig);
    else ctx.files--;
  }
  const unwatched = unwatchedOf(ctx, rel, listing.files, parentUnwatched);
  into.set(rel, {
    files,
    dirs: listing.dirs,
    sig: dirSig(st, statAt),
    frame,
    controlNames,
    control,
    unwatched,
  });
  if (!(await ctx.tick(listing.files.length))) return;
  for (const d of listing.dirs) {
    await walkTree(ctx, childRel(rel, d), chain, unwatched === true, into);
    if (ctx.stopped) return;
  }
}

/** Removes a folder and everything below it; returns how many files it held. */
export function dropTree(dirs: Map<string, DirNode>, rel: string): number {
  const node = dirs.get(rel);
  if (!node) return 0;
  dirs.delete(rel);
  let n = node.files.size;
  for (const d of node.dirs) n += dropTree(dirs, childRel(rel, d));
  return n;
}
