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
