// The I/O around the pure restore plan (plan.ts): the run's journaled changes from the store, each
// journaled file's state now, a version's bytes back from its blob, and the writes — the product's
// RestoreWriter (`fsRestoreWriter`), which the unit tests use as well. Every journaled path goes through
// the one resolver (paths.ts confineStoredPath) before it is read or written: a path that leaves the
// workspace (`..`, absolute, a symlink out, the extension's storage) is planned as refused and never
// touched. Writes keep a file's identity: an existing file is rewritten in place (its mode, owner and
// hard links stay), a re-created one gets its recorded mode, and nothing goes to the OS trash.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../../common/errors';
import type { FileVersion } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { confineStoredPath, PathError } from '../../runner/tools/paths';
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

/** The writer over the workspace on disk (the extension's and the tests'). */
export function fsRestoreWriter(store: CheckpointStore, scope: RestoreScope): RestoreWriter {
  return {
    changedSince: (plan) => changedSincePlan(plan, scope),
    keepReplaced: (runId, plan, overwrite) => keepReplaced(store, runId, scope, plan, overwrite),
    write: (runId, plan, overwrite) => writeRestore(store, runId, scope, plan, overwrite),
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

type Located = { abs: string } | { refused: string } | { unknown: string };

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
  return { abs: confined.abs };
}

/** Each path's state now (hashes only, nothing stored), and the paths the resolver refuses. */
export async function currentVersions(
  scope: RestoreScope,
  paths: readonly string[],
): Promise<{ current: Map<string, FileVersion>; refused: Map<string, string> }> {
  const current = new Map<string, FileVersion>();
  const refused = new Map<string, string>();
  for (const p of paths) {
    const at = await locate(scope, p);
    if ('refused' in at) refused.set(p, at.refused);
    else current.set(p, 'unknown' in at ? unknownVersion(at.unknown) : await readVersion(at.abs, null, 0));
  }
  return { current, refused };
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

/** A kept version's bytes (absent → null). A version without a blob is never planned as a write. */
export async function versionBytes(store: CheckpointStore, runId: string, v: FileVersion): Promise<Buffer | null> {
  if (v.kind === 'absent') return null;
  if (v.kind !== 'file' || v.blob === null)
    throw new Error('this version of the file was not kept, so it cannot be written back');
  return decodeBlob(await store.getBlob(runId, v.blob), v.encoding);
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
): Promise<string[]> {
  const written: string[] = [];
  for (const [rel, version] of restoreWrites(plan, overwrite)) {
    try {
      const abs = await writable(scope, rel);
      await writeVersion(abs, await versionBytes(store, runId, version), version);
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
