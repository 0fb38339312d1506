// Model text → safe HTML: marked renders Markdown, DOMPurify removes anything executable (model
// output is untrusted), highlight.js colours code blocks with the theme's colours (runView.css) —
// once its own script has loaded (highlighter.ts): the first paint does not wait for it.
//
// Each is bounded, as model text can be made to be slow or to throw: marked renders the text's
// first MARKDOWN_MAX_CHARS and gives up after MARKDOWN_BUDGET_MS (nested emphasis, brackets or
// lists take time that grows with the square of their size, and overflow the stack when deep);
// long code blocks are not coloured. What is not rendered is shown as plain text, with a note.
//
// The sanitizer is an allow-list: Markdown's own elements, and no attribute the view's code, its
// styles or the tests select by (class, id, style, role, aria-*, data-*), so the model cannot draw
// a look-alike approval card with working styles that the view — or a test — would take for ours.
// The one class kept is highlight.js's (hljs-*, language-*), on code and span only.
import DOMPurify, { type Config, type DOMPurify as Purifier } from 'dompurify';
import { Marked } from 'marked';
import { count } from '../../../src/common/format';
import { reasonOf, renderNote } from './dom';
import type { Highlighter } from './highlighter';

/** Markdown is rendered for an item's text up to this; the rest is shown as plain text. */
export const MARKDOWN_MAX_CHARS = 10_000;
/** Longest marked may take on one text before it is shown as plain text instead. */
export const MARKDOWN_BUDGET_MS = 100;
/** Longer code is shown plain: colouring is slow on long code, in some languages more than others. */
export const HIGHLIGHT_MAX_CHARS = 5_000;
/** Longest `highlightIn` colours code at once; what is left stays plain. */
const HIGHLIGHT_BUDGET_MS = 50;

const now = () => globalThis.performance.now();

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

/** When the text being rendered runs out of time (Infinity: none is). */
let deadline = Infinity;

class OverBudget extends Error {
  constructor() {
    super(`it takes longer than ${MARKDOWN_BUDGET_MS} ms to render as Markdown`);
  }
}

/**
 * marked asks an extension's tokenizer first at every position of the text it lexes, block and
 * inline: checked there, the budget ends the lexing of any text shortly after it runs out (the slow
 * inputs spend their time over many positions, not in one).
 */
function watch(): undefined {
  if (now() > deadline) throw new OverBudget();
  return undefined;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  extensions: [
    { name: 'budget', level: 'block', tokenizer: watch },
    { name: 'budget', level: 'inline', tokenizer: watch },
  ],
  renderer: {
    code({ text, lang }) {
      const name = lang?.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
      if (!name || text.length > HIGHLIGHT_MAX_CHARS || now() > deadline)
        return `<pre><code class="hljs">${escapeHtml(text)}</code></pre>`;
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

// The first text marked lexes compiles its rules, which can take longer than the budget: done now,
// not charged to a model's text.
marked.parse('# a\n\n*b* **c** _d_ ~~e~~ `f` [g](h) <i>\n\n- j\n  1. k\n\n> l\n\n| m |\n| - |\n| n |\n\n```\no\n```', {
  async: false,
});

const SANITIZE: Config & { RETURN_DOM_FRAGMENT: true } = {
  ALLOWED_TAGS: [
    ...['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'code', 'span'],
    ...['em', 'strong', 'b', 'i', 'u', 'del', 's', 'mark', 'kbd', 'sub', 'sup', 'a'],
    ...['ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'details', 'summary'],
  ],
  ALLOWED_ATTR: ['href', 'title', 'align', 'start', 'colspan', 'rowspan', 'class'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  // The sanitized nodes themselves, not their HTML parsed once more by innerHTML: no second parse to
  // pay for, and none that could read the markup differently from the tree that was checked.
  RETURN_DOM_FRAGMENT: true,
};

/** highlight.js's class names (`hljs-title function_`, `language-ts`); nothing the view selects by. */
const HLJS_CLASS = /^(?:hljs(?:-[a-z0-9_-]+)?|language-[a-z0-9_+#-]+|[a-z]+_)$/i;

const purifiers = new WeakMap<object, Purifier>();

/** One DOMPurify of our own (its hook and config are not shared) per window that runs us: the webview's, or a test's DOM. */
function sanitizer(): Purifier {
  const win = (globalThis as { window?: object }).window ?? globalThis;
  let p = purifiers.get(win);
  if (p) return p;
  p = DOMPurify(win as Parameters<typeof DOMPurify>[0]);
  // Set once: a config handed to each sanitize() is parsed again at every call.
  p.setConfig(SANITIZE);
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

/** `html`'s nodes as the allow-list leaves them. */
function sanitize(html: string): DocumentFragment {
  return sanitizer().sanitize(html, SANITIZE);
}

/**
 * Model text as the view shows it, into `body`: sanitized Markdown for its first
 * MARKDOWN_MAX_CHARS, rendered within MARKDOWN_BUDGET_MS; whatever is not rendered (the rest, or
 * all of it when it could not be) as plain text, after a note that says why.
 */
export function renderMarkdown(body: HTMLElement, text: string): void {
  const end = text.length > MARKDOWN_MAX_CHARS ? splitAt(text) : text.length;
  let html: DocumentFragment;
  try {
    deadline = now() + MARKDOWN_BUDGET_MS;
    html = sanitize(marked.parse(text.slice(0, end), { async: false }) as string);
  } catch (err) {
    return plainText(body, `This text could not be rendered: ${reasonOf(err)}. It is shown as plain text.`, text);
  } finally {
    deadline = Infinity;
  }
  body.replaceChildren(html);
  const rest = text.length - end;
  if (rest > 0)
    plainText(
      body,
      `Markdown is rendered for the first ${count(end)} characters; the other ${count(rest)} are shown as plain text.`,
      text.slice(end),
    );
}

/** Where a long text's rendered part ends: at a paragraph's or a line's end near the bound, if there is one. */
function splitAt(text: string): number {
  const paragraph = text.lastIndexOf('\n\n', MARKDOWN_MAX_CHARS);
  if (paragraph > MARKDOWN_MAX_CHARS / 2) return paragraph;
  const line = text.lastIndexOf('\n', MARKDOWN_MAX_CHARS);
  if (line > MARKDOWN_MAX_CHARS / 2) return line;
  const c = text.charCodeAt(MARKDOWN_MAX_CHARS - 1);
  return c >= 0xd800 && c <= 0xdbff ? MARKDOWN_MAX_CHARS - 1 : MARKDOWN_MAX_CHARS;
}

function plainText(body: HTMLElement, note: string, text: string): void {
  const doc = body.ownerDocument;
  const plain = doc.createElement('div');
  plain.className = 'plain-text';
  plain.textContent = text;
  body.append(renderNote(note, doc), plain);
}

/**
 * Shows `text` in a code element as `language`: highlighted now if the highlighter is there, else
 * as plain text marked with its language, coloured by `highlightIn` when the highlighter arrives;
 * plain when longer than `maxChars`.
 */
export function setCode(code: HTMLElement, text: string, language: string, maxChars = HIGHLIGHT_MAX_CHARS): void {
  code.textContent = text;
  if (text.length > maxChars) return void (code.className = 'hljs');
  code.className = `language-${language}`;
  if (highlighter) colour(code, language);
  else want();
}

/** Colours the code elements under `root` drawn before the highlighter arrived, for at most `budgetMs`. */
export function highlightIn(root: ParentNode, budgetMs = HIGHLIGHT_BUDGET_MS): void {
  if (!highlighter) return;
  const until = now() + budgetMs;
  for (const code of root.querySelectorAll<HTMLElement>('code[class^="language-"]:not(.hljs)')) {
    if (now() > until) return; // the rest stays plain
    const language = /^language-([a-z0-9_+#-]+)$/.exec(code.className)?.[1];
    if (language) colour(code, language);
  }
}

function colour(code: HTMLElement, language: string): void {
  let html: string | undefined;
  try {
    html = highlighter!.highlight(code.textContent ?? '', language);
  } catch {
    html = undefined; // stays plain: colour is not worth losing the code, or the view, over
  }
  if (html === undefined) return void code.classList.add('hljs');
  // highlight.js escapes the text and adds only its spans: sanitized all the same, as model text.
  code.replaceChildren(sanitize(html));
  code.className = `hljs language-${language}`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
