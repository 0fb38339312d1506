// Restoring files in the editor: the plan (runner/files, pure) for a checkpoint, with the editors
// that have unsaved changes as conflicts; a preview; then ONE WorkspaceEdit, so a single Undo
// brings every file back, and the restore recorded with the run (what was applied, kept, and why).
// A file is rewritten as delete + create-with-contents: byte-exact (CRLF, BOM, binary), and
// VS Code's undo of a delete re-creates the file with the content it had.
import path from 'node:path';
import * as vscode from 'vscode';
import { changedSincePlan, keepReplaced, prepareRestore, versionBytes } from '../../runner/files/restore';
import { restoreOutcome, restoreWrites, type RestorePlan } from '../../runner/files/restorePlan';
import type { RestoreRecord } from '../../store/api/schema';
import type { CheckpointStore, OwnerInfo } from '../../store/api/types';

export interface RestorerDeps {
  store: CheckpointStore;
  workspaceRoot: vscode.Uri;
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

  async plan(runId: string, toSeq: number): Promise<RestorePlan> {
    return prepareRestore({ store: this.deps.store, runId, toSeq, workspaceRoot: this.root, dirty: this.dirtyPaths() });
  }

  /** Applies the plan as one workspace edit and records it. Needs the run (refused while another window or a live run holds it). */
  async apply(
    runId: string,
    plan: RestorePlan,
    opts: ApplyOptions,
  ): Promise<{ record: RestoreRecord; forkedRunId: string | null }> {
    const changed = await changedSincePlan(plan, this.root);
    if (changed.length > 0) throw new RestoreOutdatedError(changed);
    const { store } = this.deps;
    const lease = await store.acquire(runId, this.deps.owner);
    try {
      const replaced = await keepReplaced(store, runId, this.root, plan, opts.overwrite);
      // WorkspaceEdit.size counts text edits only: whether there is anything to apply is the plan's to say.
      if (
        restoreWrites(plan, opts.overwrite).size > 0 &&
        !(await vscode.workspace.applyEdit(await this.edit(runId, plan, opts.overwrite)))
      ) {
        throw new Error('VS Code did not apply the restore (nothing was changed).');
      }
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

  /** One edit for every write: delete (a file the agent created) or delete + create with the exact bytes. */
  async edit(runId: string, plan: RestorePlan, overwrite: ReadonlySet<string>): Promise<vscode.WorkspaceEdit> {
    const edit = new vscode.WorkspaceEdit();
    const label = `Restore files to checkpoint #${plan.toSeq}`;
    for (const [rel, version] of restoreWrites(plan, overwrite)) {
      const uri = vscode.Uri.joinPath(this.deps.workspaceRoot, ...rel.split('/'));
      const meta = { label, needsConfirmation: false, description: rel };
      const exists = plan.files.find((f) => f.path === rel)?.current.kind !== 'absent';
      const bytes = await versionBytes(this.deps.store, runId, version);
      if (exists) edit.deleteFile(uri, { ignoreIfNotExists: true }, meta);
      if (bytes) edit.createFile(uri, { contents: bytes }, meta);
    }
    return edit;
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
