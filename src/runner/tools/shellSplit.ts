// Splits a shell command line into the simple commands it would run, so the approval policy can
// judge each one: `npm test && rm -rf /` must not pass because it starts with `npm test`.
// Deliberately conservative: anything it cannot see through (substitutions, redirections to
// files) is reported so the policy asks instead of auto-allowing.
//
// Kept hand-written on purpose (issue 14 asked for a library where one fits; measured, none does):
// shell-quote 1.12 `parse` reads "npm test\nsh x" as ONE command "npm test sh x" (a newline is no
// separator to it — an allow-list entry "npm test" would pass `sh x`), keeps backticks as plain
// words, and returns "$(rm -rf x)" identically for '$(…)' and "$(…)", so a substitution inside
// double quotes cannot be told from a quoted literal. Real parsers (@ericcornelissen/bash-parser,
// mvdan-sh, sh-syntax) throw on unfinished input and would replace this splitter with an AST walk
// (and mvdan-sh is 1.5 MB; sh-syntax is WASM with an async API). test/unit/runner/policy.test.ts
// pins each of those cases.

export interface SplitCommand {
  /** The simple commands, whitespace-normalised, in order. */
  parts: string[];
  /** Contains `$(…)`, backticks or `<(…)`/`>(…)`: commands we cannot list. */
  hasSubstitution: boolean;
  /** Writes to a file via `>`/`>>` (other than /dev/null or fd duplication like 2>&1). */
  hasFileRedirect: boolean;
  /** Text inside substitutions, split as well, so a deny rule still sees `$(rm -rf /)`. */
  nested: string[];
}

const SEPARATORS = ['&&', '||', ';;', ';', '|&', '|', '&', '\n', '\r'];

export function splitShellCommand(command: string): SplitCommand {
  const res: SplitCommand = { parts: [], hasSubstitution: false, hasFileRedirect: false, nested: [] };
  let cur = '';
  let quote: "'" | '"' | null = null;
  const push = (): void => {
    const p = normalizeCommand(cur);
    if (p) res.parts.push(p);
    cur = '';
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (c === '\\' && quote !== "'") {
      cur += c + (command[i + 1] ?? '');
      i++;
      continue;
    }
    if (quote) {
      // Substitutions still run inside double quotes.
      if (quote === '"' && (c === '`' || (c === '$' && command[i + 1] === '('))) {
        const end = substitution(command, i, res);
        cur += command.slice(i, end);
        i = end - 1;
        continue;
      }
      if (c === quote) quote = null;
      cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      cur += c;
      continue;
    }
    if (c === '`' || (c === '$' && command[i + 1] === '(') || ((c === '<' || c === '>') && command[i + 1] === '(')) {
      const end = substitution(command, i, res);
      cur += command.slice(i, end);
      i = end - 1;
      continue;
    }
    if (c === '>' && isFileRedirect(command, i)) res.hasFileRedirect = true;
    const sep = SEPARATORS.find((s) => command.startsWith(s, i));
    // `>&`/`<&`/`&>` are redirections, not the background operator.
    if (sep && !(sep === '&' && (command[i - 1] === '>' || command[i - 1] === '<' || command[i + 1] === '>'))) {
      push();
      i += sep.length - 1;
      continue;
    }
    cur += c;
  }
  push();
  return res;
}

/** Records a substitution starting at i and returns the index just after it. */
function substitution(s: string, i: number, res: SplitCommand): number {
  res.hasSubstitution = true;
  if (s[i] === '`') {
    const end = s.indexOf('`', i + 1);
    const stop = end === -1 ? s.length : end + 1;
    res.nested.push(...splitShellCommand(s.slice(i + 1, stop - 1)).parts);
    return stop;
  }
  let depth = 0;
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '(') depth++;
    else if (s[j] === ')' && --depth === 0) {
      res.nested.push(...splitShellCommand(s.slice(i + 2, j)).parts);
      return j + 1;
    }
  }
  res.nested.push(...splitShellCommand(s.slice(i + 2)).parts);
  return s.length;
}

function isFileRedirect(s: string, i: number): boolean {
  let j = i + 1;
  if (s[j] === '>' || s[j] === '|') j++;
  if (s[j] === '&') return false; // >&2, 2>&1
  while (s[j] === ' ' || s[j] === '\t') j++;
  return !s.startsWith('/dev/null', j);
}

/** Trim and collapse runs of whitespace: how commands are compared with allow/deny prefixes. */
export function normalizeCommand(cmd: string): string {
  return cmd.trim().replace(/\s+/g, ' ');
}
