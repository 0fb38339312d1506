// Restoring files in the editor: the plan (runner/files, pure) for a checkpoint, with the editors
// that have unsaved changes as conflicts; a preview; then the writes, and the restore recorded with
// the run (what was applied, kept, and why). The writes are runner/files/restore.ts's: byte-exact
// (CRLF, BOM, binary), in place (a file keeps its mode, executable bit and hard links; a deleted
// one comes back with its recorded mode), never through the OS trash, every path confined to this
// window's workspace. Open editors without unsaved changes follow the files on disk.
import path from 'node:path';
import * as vscode from 'vscode';
import {
  changedSincePlan,
  keepReplaced,
  prepareRestore,
  writeRestore,
  type RestoreScope,
} from '../../runner/files/restore';
import { restoreOutcome, type RestorePlan } from '../../runner/files/restorePlan';
import type { RestoreRecord } from '../../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';

export interface RestorerDeps {
  store: CheckpointStore;
  workspaceRoot: vscode.Uri;
  /** The extension's own storage folder: never written by a restore. */
  storageDir?: string;
  owner: OwnerInfo;
}

/** The files changed between the preview and the click: plan again. */
export class RestoreOutdatedError extends Error {
  constructor(readonly paths: string[]) {
    super(`These files changed while the preview was open: ${paths.join(', ')}. Look at the new preview.`);
  }
}

export interface ApplyOptions {
  /** Journaled files the user chose to overwrite with their checkpoint version. */
  overwrite: ReadonlySet<string>;
  /** Runs after the files are written, before the record (a fork): its run id goes into the record. */
  fork?: () => Promise<string>;
}

export class FileRestorer {
  constructor(private readonly deps: RestorerDeps) {}

  get root(): string {
    return this.deps.workspaceRoot.fsPath;
  }

  get workspaceRoot(): vscode.Uri {
    return this.deps.workspaceRoot;
  }

  private get scope(): RestoreScope {
    return { workspaceRoot: this.root, storageDir: this.deps.storageDir };
  }

  async plan(runId: string, toSeq: number): Promise<RestorePlan> {
    return prepareRestore({ store: this.deps.store, runId, toSeq, ...this.scope, dirty: this.dirtyPaths() });
  }

  /** Writes the plan's files and records the restore. Needs the run (refused while another window or a live run holds it). */
  async apply(
    runId: string,
    plan: RestorePlan,
    opts: ApplyOptions,
  ): Promise<{ record: RestoreRecord; forkedRunId: string | null }> {
    const changed = await changedSincePlan(plan, this.scope);
    if (changed.length > 0) throw new RestoreOutdatedError(changed);
    const { store } = this.deps;
    const lease = await store.acquire(runId, this.deps.owner);
    try {
      const replaced = await keepReplaced(store, runId, this.scope, plan, opts.overwrite);
      await writeRestore(store, runId, this.scope, plan, opts.overwrite);
      const forkedRunId = opts.fork ? await opts.fork() : null;
      const record = await store.recordRestore(runId, {
        to_seq: plan.toSeq,
        files: restoreOutcome(plan, opts.overwrite, replaced),
        forked_run_id: forkedRunId,
        notes: plan.notes,
      });
      return { record, forkedRunId };
    } finally {
      await lease.release();
    }
  }

  /** Workspace files open with unsaved changes, relative and '/'-separated. */
  private dirtyPaths(): Set<string> {
    const out = new Set<string>();
    for (const d of vscode.workspace.textDocuments) {
      if (!d.isDirty || d.uri.scheme !== 'file') continue;
      const rel = path.relative(this.root, d.uri.fsPath);
      if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) out.add(rel.split(path.sep).join('/'));
    }
    return out;
  }
}
