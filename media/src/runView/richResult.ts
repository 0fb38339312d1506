// An external tool's exact result in its card: text, images, resources, links and structured
// content, fetched from the host when the card is open (the transcript item carries only text).
import type { ToolItem } from '../../../src/views/run/items';
import type { RichPart, RichResult } from '../../../src/views/run/richResult';
import { isSafeImage } from '../../../src/views/run/safeImage';
import { count } from '../../../src/common/format';
import { el } from './dom';

/** Where the result comes from: the card's actions (toolCard.ts Actions) ask the host for it. */
export interface ResultSource {
  toolResult(runId: string, toolCallId: string): Promise<RichResult>;
}

export function richBlock(t: ToolItem, a: ResultSource): HTMLElement {
  const box = el('div', { class: 'rich', 'data-state': 'loading' });
  box.append(el('div', { class: 'label' }, 'Result as the tool returned it'));
  a.toolResult(t.runId, t.toolCallId).then(
    (r: RichResult) => {
      // Text alone is what the Result above already shows.
      if (!r.isError && r.structured === null && r.parts.every((p) => p.type === 'text')) return box.remove();
      box.setAttribute('data-state', 'shown');
      if (r.isError) box.append(el('p', { class: 'reason' }, 'The tool reported an error (isError).'));
      for (const p of r.parts) box.append(part(p));
      if (r.structured !== null)
        box.append(el('div', { class: 'label' }, 'Structured content'), el('pre', { class: 'args' }, r.structured));
    },
    (err: Error) => {
      box.setAttribute('data-state', 'error');
      box.append(el('p', { class: 'error' }, err.message));
    },
  );
  return box;
}

function part(p: RichPart): HTMLElement {
  switch (p.type) {
    case 'text':
      return el('pre', { class: 'output' }, p.text);
    case 'image': {
      if (!isSafeImage(p.mimeType, p.data)) return el('p', { class: 'reason' }, `${p.mimeType} image, not shown`);
      const img = el('img', { class: 'rich-image', alt: `image (${p.mimeType})` }) as HTMLImageElement;
      img.src = `data:${p.mimeType};base64,${p.data}`;
      return img;
    }
    case 'media':
      return el('p', { class: 'reason' }, `${p.mimeType || 'binary'} content, ${count(p.bytes)} bytes`);
    case 'resource': {
      const box = el('div', { class: 'resource' });
      box.append(el('div', { class: 'label' }, `Resource ${p.uri}${p.mimeType ? ` (${p.mimeType})` : ''}`));
      if (p.text !== null) box.append(el('pre', { class: 'output' }, p.text));
      else if (p.bytes !== null) box.append(el('p', { class: 'reason' }, `${count(p.bytes)} bytes`));
      return box;
    }
    case 'link':
      return el('p', { class: 'reason' }, `Link: ${p.name} — ${p.uri}${p.description ? ` (${p.description})` : ''}`);
  }
}
