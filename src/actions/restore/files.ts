// The I/O around the pure restore plan (plan.ts): the run's journaled changes from the store, each
// journaled file's state now, a version's bytes back from its blob, and the writes — the product's
// RestoreWriter (`fsRestoreWriter`), which the unit tests use as well. Every journaled path goes through
// the one resolver (paths.ts confineStoredPath) before it is read or written: a path that leaves the
// workspace (`..`, absolute, a symlink out, the extension's storage) is planned as refused and never
// touched. A restore's writes keep a file's identity: an existing file is rewritten in place (its
// mode, owner and hard links stay), a re-created one gets its recorded mode, and nothing goes to the
// OS trash. A bring-back's (atomic) replace each file by a rename, keeping its mode.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { sha256 } from '../../common/hash';
import { errorMessage } from '../../common/errors';
import type { FileVersion } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { confineStoredPath, type ConfinedPath, PathError } from '../../runner/tools/paths';
import { changesAfter, planRestore, restoreWrites, type RestorePlan } from './plan';
import {
  DEFAULT_MAX_KEPT_BYTES,
  decodeBlob,
  readVersion,
  sameVersion,
  unknownVersion,
} from '../../runner/fileJournal/versions';

/**
 * Where a restore's bytes go, and how it sees that nothing moved since the plan. The product's is
 * `fsRestoreWriter`: Node fs, in place, every path confined to the workspace right before it is used.
 */
export interface RestoreWriter {
  /** The plan's paths whose state differs from what the plan saw (changed while the preview was open). */
  changedSince(plan: RestorePlan): Promise<string[]>;
  /** Keeps, as blobs of the run, what each write will replace (so a later restore can undo this one); path → kept version. */
  keepReplaced(runId: string, plan: RestorePlan, overwrite: ReadonlySet<string>): Promise<Map<string, FileVersion>>;
  /** Writes the chosen files; returns the paths written. A failure names what was written before it. */
  write(runId: string, plan: RestorePlan, overwrite: ReadonlySet<string>): Promise<string[]>;
}

/**
 * The writer over the workspace on disk (the extension's and the tests'). `atomic`: each file is
 * replaced by a rename (a bring-back's files come from another checkout: never half-written);
 * otherwise in place (a restore keeps a file's identity).
 */
export function fsRestoreWriter(
  store: CheckpointStore,
  scope: RestoreScope,
  o: { atomic?: boolean } = {},
): RestoreWriter {
  return {
    changedSince: (plan) => changedSincePlan(plan, scope),
    keepReplaced: (runId, plan, overwrite) => keepReplaced(store, runId, scope, plan, overwrite),
    write: (runId, plan, overwrite) => writeRestore(store, runId, scope, plan, overwrite, o.atomic ?? false),
  };
}

/** Where a restore acts: the window's workspace folder, minus the extension's own storage. */
export interface RestoreScope {
  workspaceRoot: string;
  storageDir?: string | undefined;
}

export interface PrepareRestoreInput extends RestoreScope {
  store: CheckpointStore;
  runId: string;
  toSeq: number;
  /** Journaled paths open with unsaved changes. */
  dirty?: ReadonlySet<string>;
}

export async function prepareRestore(i: PrepareRestoreInput): Promise<RestorePlan> {
  const { changes, notes } = changesAfter(
    await i.store.listEffects(i.runId),
    i.toSeq,
    await i.store.listRestores(i.runId),
  );
  const { current, refused } = await currentVersions(i, [...new Set(changes.map((c) => c.change.path))]);
  return planRestore({ toSeq: i.toSeq, changes, current, refused, dirty: i.dirty ?? new Set(), notes });
}

/** Where a journaled path is: the file's real location, every workspace name it goes by, its number of hard links. */
export type Found = Pick<ConfinedPath, 'abs' | 'names' | 'nlink'>;
type Located = Found | { refused: string } | { unknown: string };

/** Where a journaled path is now: its real location, or why the restore may not touch it. */
async function locate(scope: RestoreScope, rel: string): Promise<Located> {
  let confined;
  try {
    confined = await confineStoredPath(scope.workspaceRoot, rel, scope);
  } catch (err) {
    if (err instanceof PathError) return { refused: err.message };
    throw err;
  }
  // A symlink inside the workspace now stands on its way: the journaled file is not where it was.
  if (confined.rel !== rel) return { unknown: `it is reached through a symbolic link now (${confined.rel})` };
  return { abs: confined.abs, names: confined.names, nlink: confined.nlink };
}

/** Each path's state now (hashes only, nothing stored), where it was found, and the paths the resolver refuses. */
export async function currentVersions(
  scope: RestoreScope,
  paths: readonly string[],
): Promise<{ current: Map<string, FileVersion>; refused: Map<string, string>; found: Map<string, Found> }> {
  const current = new Map<string, FileVersion>();
  const refused = new Map<string, string>();
  const found = new Map<string, Found>();
  for (const p of paths) {
    const at = await locate(scope, p);
    if ('refused' in at) refused.set(p, at.refused);
    else if ('unknown' in at) current.set(p, unknownVersion(at.unknown));
    else {
      found.set(p, at);
      current.set(p, await readVersion(at.abs, null, 0));
    }
  }
  return { current, refused, found };
}

/** Paths whose state differs from what the plan saw (changed while the preview was open). */
export async function changedSincePlan(plan: RestorePlan, scope: RestoreScope): Promise<string[]> {
  const files = plan.files.filter((f) => f.action !== 'refused');
  const { current: now, refused } = await currentVersions(
    scope,
    files.map((f) => f.path),
  );
  return files
    .filter((f) => {
      const v = now.get(f.path);
      if (refused.has(f.path) || !v) return true;
      return !sameVersion(f.current, v) && !(f.current.kind === 'absent' && v.kind === 'absent');
    })
    .map((f) => f.path);
}

/**
 * A kept version's bytes (absent → null). A version without a blob is never planned as a write; one
 * whose blob does not hold the bytes its record names (a damaged or forged store) is never written.
 */
export async function versionBytes(store: CheckpointStore, runId: string, v: FileVersion): Promise<Buffer | null> {
  if (v.kind === 'absent') return null;
  if (v.kind !== 'file' || v.blob === null)
    throw new Error('this version of the file was not kept, so it cannot be written back');
  const bytes = decodeBlob(await store.getBlob(runId, v.blob), v.encoding);
  if (bytes.length !== v.size || sha256(bytes) !== v.sha256)
    throw new Error('the kept copy of this version does not hold the content its record names');
  return bytes;
}

/** The real location of a path the plan writes; refused or moved since the plan → an error naming it. */
async function writable(scope: RestoreScope, rel: string): Promise<string> {
  const at = await locate(scope, rel);
  if ('abs' in at) return at.abs;
  throw new Error(`${rel} cannot be written: ${'refused' in at ? at.refused : at.unknown}`);
}

/**
 * Keeps (as blobs of the run) the content each write of the restore will replace, before it is
 * replaced — the same rule as a tool's pre-image — so the restore itself can be undone by a later
 * restore. Needs the run's lease. Returns path → the kept version.
 */
export async function keepReplaced(
  store: CheckpointStore,
  runId: string,
  scope: RestoreScope,
  plan: RestorePlan,
  overwrite: ReadonlySet<string>,
): Promise<Map<string, FileVersion>> {
  const kept = new Map<string, FileVersion>();
  for (const rel of restoreWrites(plan, overwrite).keys()) {
    const abs = await writable(scope, rel);
    kept.set(
      rel,
      await readVersion(abs, (content, hash) => store.putBlob(runId, content, hash), DEFAULT_MAX_KEPT_BYTES),
    );
  }
  return kept;
}

/**
 * Writes the plan's files: content in place for a file that exists (same inode: its mode, executable
 * bit and hard links stay), a new file with its recorded mode, a deletion as an unlink (never the
 * trash). Each path is confined again right before it is written. A failure names what was written.
 */
export async function writeRestore(
  store: CheckpointStore,
  runId: string,
  scope: RestoreScope,
  plan: RestorePlan,
  overwrite: ReadonlySet<string>,
  atomic = false,
): Promise<string[]> {
  const written: string[] = [];
  const modes = new Map(plan.files.map((f) => [f.path, f.mode]));
  const writes = restoreWrites(plan, overwrite);
  // Every kept copy is checked before the first write: a bad one stops the restore with nothing written.
  for (const [rel, version] of writes)
    await versionBytes(store, runId, version).catch((err: unknown) => {
      throw new Error(`could not restore ${rel}: ${errorMessage(err)} (nothing was written)`, { cause: err });
    });
  for (const [rel, version] of writes) {
    try {
      const abs = await writable(scope, rel);
      const bytes = await versionBytes(store, runId, version);
      if (atomic && bytes !== null) await replaceVersion(abs, bytes, version, modes.get(rel));
      else await writeVersion(abs, bytes, version);
    } catch (err) {
      const done = written.length > 0 ? ` (written before it: ${written.join(', ')})` : ' (nothing was written)';
      throw new Error(`could not restore ${rel}: ${errorMessage(err)}${done}`, { cause: err });
    }
    written.push(rel);
  }
  return written;
}

async function writeVersion(abs: string, bytes: Buffer | null, version: FileVersion): Promise<void> {
  if (bytes === null) {
    await fs.unlink(abs).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    return;
  }
  const st = await fs.lstat(abs).catch(() => null);
  if (st?.isFile()) return fs.writeFile(abs, bytes); // O_TRUNC on the same inode
  if (st) throw new Error('something other than a file is there now');
  await fs.mkdir(path.dirname(abs), { recursive: true });
  const mode = version.kind === 'file' && version.mode !== undefined ? version.mode & 0o777 : undefined;
  await fs.writeFile(abs, bytes, { flag: 'wx', ...(mode === undefined ? {} : { mode }) });
  if (mode !== undefined) await fs.chmod(abs, mode); // exactly the recorded bits, whatever the umask
}

/**
 * Writes the bytes beside the file and renames them over it: the file is the old content or the new,
 * never a part. It keeps its permission bits unless `mode` says the run changed them (a new file
 * gets its recorded ones); a rename gives it a new inode, so hard links to the old one keep the old
 * content (the plan asks before writing a file with other names).
 */
async function replaceVersion(
  abs: string,
  bytes: Buffer,
  version: FileVersion,
  mode: number | undefined,
): Promise<void> {
  const st = await fs.lstat(abs).catch(() => null);
  if (st && !st.isFile()) throw new Error('something other than a file is there now');
  const recorded = version.kind === 'file' ? version.mode : undefined;
  const chosen = mode ?? (st ? st.mode : recorded);
  const bits = chosen === undefined ? undefined : chosen & 0o777;
  await fs.mkdir(path.dirname(abs), { recursive: true });
  const tmp = path.join(path.dirname(abs), `.aw-${randomBytes(6).toString('hex')}.tmp`);
  const fh = await fs.open(tmp, 'wx', bits ?? 0o666);
  try {
    try {
      await fh.writeFile(bytes);
      if (bits !== undefined) await fh.chmod(bits); // exactly these bits, whatever the umask
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, abs);
  } catch (err) {
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
}
