// Renders transcript items (one function per kind). Tool cards, with their inline approval, are
// in toolCard.ts; actions go to the host through `Actions`.
import type { TranscriptItem } from '../../../src/views/run/items';
import { badge, button, el, icon } from './dom';
import { renderMarkdown } from './markdown';
import { type Actions, toolCard } from './toolCard';

export type { Actions };

export function renderItem(item: TranscriptItem, a: Actions): HTMLElement {
  switch (item.kind) {
    case 'turn': {
      const root = el('div', { class: `turn${item.turn === 1 ? ' first' : ''}` });
      if (item.turn > 1) root.append(icon('comment-discussion'), el('span', {}, `Turn ${item.turn}${item.continued ? ' · follow-up' : ''}`));
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
    case 'waypoint': {
      const root = el('div', { class: 'waypoint', 'data-step': String(item.step), 'data-run-id': item.runId });
      const label = el('span', { class: 'label' });
      label.append(icon('location'), el('span', { class: 'step' }, `Step ${item.step}`), el('span', { class: 'summary' }, item.summary));
      const phases = el('span', { class: 'phases' });
      for (const p of item.phases) {
        const chip = el('button', { class: 'phase', title: `Open checkpoint #${p.seq} (${p.phase})` }, p.phase.replace(/_/g, ' '));
        chip.addEventListener('click', () => a.waypoint(item.runId, p.seq, 'openCheckpoint'));
        phases.append(chip);
      }
      const last = item.phases[item.phases.length - 1];
      const fork = el('button', { class: 'phase fork', title: 'A new run continuing from this step' });
      fork.append(icon('repo-forked'), document.createTextNode(' Fork from here'));
      if (last) fork.addEventListener('click', () => a.waypoint(item.runId, last.seq, 'forkHere'));
      root.append(label, phases, ...(last ? [fork] : []));
      return root;
    }
    case 'status': {
      const root = el('div', { class: `status state-${item.state}`, role: 'status' });
      const head = el('div', { class: 'head' });
      head.append(icon(item.state === 'failed' || item.state === 'paused_error' ? 'error' : item.state === 'interrupted' ? 'debug-disconnect' : 'debug-pause'));
      head.append(el('strong', {}, item.state.replace(/_/g, ' ')));
      root.append(head);
      if (item.detail) root.append(el('p', {}, item.detail));
      if (item.resumable) root.append(button('Resume', 'debug-continue', () => a.run(item.runId, 'resume')));
      return root;
    }
  }
}

export function assistant(text: string, reasoning: string | null, o: { final: boolean; streaming: boolean }): HTMLElement {
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
  body.innerHTML = renderMarkdown(text);
  root.append(body);
  return root;
}
