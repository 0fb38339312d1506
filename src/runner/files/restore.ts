// The I/O around the pure restore plan: the run's journal from the store, each journaled file's
// state now, and a version's bytes back from its blob. The extension applies the writes (one
// WorkspaceEdit, so Undo brings everything back); the runner never writes the workspace here.
import path from 'node:path';
import type { FileVersion } from '../../store/api/schema';
import type { CheckpointStore } from '../../store/api/types';
import { changesAfter, planRestore, restoreWrites, type RestorePlan } from './restorePlan';
import { DEFAULT_MAX_KEPT_BYTES, decodeBlob, readVersion, sameVersion } from './versions';

export interface PrepareRestoreInput {
  store: CheckpointStore;
  runId: string;
  toSeq: number;
  workspaceRoot: string;
  /** Journaled paths open with unsaved changes. */
  dirty?: ReadonlySet<string>;
}

export async function prepareRestore(i: PrepareRestoreInput): Promise<RestorePlan> {
  const { changes, notes } = changesAfter(
    await i.store.listEffects(i.runId),
    i.toSeq,
    await i.store.listRestores(i.runId),
  );
  const current = await currentVersions(i.workspaceRoot, [...new Set(changes.map((c) => c.change.path))]);
  return planRestore({ toSeq: i.toSeq, changes, current, dirty: i.dirty ?? new Set(), notes });
}

/** Each path's state now (hashes only, nothing stored). */
export async function currentVersions(
  workspaceRoot: string,
  paths: readonly string[],
): Promise<Map<string, FileVersion>> {
  const out = new Map<string, FileVersion>();
  for (const p of paths) out.set(p, await readVersion(path.join(workspaceRoot, p), null, 0));
  return out;
}

/** Paths whose state differs from what the plan saw (changed while the preview was open). */
export async function changedSincePlan(plan: RestorePlan, workspaceRoot: string): Promise<string[]> {
  const now = await currentVersions(
    workspaceRoot,
    plan.files.map((f) => f.path),
  );
  return plan.files
    .filter(
      (f) =>
        !sameVersion(f.current, now.get(f.path)!) &&
        !(f.current.kind === 'absent' && now.get(f.path)!.kind === 'absent'),
    )
    .map((f) => f.path);
}

/** A kept version's bytes (absent → null). A version without a blob is never planned as a write. */
export async function versionBytes(store: CheckpointStore, runId: string, v: FileVersion): Promise<Buffer | null> {
  if (v.kind === 'absent') return null;
  if (v.kind !== 'file' || v.blob === null)
    throw new Error('this version of the file was not kept, so it cannot be written back');
  return decodeBlob(await store.getBlob(runId, v.blob), v.encoding);
}

/**
 * Keeps (as blobs of the run) the content each write of the restore will replace, before it is
 * replaced — the same rule as a tool's pre-image — so the restore itself can be undone by a later
 * restore. Needs the run's lease. Returns path → the kept version.
 */
export async function keepReplaced(
  store: CheckpointStore,
  runId: string,
  workspaceRoot: string,
  plan: RestorePlan,
  overwrite: ReadonlySet<string>,
): Promise<Map<string, FileVersion>> {
  const kept = new Map<string, FileVersion>();
  for (const rel of restoreWrites(plan, overwrite).keys()) {
    kept.set(
      rel,
      await readVersion(
        path.join(workspaceRoot, rel),
        (content) => store.putBlob(runId, content),
        DEFAULT_MAX_KEPT_BYTES,
      ),
    );
  }
  return kept;
}
