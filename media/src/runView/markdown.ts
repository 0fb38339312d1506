// Model text → safe HTML: marked renders Markdown, DOMPurify removes anything executable (model
// output is untrusted), highlight.js colours code blocks with the theme's colours (runView.css) —
// once its own script has loaded (highlighter.ts): the first paint does not wait for it.
//
// The sanitizer is an allow-list: Markdown's own elements, and no attribute the view's code, its
// styles or the tests select by (class, id, style, role, aria-*, data-*), so the model cannot draw
// a look-alike approval card with working styles that the view — or a test — would take for ours.
// The one class kept is highlight.js's (hljs-*, language-*), on code and span only.
import DOMPurify, { type Config, type DOMPurify as Purifier } from 'dompurify';
import { Marked } from 'marked';
import type { Highlighter } from './highlighter';

/**
 * The highlighter, once it is there (its own script, loaded when the first code block is drawn:
 * the first paint does not wait for it). Until then code is drawn as plain text with its language
 * class, and coloured in place when it arrives (`highlightIn`).
 */
let highlighter: Highlighter | undefined;
let wanted: (() => void) | undefined;

/** Hands the highlighter over (the page when its script ran; unit tests at once, or none again). */
export function setHighlighter(h: Highlighter | undefined): void {
  highlighter = h;
}

/** Called once, at the first code block drawn before the highlighter is there. */
export function whenHighlighterWanted(load: () => void): void {
  wanted = load;
}

function want(): void {
  const load = wanted;
  wanted = undefined;
  load?.();
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const name = lang?.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
      if (!name) return `<pre><code class="hljs">${escapeHtml(text)}</code></pre>`;
      if (!highlighter) {
        want();
        // Coloured in place when the highlighter arrives (highlightIn); the class says which language.
        return /^[a-z0-9_+#-]+$/.test(name)
          ? `<pre><code class="language-${name}">${escapeHtml(text)}</code></pre>`
          : `<pre><code class="hljs">${escapeHtml(text)}</code></pre>`;
      }
      const html = highlighter.highlight(text, name);
      return html === undefined
        ? `<pre><code class="hljs">${escapeHtml(text)}</code></pre>`
        : `<pre><code class="hljs language-${name}">${html}</code></pre>`;
    },
  },
});

const SANITIZE: Config = {
  ALLOWED_TAGS: [
    ...['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'code', 'span'],
    ...['em', 'strong', 'b', 'i', 'u', 'del', 's', 'mark', 'kbd', 'sub', 'sup', 'a'],
    ...['ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'details', 'summary'],
  ],
  ALLOWED_ATTR: ['href', 'title', 'align', 'start', 'colspan', 'rowspan', 'class'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
};

/** highlight.js's class names (`hljs-title function_`, `language-ts`); nothing the view selects by. */
const HLJS_CLASS = /^(?:hljs(?:-[a-z0-9_-]+)?|language-[a-z0-9_+#-]+|[a-z]+_)$/i;

const purifiers = new WeakMap<object, Purifier>();

/** One DOMPurify of our own (its hook is not shared) per window that runs us: the webview's, or a test's DOM. */
function sanitizer(): Purifier {
  const win = (globalThis as { window?: object }).window ?? globalThis;
  let p = purifiers.get(win);
  if (p) return p;
  p = DOMPurify(win as Parameters<typeof DOMPurify>[0]);
  p.addHook('uponSanitizeAttribute', (node, data) => {
    if (data.attrName !== 'class') return;
    const tokens = data.attrValue.split(/\s+/).filter(Boolean);
    const highlighted =
      tokens.length > 0 && tokens.every((t) => HLJS_CLASS.test(t)) && /^hljs|^language-/i.test(tokens[0]!);
    if (highlighted && (node.nodeName === 'SPAN' || node.nodeName === 'CODE')) data.attrValue = tokens.join(' ');
    else data.keepAttr = false;
  });
  purifiers.set(win, p);
  return p;
}

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false }) as string;
  return sanitizer().sanitize(html, SANITIZE);
}

/**
 * Shows `text` in a code element as `language`: highlighted now if the highlighter is there, else
 * as plain text marked with its language, coloured by `highlightIn` when the highlighter arrives.
 */
export function setCode(code: HTMLElement, text: string, language: string): void {
  code.className = `language-${language}`;
  code.textContent = text;
  if (highlighter) colour(code, language);
  else want();
}

/** Colours the code elements under `root` drawn before the highlighter arrived. */
export function highlightIn(root: ParentNode): void {
  if (!highlighter) return;
  for (const code of root.querySelectorAll<HTMLElement>('code[class^="language-"]:not(.hljs)')) {
    const language = /^language-([a-z0-9_+#-]+)$/.exec(code.className)?.[1];
    if (language) colour(code, language);
  }
}

function colour(code: HTMLElement, language: string): void {
  const html = highlighter!.highlight(code.textContent ?? '', language);
  if (html === undefined) return void code.classList.add('hljs');
  // highlight.js escapes the text and adds only its spans: sanitized all the same, as model text.
  code.innerHTML = sanitizer().sanitize(html, SANITIZE);
  code.className = `hljs language-${language}`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
