// Model text → safe HTML: marked renders Markdown, DOMPurify removes anything executable (model
// output is untrusted), highlight.js colours code blocks with the theme's colours (runView.css).
// Only the languages registered here are bundled.
//
// The sanitizer is an allow-list: Markdown's own elements, and no attribute the view's code, its
// styles or the tests select by (class, id, style, role, aria-*, data-*), so the model cannot draw
// a look-alike approval card with working styles that the view — or a test — would take for ours.
// The one class kept is highlight.js's (hljs-*, language-*), on code and span only.
import DOMPurify, { type Config, type DOMPurify as Purifier } from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

const languages = { bash, css, diff, go, java, javascript, json, markdown, python, rust, shell, typescript, xml, yaml };
let registered = false;
/**
 * highlight.js builds a language's grammar when it is registered: that is done when the first code
 * block is drawn, not when the view's script starts (its first paint waits for nothing it may not show).
 */
function highlighter(): typeof hljs {
  if (registered) return hljs;
  registered = true;
  for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
  for (const [alias, name] of [
    ['js', 'javascript'],
    ['ts', 'typescript'],
    ['sh', 'bash'],
    ['html', 'xml'],
    ['py', 'python'],
    ['yml', 'yaml'],
    ['console', 'shell'],
  ] as const) {
    hljs.registerAliases(alias, { languageName: name });
  }
  return hljs;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const h = highlighter();
      const language = lang && h.getLanguage(lang) ? lang : undefined;
      const html = language ? h.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
      return `<pre><code class="hljs${language ? ` language-${language}` : ''}">${html}</code></pre>`;
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

export function highlight(code: string, language: string): string {
  const h = highlighter();
  return h.getLanguage(language) ? h.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
