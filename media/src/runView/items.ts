// Renders transcript items (one function per kind). Tool cards, with their inline approval, are
// in toolCard.ts; actions go to the host through `Actions`.
import type { CondenseItem, TranscriptItem, WaypointItem } from '../../../src/views/run/items';
import { count } from '../../../src/common/format';
import { badge, button, el, icon } from './dom';
import { renderMarkdown } from './markdown';
import { restoreCard } from './restoreCard';
import { type Actions, toolCard } from './toolCard';

export type { Actions };

export function renderItem(item: TranscriptItem, a: Actions): HTMLElement {
  switch (item.kind) {
    case 'turn': {
      const root = el('div', { class: `turn${item.turn === 1 ? ' first' : ''}` });
      if (item.turn > 1)
        root.append(
          icon('comment-discussion'),
          el('span', {}, `Turn ${item.turn}${item.continued ? ' · follow-up' : ''}`),
        );
      return root;
    }
    case 'user': {
      const root = el('div', { class: `msg user${item.queued ? ' queued' : ''}` });
      const head = el('div', { class: 'who' });
      head.append(icon('account'), el('span', {}, 'You'));
      if (item.queued) head.append(badge('queued', 'info', 'Stored; delivered to the agent at its next step'));
      root.append(head, el('div', { class: 'text' }, item.text));
      return root;
    }
    case 'assistant':
      return assistant(item.text, item.reasoning, { final: item.final, streaming: false });
    case 'tool':
      return toolCard(item, a);
    case 'waypoint':
      return waypoint(item, a);
    case 'status': {
      const root = el('div', { class: `status state-${item.state}`, role: 'status' });
      const head = el('div', { class: 'head' });
      head.append(
        icon(
          item.state === 'failed' || item.state === 'paused_error'
            ? 'error'
            : item.state === 'interrupted'
              ? 'debug-disconnect'
              : 'debug-pause',
        ),
      );
      head.append(el('strong', {}, item.state.replace(/_/g, ' ')));
      root.append(head);
      if (item.detail) root.append(el('p', {}, item.detail));
      if (item.resumable) root.append(button('Resume', 'debug-continue', () => a.run(item.runId, 'resume')));
      return root;
    }
    case 'restore':
      return restoreCard(item, a);
    case 'condense':
      return condenseMarker(item, a);
  }
}

/**
 * "Condensed here": from this point the model saw a summary in place of the turns above (which
 * stay in the run, and in this view). Expands to the summary; Undo condense while it applies.
 */
function condenseMarker(item: CondenseItem, a: Actions): HTMLElement {
  const root = el('details', { class: `condense${item.undone ? ' undone' : ''}`, 'data-condense-id': item.condenseId });
  const head = el('summary', { class: 'label' });
  const size =
    item.tokensBefore !== null
      ? `${count(item.tokensBefore)} → ${count(item.tokensAfter)} tokens`
      : `${count(item.tokensAfter)} tokens`;
  head.append(
    icon('fold'),
    el('strong', {}, item.undone ? 'Condensed here · undone' : 'Condensed here'),
    el(
      'span',
      { class: 'summary' },
      ` messages ${item.from}–${item.through} summarized for the model (${size}${item.reason === 'overflow' ? ', the model refused the longer request' : ''}); the history above is kept`,
    ),
  );
  root.append(head);
  const body = el('div', { class: 'condense-body' });
  body.append(el('div', { class: 'text' }, item.summary));
  if (item.undoable && !a.readOnly()) {
    const undo = button(
      'Undo condense',
      'discard',
      () => {
        undo.setAttribute('disabled', '');
        a.condense(item.runId, item.condenseId);
      },
      { secondary: true },
    );
    undo.title = 'The next request gets the context from before this condense back';
    body.append(undo);
  }
  root.append(body);
  return root;
}

/**
 * A step's marker: its checkpoints (each opens), and what can be done from where the step began —
 * fork (the action asks: conversation only, or conversation and files) and restore the files,
 * offered only when the agent changed files after it, disabled with the host's reason while it cannot.
 */
function waypoint(item: WaypointItem, a: Actions): HTMLElement {
  const root = el('div', { class: 'waypoint', 'data-step': String(item.step), 'data-run-id': item.runId });
  const label = el('span', { class: 'label' });
  label.append(
    icon('location'),
    el('span', { class: 'step' }, `Step ${item.step}`),
    el('span', { class: 'summary' }, item.summary),
  );
  const phases = el('span', { class: 'phases' });
  for (const p of item.phases) {
    const chip = el(
      'button',
      { class: 'phase', title: `Open checkpoint #${p.seq} (${p.phase})` },
      p.phase.replace(/_/g, ' '),
    );
    chip.addEventListener('click', () => a.waypoint(item.runId, p.seq, 'openCheckpoint'));
    phases.append(chip);
  }
  root.append(label, phases);
  const seq = item.seq;
  if (seq === null) return root;
  const forkTitle = `A new run from checkpoint #${seq}, where step ${item.step} began${item.filesAfter ? ' (conversation only, or conversation and files)' : ''}`;
  root.append(linkButton('Fork from here', 'repo-forked', forkTitle, () => a.waypoint(item.runId, seq, 'forkHere')));
  if (item.filesAfter) {
    const blocked = a.whyNot(item.runId).restore;
    const title =
      blocked ??
      `Put back the files the agent changed from step ${item.step} on, as they were at checkpoint #${seq} (a preview shows every file first)`;
    const restore = linkButton('Restore files to here', 'discard', title, () =>
      a.waypoint(item.runId, seq, 'restoreFiles'),
    );
    restore.classList.add('restore-here');
    if (blocked) restore.setAttribute('disabled', '');
    root.append(restore);
  }
  return root;
}

function linkButton(text: string, iconName: string, title: string, onClick: () => void): HTMLElement {
  const b = el('button', { class: 'phase action', title });
  b.append(icon(iconName), document.createTextNode(` ${text}`));
  b.addEventListener('click', onClick);
  return b;
}

export function assistant(
  text: string,
  reasoning: string | null,
  o: { final: boolean; streaming: boolean },
): HTMLElement {
  const root = el('div', { class: `msg assistant${o.final ? ' final' : ''}${o.streaming ? ' streaming' : ''}` });
  const head = el('div', { class: 'who' });
  head.append(icon('hubot'), el('span', {}, o.final ? 'Final answer' : 'Agent'));
  if (o.streaming) head.append(icon('loading', 'codicon-modifier-spin'));
  root.append(head);
  if (reasoning) {
    const details = el('details', { class: 'reasoning' });
    details.append(el('summary', {}, 'Reasoning'), el('div', { class: 'text' }, reasoning));
    root.append(details);
  }
  const body = el('div', { class: 'markdown' });
  renderMarkdown(body, text);
  root.append(body);
  return root;
}
