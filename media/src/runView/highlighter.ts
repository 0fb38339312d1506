// highlight.js with the languages the view colours (runView.css has the theme's colours). A bundle
// of its own (media/src/runViewHighlight.ts), loaded when the first code block is drawn, so the
// view's first paint does not wait for it; the unit tests hand it to markdown.ts directly.
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

export interface Highlighter {
  /** The code as highlight.js's HTML (text escaped, spans with hljs-* classes); undefined for a language it does not know. */
  highlight(code: string, language: string): string | undefined;
}

const languages = { bash, css, diff, go, java, javascript, json, markdown, python, rust, shell, typescript, xml, yaml };

export function createHighlighter(): Highlighter {
  const h = hljs.newInstance();
  for (const [name, lang] of Object.entries(languages)) h.registerLanguage(name, lang);
  for (const [alias, name] of [
    ['js', 'javascript'],
    ['ts', 'typescript'],
    ['sh', 'bash'],
    ['html', 'xml'],
    ['py', 'python'],
    ['yml', 'yaml'],
    ['console', 'shell'],
  ] as const) {
    h.registerAliases(alias, { languageName: name });
  }
  return {
    highlight: (code, language) =>
      h.getLanguage(language) ? h.highlight(code, { language, ignoreIllegals: true }).value : undefined,
  };
}
