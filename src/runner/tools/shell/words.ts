// Turns a word of the syntax tree into the exact string a POSIX shell would pass to the program,
// or says why it cannot: only words that are literal in every shell qualify (no expansion, no glob,
// no brace or tilde expansion, no bash-only quoting). Quotes are resolved by the grammar's nodes;
// this only decodes backslashes inside the pieces the grammar already classified.
import type { ShellNode } from './grammar';

/** Something in a command line that keeps it from being read as plain words. */
export interface Obstacle {
  /** What it is, for a person: "a command substitution ($(…) or backticks)". */
  what: string;
  /** The source text it was seen in. */
  text: string;
}

export type WordReading = { value: string } | { obstacle: Obstacle };

/** Node types that are a word (or part of one), and what the others are called in an ask reason. */
export const DESCRIBED = new Map<string, string>(
  Object.entries({
    command_substitution: 'a command substitution ($(…) or backticks)',
    process_substitution: 'a process substitution (<(…) or >(…))',
    simple_expansion: 'a variable expansion ($name)',
    expansion: 'a parameter expansion (${…})',
    arithmetic_expansion: 'an arithmetic expansion ($((…)))',
    ansi_c_string: "ANSI-C quoting ($'…'), which sh reads differently from bash",
    translated_string: 'locale quoting ($"…")',
    brace_expression: 'a brace expansion ({…})',
    variable_assignment: 'a variable assignment (NAME=…)',
    heredoc_redirect: 'a here-document (<<)',
    herestring_redirect: 'a here-string (<<<)',
    function_definition: 'a function definition',
    subshell: 'a subshell ( … )',
    compound_statement: 'a brace group { … }',
    negated_command: 'a negation (!)',
    test_command: 'a test expression ([ … ] or [[ … ]])',
    declaration_command: 'a declaration (export, declare, local …)',
    unset_command: 'an unset command',
    comment: 'a comment, which may hide what follows it',
    if_statement: 'a control structure (if)',
    for_statement: 'a control structure (for)',
    c_style_for_statement: 'a control structure (for)',
    while_statement: 'a control structure (while/until)',
    case_statement: 'a control structure (case)',
    ERROR: 'text the shell grammar could not read',
  }),
);

export function describe(node: ShellNode): Obstacle {
  const what = node.isMissing
    ? `an unfinished construct (a missing "${node.type}")`
    : (DESCRIBED.get(node.type) ??
      (node.isNamed
        ? `a construct the policy does not accept (${node.type})`
        : node.type === '$'
          ? 'a $ the shell would expand (or $"…" locale quoting)'
          : `the operator "${node.type}"`));
  return { what, text: node.text };
}

/** Unquoted characters a shell would expand or treat as syntax: the word is not a plain literal. */
const GLOB = 'a glob pattern (*, ?, […]) the shell would expand';
const UNQUOTED_SPECIAL = new Map<string, string>([
  ['*', GLOB],
  ['?', GLOB],
  ['[', GLOB],
  [']', GLOB],
  ['{', 'a brace expansion ({…})'],
  ['}', 'a brace expansion ({…})'],
  ['~', 'a tilde (~) the shell would expand'],
  ['$', 'a $ expansion'],
  ['`', 'a command substitution ($(…) or backticks)'],
]);
const NOT_IN_A_WORD = new Set([' ', '\t', '\n', "'", '"', '(', ')', '<', '>', '|', '&', ';']);

/** An unquoted word: a backslash quotes the next character; specials make it non-literal. */
function unquoted(text: string): WordReading {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined || next === '\n')
        return { obstacle: { what: 'a line continuation (\\ at a line end)', text } };
      out += next;
      i++;
    } else if (UNQUOTED_SPECIAL.has(c)) {
      return { obstacle: { what: UNQUOTED_SPECIAL.get(c) as string, text } };
    } else if (NOT_IN_A_WORD.has(c) || (c === '#' && i === 0)) {
      return { obstacle: { what: `a "${c}" the shell grammar left inside a word`, text } };
    } else {
      out += c;
    }
  }
  return { value: out };
}

/** Inside double quotes a backslash only quotes $ ` " \ (and joins lines); $ and ` still expand. */
function doubleQuoted(node: ShellNode): WordReading {
  const text = node.text;
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return { obstacle: describe(node) };
  for (const child of node.namedChildren) {
    if (child && child.type !== 'string_content') return { obstacle: describe(child) };
  }
  let out = '';
  const inner = text.slice(1, -1);
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i] as string;
    if (c === '\\' && inner[i + 1] !== undefined && '$`"\\\n'.includes(inner[i + 1] as string)) {
      if (inner[i + 1] === '\n') return { obstacle: { what: 'a line continuation (\\ at a line end)', text } };
      out += inner[i + 1];
      i++;
    } else if (c === '$' || c === '`' || c === '"') {
      return { obstacle: { what: UNQUOTED_SPECIAL.get(c) ?? 'a stray quote', text } };
    } else {
      out += c;
    }
  }
  return { value: out };
}

/** The literal value of a word node, or the first reason it is not one. */
export function readWord(node: ShellNode): WordReading {
  switch (node.type) {
    case 'word':
    case 'number':
      return unquoted(node.text);
    case 'raw_string': {
      const t = node.text;
      if (t.length < 2 || !t.startsWith("'") || !t.endsWith("'")) return { obstacle: describe(node) };
      return { value: t.slice(1, -1) };
    }
    case 'string':
      return doubleQuoted(node);
    case 'concatenation':
      return concatenation(node);
    case 'command_name': {
      const only = node.childCount === 1 ? node.child(0) : null;
      return only ? readWord(only) : { obstacle: describe(node) };
    }
    default:
      return { obstacle: describe(node) };
  }
}

/** Adjacent pieces ("a"'b'c) joined; a gap or an unnamed token between them is not one word. */
function concatenation(node: ShellNode): WordReading {
  let out = '';
  let end = node.startIndex;
  for (const child of node.children) {
    if (!child) continue;
    if (child.startIndex !== end || !child.isNamed) return { obstacle: describe(child) };
    const r = readWord(child);
    if ('obstacle' in r) return r;
    out += r.value;
    end = child.endIndex;
  }
  return end === node.endIndex ? { value: out } : { obstacle: describe(node) };
}

/** For the deny list: the value when literal, else null ("only known when it runs"). */
export function literalOrNull(node: ShellNode): string | null {
  const r = readWord(node);
  return 'value' in r ? r.value : null;
}
