// "Bring the run's work here" as a pure function: the run's net file changes from its journal (each
// path as it was before the run — or after a given checkpoint — and as the run left it) against this
// checkout's files, in restore's plan shape (restore/plan.ts), so restore's preview, choices,
// transaction and record serve it unchanged. Three-way per file: this checkout's copy is what the
// run started from → the run's version is written; it is already the run's → nothing to do; anything
// else is a conflict, kept unless the user chooses to overwrite it (what a write replaces is kept,
// so Undo brings it back). A protected file is never written without that choice either: the run
// comes from another checkout, maybe another machine, and its store may hold anything. vscode-free.
import type { FileVersion, RestoreRecord } from '../../store/api/schema';
import { isRestorable, sameVersion } from '../../runner/fileJournal/versions';
import { protectedWhy, type FileRules } from '../../runner/tools/protectedFiles';
import {
  changesAfter,
  OUTSIDE_WORKSPACE,
  planRestore,
  type JournaledChange,
  type PlannedFile,
  type RestorePlan,
} from '../restore/plan';

/** One path's net change over the run: as it was before, and as the run left it. */
export interface NetChange {
  path: string;
  before: FileVersion;
  after: FileVersion;
}

/** A bring-back's plan (or its undo's): restore's, with where in the run the changes come from. */
export interface BringBackPlan extends RestorePlan {
  runId: string;
  /** The run's changes after this checkpoint (0: from its start); `toSeq` is its newest checkpoint. */
  fromSeq: number;
  /** An undo's plan: the id of the bring-back record it undoes; null for a bring-back. */
  undoes: string | null;
}

export interface BringBackInput {
  runId: string;
  fromSeq: number;
  toSeq: number;
  changes: readonly NetChange[];
  /** Each path's state in this checkout. */
  current: ReadonlyMap<string, FileVersion>;
  /** Paths the resolver refused (paths.ts confineStoredPath), with why: listed, never written. */
  refused: ReadonlyMap<string, string>;
  /** Every workspace name each path goes by (the resolver's), judged against the protected files. */
  names: ReadonlyMap<string, readonly string[]>;
  /** Paths open in an editor with unsaved changes: never written. */
  dirty: ReadonlySet<string>;
  rules: FileRules;
  notes: readonly string[];
}

/** The journal's changes after `fromSeq` (calls and the run's own restores), folded into one per path, by path. */
export function netChanges(
  effects: Parameters<typeof changesAfter>[0],
  restores: readonly RestoreRecord[],
  fromSeq: number,
): { changes: NetChange[]; notes: string[] } {
  const { changes, notes } = changesAfter(effects, fromSeq, restores);
  const byPath = new Map<string, NetChange>();
  for (const { change: c } of changes) {
    const first = byPath.get(c.path);
    byPath.set(c.path, { path: c.path, before: first ? first.before : c.before, after: c.after });
  }
  const net = [...byPath.values()].filter(
    (c) => !sameVersion(c.before, c.after) || modeChange(c.before, c.after) !== undefined,
  );
  return { changes: net.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), notes };
}

export function planBringBack(input: BringBackInput): BringBackPlan {
  const files = input.changes.map((c): PlannedFile => {
    const refused = input.refused.get(c.path);
    if (refused !== undefined) {
      const current: FileVersion = { kind: 'unknown', reason: refused };
      const reason = `${OUTSIDE_WORKSPACE}: ${refused}`;
      return {
        path: c.path,
        action: 'refused',
        reason,
        current,
        target: null,
        checkpoint: c.after,
        overwritable: false,
      };
    }
    const current = input.current.get(c.path) ?? { kind: 'unknown', reason: 'it was not read' };
    const asks = protectedReason(input.names.get(c.path), input.rules);
    return planFile(c, current, input.dirty.has(c.path), asks);
  });
  const { runId, fromSeq, toSeq } = input;
  return { runId, fromSeq, toSeq, undoes: null, files, notes: [...input.notes] };
}

function planFile(c: NetChange, current: FileVersion, dirty: boolean, asks: string | null): PlannedFile {
  const theirs = c.after;
  const mode = modeChange(c.before, theirs);
  const plan = (action: PlannedFile['action'], reason: string, write: boolean, overwritable = false): PlannedFile => ({
    path: c.path,
    action,
    reason,
    current,
    target: write ? theirs : null,
    checkpoint: theirs,
    overwritable,
    base: c.before,
    ...(mode === undefined ? {} : { mode }),
  });
  const there = sameVersion(current, theirs);
  const modeToSet = mode !== undefined && current.kind === 'file' && (current.mode ?? mode) !== mode;
  if (there && !modeToSet) return plan('unchanged', 'already as the run left it', false);
  if (dirty)
    return plan(
      'conflict',
      'open in an editor with unsaved changes: save or revert it, then bring the run back',
      false,
    );
  if (current.kind === 'unknown') return plan('conflict', `its copy here cannot be read: ${current.reason}`, false);
  if (!isRestorable(theirs)) return plan('unrestorable', notKept(theirs), false);
  const clean = there || sameVersion(current, c.before);
  if (clean && !asks) return plan('revert', written(c, there ? mode : undefined), true);
  const choose = "choose it to write the run's version (the copy here is kept, so undo brings it back)";
  if (clean) return plan('conflict', `${asks}: written only if you ${choose}`, false, true);
  return plan('conflict', `${conflictReason(c)}; ${choose}`, false, true);
}

/** The run changed the file's permission bits: the new ones. */
function modeChange(before: FileVersion, after: FileVersion): number | undefined {
  if (before.kind !== 'file' || after.kind !== 'file') return undefined;
  if (before.mode === undefined || after.mode === undefined || before.mode === after.mode) return undefined;
  return after.mode;
}

function protectedReason(names: readonly string[] | undefined, rules: FileRules): string | null {
  const hit = names && protectedWhy(names, rules);
  return hit ? `"${hit.rel}" is a protected file (${hit.why})` : null;
}

function written(c: NetChange, modeOnly: number | undefined): string {
  if (modeOnly !== undefined) return `the run changed its permissions to ${modeOnly.toString(8).padStart(4, '0')}`;
  if (c.before.kind === 'absent') return 'the run created it';
  if (c.after.kind === 'absent') return 'the run deleted it';
  return "the run changed it: the run's version is written";
}

function notKept(v: FileVersion): string {
  if (v.kind === 'unknown') return `what the run left is not known: ${v.reason}`;
  const size = v.kind === 'file' ? ` (${v.size.toLocaleString('en')} bytes)` : '';
  return `the run's version was too large to keep${size}`;
}

function conflictReason(c: NetChange): string {
  if (c.before.kind === 'unknown')
    return `the run changed it from content that was not kept (${c.before.reason}), and the copy here is not the run's version`;
  const what = c.after.kind === 'absent' ? 'the run deleted it' : 'the run changed it';
  return `${what}, and the copy here differs from what the run started from (changed here since)`;
}

/** The bring-back's writes, as journaled changes of this checkout: what restore's walk undoes. */
export function undoChanges(record: RestoreRecord): JournaledChange[] {
  return record.files
    .filter((f) => f.action === 'reverted' || f.action === 'partly_reverted' || f.action === 'overwritten')
    .map((f) => ({
      toolCallId: record.id,
      toolName: 'restore',
      step: 0,
      interrupted: false,
      change: { path: f.path, before: f.from, after: f.to },
    }));
}

/** Undo = restore's plan over the bring-back's writes: each file back to the copy it replaced, with its permission bits. */
export function planUndo(
  record: RestoreRecord,
  runId: string,
  input: Pick<BringBackInput, 'current' | 'refused' | 'dirty'>,
): BringBackPlan {
  const plan = planRestore({ toSeq: record.to_seq, changes: undoChanges(record), ...input });
  const files = plan.files.map((f): PlannedFile => {
    const mode = f.checkpoint.kind === 'file' ? f.checkpoint.mode : undefined;
    const reason = f.action === 'revert' ? `the bring-back wrote it: ${undoneReason(f)}` : f.reason;
    return { ...f, reason, ...(mode === undefined ? {} : { mode }) };
  });
  const fromSeq = record.applied?.from_seq ?? 0;
  return { ...plan, files, runId, fromSeq, undoes: record.id };
}

function undoneReason(f: PlannedFile): string {
  if (f.checkpoint.kind === 'absent') return 'it was not here before, so it is deleted';
  if (f.current.kind === 'absent') return 'it is re-created as it was';
  return 'the copy it replaced is written back';
}
