// An item that could not be drawn: its text as plain text, with why, where the item stands; the
// rest of the view is drawn as usual. A waiting call stays a card with its decision buttons.
import type { TranscriptItem } from '../../../src/views/run/items';
import { el, reasonOf, renderNote } from './dom';
import { type Actions, approvalControls, cardShell, retryControls } from './toolCard';

/** Drawn only from the item's strings, so it cannot fail the way the item's own drawing did. */
export function failedItem(item: TranscriptItem, err: unknown, a: Actions): HTMLElement {
  const root = item.kind === 'tool' ? cardShell(item) : el('div', { class: `failed-item ${item.kind}` });
  root.classList.add('render-failed');
  root.append(renderNote(`This ${item.kind} item could not be rendered: ${reasonOf(err)}`));
  root.append(el('pre', { class: 'raw' }, rawText(item)));
  if (item.kind === 'tool' && item.approval?.pending && !a.readOnly()) {
    try {
      root.append(...(item.approval?.retry ? retryControls : approvalControls)(item, a, () => root));
    } catch (e) {
      root.append(renderNote(`Its approval could not be drawn: ${reasonOf(e)}. Reload the view.`));
    }
  }
  return root;
}

function rawText(item: TranscriptItem): string {
  switch (item.kind) {
    case 'assistant':
      return item.reasoning ? `${item.text}\n\nReasoning:\n${item.reasoning}` : item.text;
    case 'user':
      return item.text;
    case 'tool':
      return [item.title, item.argumentsJson, item.output ?? ''].filter(Boolean).join('\n\n');
    default:
      try {
        return JSON.stringify(item, null, 2);
      } catch (err) {
        return reasonOf(err);
      }
  }
}
