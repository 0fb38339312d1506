// "Restore files to this checkpoint" as a pure function: from the file journal after the checkpoint
// and each file's state now, what to write back, what to keep, and why. vscode-free, no I/O.
//
// Per file, walking the agent's changes backwards from the newest: the file is exactly what the
// agent's change left (its `after`) → that change can be undone, giving its `before`; continue with
// the change before it. The walk stops where the file is not what the agent left: someone else
// (the user, another run) changed it in between, an interrupted call's result is unknown, or a
// command changed it from content nobody kept. What the walk reached is written; what it could not
// pass is kept and said. A user's edit is therefore never overwritten unless the user ticks the
// file to overwrite it with its checkpoint version. Files absent from the journal are never touched.
import type { Effect, FileChange, FileVersion, RestoreFile, RestoreRecord } from '../../store/api/schema';
import { isRestorable, sameVersion } from '../../runner/fileJournal/versions';

/** One journaled change after the checkpoint, with the call (or earlier restore) that made it, in journal order. */
export interface JournaledChange {
  /** A tool call id, or a restore's id. */
  toolCallId: string;
  /** The tool, or 'restore'. */
  toolName: string;
  step: number;
  /** The call's intent was written, its result never was. */
  interrupted: boolean;
  change: FileChange;
}

/** `refused`: the journaled path is outside the workspace (or in the extension's storage): never written. */
export type PlannedAction = 'revert' | 'partial' | 'conflict' | 'unrestorable' | 'unchanged' | 'refused';

/** What the preview and the record say of a refused path. */
export const OUTSIDE_WORKSPACE = 'outside the workspace — not restored';

export interface PlannedFile {
  path: string;
  action: PlannedAction;
  reason: string;
  /** The file now, as the plan saw it. */
  current: FileVersion;
  /** What a default restore writes ('revert', 'partial'); null: nothing. */
  target: FileVersion | null;
  /** The file at the checkpoint (the first change's `before`); may be unknown. */
  checkpoint: FileVersion;
  /** The user may choose to overwrite the file with its checkpoint version (known, kept, and not the default). */
  overwritable: boolean;
  /** A bring-back's: the file before the run (the base of the three-way: `current` is this checkout's, `checkpoint` the run's). */
  base?: FileVersion;
  /** A bring-back's: permission bits the write gives the file (the run changed them); absent: the file's own stay. */
  mode?: number;
}

export interface RestorePlan {
  toSeq: number;
  files: PlannedFile[];
  /** What the journal cannot tell (interrupted commands, scans that gave up), for the preview. */
  notes: string[];
}

export interface PlanInput {
  toSeq: number;
  changes: readonly JournaledChange[];
  /** Each journaled path's state now. */
  current: ReadonlyMap<string, FileVersion>;
  /** Paths open in an editor with unsaved changes: never written by default. */
  dirty: ReadonlySet<string>;
  /** Journaled paths the resolver refused (paths.ts confineStoredPath), with why: listed, never written. */
  refused?: ReadonlyMap<string, string>;
  notes?: readonly string[];
}

/** What a restore wrote (its record's other files it left as they were). */
const RESTORE_WRITES: ReadonlySet<RestoreFile['action']> = new Set(['reverted', 'partly_reverted', 'overwritten']);

/** The restore wrote at least one file (so restoring to the checkpoint it followed undoes it). */
export function restoreWrote(r: RestoreRecord): boolean {
  return r.files.some((f) => RESTORE_WRITES.has(f.action));
}

/**
 * The journal's changes after checkpoint `toSeq`, oldest first: tool calls whose intent followed it,
 * and the writes of earlier restores applied after it (so a later restore can undo a restore) — not
 * of bring-backs, which wrote another checkout.
 */
export function changesAfter(
  effects: readonly Effect[],
  toSeq: number,
  restores: readonly RestoreRecord[] = [],
): { changes: JournaledChange[]; notes: string[] } {
  const changes: JournaledChange[] = [];
  const notes: string[] = [];
  type Entry = { seq: number; ms: number; effect?: Effect; restore?: RestoreRecord };
  const entries: Entry[] = [
    ...effects
      .filter((e) => e.checkpoint_seq !== undefined && e.checkpoint_seq >= toSeq)
      .map((effect) => ({ seq: effect.checkpoint_seq!, ms: effect.intent_ms, effect })),
    ...ownRestores(restores)
      .filter((r) => r.checkpoint_seq >= toSeq)
      .map((restore) => ({ seq: restore.checkpoint_seq, ms: restore.created_ms, restore })),
  ].sort((a, b) => a.seq - b.seq || a.ms - b.ms); // stable: journal order within one time
  for (const { effect: e, restore: r } of entries) {
    if (r) {
      for (const f of r.files) {
        if (RESTORE_WRITES.has(f.action)) {
          changes.push({
            toolCallId: r.id,
            toolName: 'restore',
            step: 0,
            interrupted: false,
            change: { path: f.path, before: f.from, after: f.to },
          });
        }
      }
      continue;
    }
    if (!e) continue;
    const interrupted = e.result === null;
    for (const change of e.files ?? [])
      changes.push({ toolCallId: e.tool_call_id, toolName: e.tool_name, step: e.step, interrupted, change });
    if (e.file_scan?.note) notes.push(`${e.tool_name} at step ${e.step}: ${e.file_scan.note}`);
    if (interrupted && e.files === undefined && e.tool_name === 'run_command') {
      notes.push(
        `A command at step ${e.step} was interrupted before its result was recorded: what it changed is not known.`,
      );
    }
  }
  return { changes, notes };
}

/**
 * The newest checkpoint with a journaled file change after it (the same entries `changesAfter`
 * reads), or null: a restore to checkpoint `seq` has something to plan exactly when `seq` ≤ this.
 * One pass, so a view can ask it once for every waypoint of a long run.
 */
export function lastJournaledSeq(effects: readonly Effect[], restores: readonly RestoreRecord[] = []): number | null {
  let last: number | null = null;
  const see = (seq: number) => (last = last === null ? seq : Math.max(last, seq));
  for (const e of effects) if (e.checkpoint_seq !== undefined && (e.files?.length ?? 0) > 0) see(e.checkpoint_seq);
  for (const r of ownRestores(restores)) if (restoreWrote(r)) see(r.checkpoint_seq);
  return last;
}

/** The restores of the run's own files: a bring-back's record (`applied`) is of another checkout's. */
export function ownRestores(restores: readonly RestoreRecord[]): RestoreRecord[] {
  return restores.filter((r) => r.applied === undefined);
}

export function planRestore(input: PlanInput): RestorePlan {
  const byPath = new Map<string, JournaledChange[]>();
  for (const c of input.changes) {
    const list = byPath.get(c.change.path) ?? [];
    list.push(c);
    byPath.set(c.change.path, list);
  }
  const files = [...byPath.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, chain]): PlannedFile => {
      const refused = input.refused?.get(path);
      if (refused !== undefined) {
        const current: FileVersion = { kind: 'unknown', reason: refused };
        const reason = `${OUTSIDE_WORKSPACE}: ${refused}`;
        return { path, action: 'refused', reason, current, target: null, checkpoint: current, overwritable: false };
      }
      return planFile(
        path,
        chain,
        input.current.get(path) ?? { kind: 'unknown', reason: 'it was not read' },
        input.dirty.has(path),
      );
    });
  return { toSeq: input.toSeq, files, notes: [...(input.notes ?? [])] };
}

function planFile(path: string, chain: JournaledChange[], current: FileVersion, dirty: boolean): PlannedFile {
  const checkpoint = chain[0]!.change.before;
  const base = { path, current, checkpoint };
  const canOverwrite = isRestorable(checkpoint) && !dirty;
  if (sameVersion(current, checkpoint))
    return {
      ...base,
      action: 'unchanged',
      reason: 'already as it was at the checkpoint',
      target: null,
      overwritable: false,
    };
  if (dirty)
    return {
      ...base,
      action: 'conflict',
      reason: 'open in an editor with unsaved changes: save or revert it, then restore again',
      target: null,
      overwritable: false,
    };
  if (current.kind === 'unknown')
    return {
      ...base,
      action: 'conflict',
      reason: `its current state cannot be read: ${current.reason}`,
      target: null,
      overwritable: false,
    };

  let state: FileVersion = current;
  let i = chain.length - 1;
  let stop: string | null = null;
  for (; i >= 0; i--) {
    const c = chain[i]!;
    if (!sameVersion(state, c.change.after)) {
      stop = c.interrupted
        ? `${describe(c)} was interrupted before its result was recorded, and the file is not as it was before that call`
        : i === chain.length - 1
          ? `it was changed after ${describe(c)} (by you or another run)`
          : `it was changed between the agent's edits (after ${describe(c)}), and that version is kept`;
      break;
    }
    const before = c.change.before;
    if (!isRestorable(before)) {
      stop =
        before.kind === 'file'
          ? `its earlier version was too large to keep (${before.size.toLocaleString('en')} bytes)`
          : before.kind === 'unknown'
            ? before.reason
            : 'unknown';
      break;
    }
    state = c.change.before;
  }
  if (i < 0)
    return {
      ...base,
      action: 'revert',
      reason: revertReason(checkpoint, current, chain),
      target: state,
      overwritable: false,
    };
  if (i === chain.length - 1) {
    // The walk stopped at the newest change: either the file moved on (a conflict) or that change's earlier content is unknown.
    const action = sameVersion(current, chain[i]!.change.after) ? 'unrestorable' : 'conflict';
    return { ...base, action, reason: stop!, target: null, overwritable: canOverwrite };
  }
  return {
    ...base,
    action: 'partial',
    reason: `the agent's later edits are undone; earlier ones are kept: ${stop!}`,
    target: state,
    overwritable: canOverwrite,
  };
}

function describe(c: JournaledChange): string {
  return c.toolName === 'restore' ? `an earlier restore (${c.toolCallId})` : `${c.toolName} at step ${c.step}`;
}

/** Undoing a restore reverts what that restore wrote, not what the agent did: say who. */
function revertReason(checkpoint: FileVersion, current: FileVersion, chain: readonly JournaledChange[]): string {
  const who = chain.every((c) => c.toolName === 'restore') ? 'an earlier restore' : 'the agent';
  if (checkpoint.kind === 'absent') return `${who} created it: it is deleted`;
  if (current.kind === 'absent') return `${who} deleted it: it is re-created`;
  return `${who} changed it: its checkpoint version is written back`;
}

/**
 * The record of what a restore did with each planned file, given the files the user chose to
 * overwrite and the kept versions of what the writes replaced (keepReplaced), so that a later
 * restore can bring those back.
 */
export function restoreOutcome(
  plan: RestorePlan,
  overwrite: ReadonlySet<string>,
  replaced: ReadonlyMap<string, FileVersion>,
): RestoreFile[] {
  return plan.files.map((f) => {
    const from = replaced.get(f.path) ?? f.current;
    if (overwrite.has(f.path) && f.overwritable)
      return {
        path: f.path,
        action: 'overwritten',
        reason: `you chose to overwrite it with its checkpoint version (${f.reason})`,
        from,
        to: f.checkpoint,
      };
    switch (f.action) {
      case 'revert':
        return { path: f.path, action: 'reverted', reason: f.reason, from, to: f.target! };
      case 'partial':
        return { path: f.path, action: 'partly_reverted', reason: f.reason, from, to: f.target! };
      case 'unchanged':
        return { path: f.path, action: 'unchanged', reason: f.reason, from, to: from };
      case 'unrestorable':
      case 'refused':
        return { path: f.path, action: 'unrestorable', reason: f.reason, from, to: from };
      default:
        return { path: f.path, action: 'kept', reason: f.reason, from, to: from };
    }
  });
}

/** The writes a restore makes: path → the version to write (absent = delete). */
export function restoreWrites(plan: RestorePlan, overwrite: ReadonlySet<string>): Map<string, FileVersion> {
  const writes = new Map<string, FileVersion>();
  for (const f of plan.files) {
    if (overwrite.has(f.path) && f.overwritable) writes.set(f.path, f.checkpoint);
    else if ((f.action === 'revert' || f.action === 'partial') && f.target) writes.set(f.path, f.target);
  }
  return writes;
}

/**
 * The user's ticks in the preview: a default write left unticked is kept ("you chose to keep it"),
 * a ticked overwritable file is overwritten with its checkpoint version; other ticks mean nothing.
 */
export function applyChoices(
  plan: RestorePlan,
  ticked: ReadonlySet<string>,
): { plan: RestorePlan; overwrite: Set<string> } {
  const overwrite = new Set<string>();
  const files = plan.files.map((f): PlannedFile => {
    const isDefault = f.action === 'revert' || f.action === 'partial';
    if (isDefault && !ticked.has(f.path))
      return {
        ...f,
        action: 'conflict',
        reason: `you chose to keep it (${f.reason})`,
        target: null,
        overwritable: false,
      };
    if (!isDefault && f.overwritable && ticked.has(f.path)) overwrite.add(f.path);
    return f;
  });
  return { plan: { ...plan, files }, overwrite };
}

/** Files a preview ticks by default. */
export function defaultTicks(plan: RestorePlan): Set<string> {
  return new Set(plan.files.filter((f) => f.action === 'revert' || f.action === 'partial').map((f) => f.path));
}
