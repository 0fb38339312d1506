// Small DOM helpers: text is always set with textContent (no HTML from data, except sanitized Markdown).
// The VS Code elements (vscode-button …) are registered by the entry script (runView.ts).

export function el(tag: string, attrs: Record<string, string> = {}, text?: string): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

export function icon(name: string, extra = ''): HTMLElement {
  return el('span', { class: `codicon codicon-${name} ${extra}`.trim(), 'aria-hidden': 'true' });
}

export function button(
  label: string,
  iconName: string,
  onClick: () => void,
  opts: { secondary?: boolean; title?: string } = {},
): HTMLElement {
  const b = el(
    'vscode-button',
    { icon: iconName, ...(opts.secondary ? { secondary: '' } : {}), ...(opts.title ? { title: opts.title } : {}) },
    label,
  );
  b.addEventListener('click', (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

export function badge(text: string, cls: string, title?: string): HTMLElement {
  return el('span', { class: `badge ${cls}`, ...(title ? { title } : {}) }, text);
}

/**
 * Calls `fn` once the coming frame is on the screen: a task queued from that frame's callbacks
 * (which run before it is drawn) runs after it is.
 */
export function afterNextPaint(win: Window, fn: () => void): void {
  win.requestAnimationFrame(() => win.setTimeout(fn, 0));
}

/** Says why something is shown as plain text, or not at all ("… could not be rendered: …"). */
export function renderNote(text: string, doc: Document = document): HTMLElement {
  const p = doc.createElement('p');
  p.className = 'render-note';
  const sign = doc.createElement('span');
  sign.className = 'codicon codicon-warning';
  sign.setAttribute('aria-hidden', 'true');
  p.append(sign, doc.createTextNode(` ${text}`));
  return p;
}

/** An error's first line, short (marked, for one, adds a request to report it to them). */
export function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? '').replace(/[.\s]+$/, '').slice(0, 200) || 'unknown error';
}
