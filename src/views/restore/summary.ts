// How a restore record reads for people: the notification's details, the tree's tooltip.
import type { RestoreRecord } from '../../store/api/schema';
import { escapeMarkdown } from '../shared/markdown';

export const RESTORE_ACTION_LABELS: Record<RestoreRecord['files'][number]['action'], string> = {
  reverted: 'restored',
  partly_reverted: 'restored partly',
  overwritten: 'overwritten by choice',
  kept: 'kept',
  unrestorable: 'cannot be restored',
  unchanged: 'already as at the checkpoint',
};

/** "3 restored · 1 kept" */
export function restoreCounts(r: RestoreRecord): string {
  const counts = new Map<string, number>();
  for (const f of r.files)
    counts.set(RESTORE_ACTION_LABELS[f.action], (counts.get(RESTORE_ACTION_LABELS[f.action]) ?? 0) + 1);
  return [...counts].map(([label, n]) => `${n} ${label}`).join(' · ') || 'no files to change';
}

export function restoreMarkdown(r: RestoreRecord): string {
  return [
    `# Files restored to checkpoint #${r.to_seq}`,
    '',
    `${new Date(r.created_ms).toLocaleString()} · ${restoreCounts(r)}${r.forked_run_id ? ` · conversation forked into run \`${r.forked_run_id}\`` : ''}`,
    '',
    '| file | what happened | why |',
    '|---|---|---|',
    ...r.files.map(
      (f) => `| ${escapeMarkdown(f.path)} | ${RESTORE_ACTION_LABELS[f.action]} | ${escapeMarkdown(f.reason)} |`,
    ),
    ...(r.notes.length
      ? ['', '**Not known to the journal**', '', ...r.notes.map((n) => `- ${escapeMarkdown(n)}`)]
      : []),
    '',
    `Recorded with the run as \`${r.id}\`. To undo it, restore the files to checkpoint #${r.checkpoint_seq} (the notification's Undo restore, or this entry's context menu in the Runs tree).`,
    'Files ignored by .gitignore or files.exclude, and node_modules, are never journaled or touched.',
  ].join('\n');
}
