// Restores in the transcript (vscode-free, unit-tested): each restore of a run's files is a card at
// its place — after the step of the checkpoint it followed — saying what it did, per file and why,
// with the words the tree and the details document use (views/restore/summary.ts).
import { restoreWrote } from '../../actions/restore/plan';
import type { CheckpointRecord, RestoreRecord } from '../../store/api/schema';
import { RESTORE_ACTION_LABELS, restoreCounts } from '../restore/summary';
import type { RestoreItem } from './items';

/** Files listed in a card; the rest are counted (the details document has them all). */
export const RESTORE_CARD_FILES = 20;

type Records = readonly Pick<CheckpointRecord, 'seq' | 'step'>[];

export function restoreItem(runId: string, r: RestoreRecord, records: Records): RestoreItem {
  return {
    kind: 'restore',
    key: `${runId}:r:${r.id}`,
    runId,
    restoreId: r.id,
    toSeq: r.to_seq,
    toStep: records.find((c) => c.seq === r.to_seq)?.step ?? null,
    createdMs: r.created_ms,
    counts: restoreCounts(r),
    files: r.files
      .slice(0, RESTORE_CARD_FILES)
      .map((f) => ({ path: f.path, action: f.action, what: RESTORE_ACTION_LABELS[f.action], reason: f.reason })),
    moreFiles: Math.max(0, r.files.length - RESTORE_CARD_FILES),
    notes: r.notes,
    forkedRunId: r.forked_run_id,
    undoable: restoreWrote(r),
  };
}

/**
 * The run's items with a card per restore, each before the first waypoint of a step that began
 * after the restore's checkpoint (at the end when the run has not gone on since), oldest first.
 * `card` makes the list's entry of a restore item (the transcript places planned items).
 */
export function placeRestores<T extends { kind: string; runId: string; step?: number }>(
  items: readonly T[],
  restores: readonly RestoreRecord[],
  records: Records,
  card: (item: RestoreItem) => T,
): T[] {
  if (restores.length === 0) return [...items];
  const runId = items[0]?.runId ?? '';
  const before = new Map<number, T[]>();
  const sorted = [...restores].sort((a, b) => a.checkpoint_seq - b.checkpoint_seq || a.created_ms - b.created_ms);
  for (const r of sorted) {
    const step = stepAt(records, r.checkpoint_seq);
    const at = items.findIndex((i) => i.kind === 'waypoint' && i.step! > step);
    const index = at === -1 ? items.length : at;
    before.set(index, [...(before.get(index) ?? []), card(restoreItem(runId, r, records))]);
  }
  const out: T[] = [];
  for (let i = 0; i <= items.length; i++) {
    out.push(...(before.get(i) ?? []));
    if (i < items.length) out.push(items[i]!);
  }
  return out;
}

/** The step the run was in at checkpoint `seq` (records oldest first); 0 before any. */
function stepAt(records: Records, seq: number): number {
  let step = 0;
  for (const r of records) {
    if (r.seq > seq) break;
    step = r.step;
  }
  return step;
}
