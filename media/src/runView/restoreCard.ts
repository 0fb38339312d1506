// A restore of the run's files, as a compact card at its place in the transcript: what it restored
// to, the counts, each file with what happened and why, what the journal could not know, the fork
// it made, and Undo (a restore to the checkpoint it followed, with the same preview).
import type { RestoreItem } from '../../../src/views/run/items';
import { count } from '../../../src/common/format';
import { button, el, icon } from './dom';
import type { Actions } from './toolCard';

/** Per recorded action, as the restore preview shows the planned ones. */
const FILE_ICONS: Record<string, string> = {
  reverted: 'discard',
  partly_reverted: 'discard',
  overwritten: 'replace-all',
  kept: 'warning',
  unrestorable: 'circle-slash',
  unchanged: 'check',
};

export function restoreCard(r: RestoreItem, a: Actions): HTMLElement {
  const root = el('section', { class: 'restore', 'data-run-id': r.runId, 'data-restore-id': r.restoreId });
  const head = el('div', { class: 'head' });
  const where = r.toStep === null ? `checkpoint #${r.toSeq}` : `step ${r.toStep}`;
  head.append(icon('history'), el('strong', {}, `Files restored to ${where}`));
  if (r.toStep !== null) head.append(el('span', { class: 'desc' }, `(checkpoint #${r.toSeq})`));
  head.append(
    el(
      'span',
      { class: 'when', title: new Date(r.createdMs).toLocaleString() },
      new Date(r.createdMs).toLocaleTimeString(),
    ),
  );
  root.append(head, el('p', { class: 'counts' }, r.counts));

  if (r.files.length > 0) {
    const list = el('ul', { class: 'files' });
    for (const f of r.files) {
      const li = el('li', { class: `file action-${f.action}`, title: f.reason });
      li.append(
        icon(FILE_ICONS[f.action] ?? 'file'),
        el('span', { class: 'path' }, f.path),
        el('span', { class: 'what' }, f.what),
        el('span', { class: 'why' }, f.reason),
      );
      list.append(li);
    }
    root.append(list);
  }
  if (r.moreFiles > 0)
    root.append(el('p', { class: 'more' }, `and ${count(r.moreFiles)} more (Show details lists them all)`));
  for (const n of r.notes) {
    const p = el('p', { class: 'note' });
    p.append(icon('info'), el('span', {}, n));
    root.append(p);
  }
  if (r.forkedRunId) {
    const p = el('p', { class: 'fork' });
    const link = el('a', { href: '#', title: `Open run ${r.forkedRunId}` }, 'Open the fork');
    link.addEventListener('click', (e) => (e.preventDefault(), a.restore(r.runId, r.restoreId, 'openFork')));
    p.append(icon('repo-forked'), el('span', {}, 'The conversation continues in a fork. '), link);
    root.append(p);
  }

  const actions = el('div', { class: 'actions' });
  if (r.undoable) {
    const blocked = a.whyNot(r.runId).restore;
    const undo = button('Undo this restore', 'discard', () => a.restore(r.runId, r.restoreId, 'undo'), {
      secondary: true,
      title: blocked ?? 'Put back what this restore replaced (a preview shows every file first)',
    });
    if (blocked) undo.setAttribute('disabled', '');
    actions.append(undo);
  }
  actions.append(
    button('Show details', 'info', () => a.restore(r.runId, r.restoreId, 'showDetails'), { secondary: true }),
  );
  root.append(actions);
  return root;
}
