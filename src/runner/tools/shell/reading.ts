// Reads a command line with the bash grammar, two ways:
// - readPlan: the strict reading. Only a line made of plain literal words, joined by `&&`, `||`,
//   `;`, `|` or newlines, with at most `>/dev/null`-style redirections, becomes a Plan. Anything
//   else is an Obstacle that says what was seen. This is what may run without asking, and what the
//   argv runner executes.
// - readCommands: the lenient reading for the deny list. Every command anywhere in the tree
//   (inside substitutions, subshells, functions, here-documents), its words where literal.
import { withBashTree, type ShellNode } from './grammar';
import type { Fd, Plan, Redirect, SimpleCommand, Step } from './plan';
import { describe, literalOrNull, readWord, type Obstacle } from './words';

export type PlanReading = { plan: Plan } | { obstacle: Obstacle };

/** Programs that only exist inside a shell: a line that needs them cannot run without one. */
const SHELL_ONLY = new Set(
  (
    '. : alias bg bind break builtin caller case cd command compgen complete continue coproc declare dirs ' +
    'disown do done elif else enable esac eval exec exit export fc fg fi for function getopts hash help ' +
    'history if in jobs let local logout mapfile popd pushd read readarray readonly return select set ' +
    'shift shopt source suspend then time times trap type typeset ulimit umask unalias unset until wait while'
  ).split(' '),
);

/** Characters a shell and the grammar read differently (the grammar skips them as blanks). */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\0-\x08\x0b-\x1f\x7f]/;

class Unplain extends Error {
  constructor(readonly obstacle: Obstacle) {
    super(obstacle.what);
  }
}
const fail = (o: Obstacle): never => {
  throw new Unplain(o);
};

/** Null when the grammar is not available. */
export function readPlan(text: string): PlanReading | null {
  const pre = textObstacle(text);
  if (pre) return { obstacle: pre };
  return withBashTree(text, (root) => {
    try {
      const plan = program(root);
      if (plan.length === 0) fail({ what: 'no command at all', text });
      const skipped = skippedText(root, text);
      if (skipped) fail({ what: `characters the grammar skipped (${JSON.stringify(skipped)})`, text });
      return { plan };
    } catch (err) {
      if (err instanceof Unplain) return { obstacle: err.obstacle };
      throw err;
    }
  });
}

/** What the raw text shows before any grammar: characters the grammar and the shells disagree on. */
function textObstacle(text: string): Obstacle | null {
  const control = CONTROL.exec(text);
  if (control) {
    const code = `U+${(control[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
    return { what: `a control character (${code}), which the grammar and the shells read differently`, text };
  }
  if (/\\\r?\n/.test(text)) return { what: 'a line continuation (\\ at a line end)', text };
  return null;
}

/**
 * The first stretch of the line that no token of the tree covers and that is not a plain blank. The
 * grammar skips some text a shell reads (a `\ ` before a word is taken for a line continuation and
 * dropped, where sh makes it part of the word): what the grammar did not read cannot be judged.
 */
function skippedText(root: ShellNode, text: string): string | null {
  const covered = new Uint8Array(text.length);
  const visit = (node: ShellNode): void => {
    if (node.childCount === 0) covered.fill(1, node.startIndex, node.endIndex);
    for (const child of node.children) if (child) visit(child);
  };
  visit(root);
  for (let i = 0; i < text.length; i++) {
    if (covered[i] || ' \t\n'.includes(text[i] as string)) continue;
    let j = i;
    while (j < text.length && !covered[j]) j++;
    return text.slice(i, j);
  }
  return null;
}

function program(root: ShellNode): Plan {
  if (root.type !== 'program') fail(describe(root));
  const steps: Step[] = [];
  for (const child of root.children) {
    if (!child || child.type === ';') continue;
    if (!child.isNamed) fail(describe(child));
    steps.push(...statement(child, ';'));
  }
  return steps;
}

function statement(node: ShellNode, op: Step['op']): Step[] {
  if (node.type === 'list') return list(node, op);
  if (node.type === 'pipeline') return [{ op, pipeline: pipeline(node) }];
  return [{ op, pipeline: [simple(node)] }];
}

function list(node: ShellNode, op: Step['op']): Step[] {
  const [left, operator, right, ...rest] = node.children;
  if (rest[0]) fail(describe(rest[0]));
  if (!left || !operator || !right) fail(describe(node));
  const next = operator!.type;
  if (next !== '&&' && next !== '||') fail(describe(operator!));
  return [...statement(left!, op), ...statement(right!, next as Step['op'])];
}

function pipeline(node: ShellNode): SimpleCommand[] {
  const stages: SimpleCommand[] = [];
  node.children.forEach((child, i) => {
    if (!child) return;
    if (i % 2 === 1) {
      if (child.type !== '|') fail(describe(child));
    } else {
      stages.push(simple(child));
    }
  });
  return stages;
}

function simple(node: ShellNode): SimpleCommand {
  let command = node;
  const trailing: ShellNode[] = [];
  if (node.type === 'redirected_statement') {
    const [body, ...redirects] = node.children;
    if (!body) fail(describe(node));
    command = body!;
    trailing.push(...(redirects.filter(Boolean) as ShellNode[]));
  }
  if (command.type !== 'command') fail(describe(command));
  const argv: string[] = [];
  const redirects: Redirect[] = [];
  for (const child of [...command.children, ...trailing]) {
    if (!child) continue;
    if (child.type === 'file_redirect') redirects.push(redirect(child));
    else argv.push(word(child));
  }
  const program = argv[0];
  if (program === undefined) fail(describe(command));
  if (SHELL_ONLY.has(program!))
    fail({ what: `"${program}", a shell builtin or keyword that only runs inside a shell`, text: command.text });
  return { argv, redirects };
}

function word(node: ShellNode): string {
  const r = readWord(node);
  return 'value' in r ? r.value : fail(r.obstacle);
}

const FILE_WRITE = 'a redirection to a file';

/** `>/dev/null`, `2>/dev/null`, `>>/dev/null`, `2>&1`, `>&2`; nothing else. */
function redirect(node: ShellNode): Redirect {
  const parts = node.children.filter(Boolean) as ShellNode[];
  let fd: Fd = 1;
  if (parts[0]?.type === 'file_descriptor') {
    const t = (parts.shift() as ShellNode).text;
    if (t !== '1' && t !== '2') fail({ what: `a redirection of file descriptor ${t}`, text: node.text });
    fd = Number(t) as Fd;
  }
  const [op, target, ...extra] = parts;
  if (!op || !target) return fail(describe(node));
  if (extra.length > 0)
    fail({
      what: 'a redirection followed by more words, which the grammar and the shells read differently',
      text: node.text,
    });
  const to = literalOrNull(target);
  if ((op.type === '>' || op.type === '>>') && to === '/dev/null') return { fd, to: 'null' };
  if (op.type === '>&' && (to === '1' || to === '2')) return { fd, to: Number(to) as Fd };
  return fail({ what: op.type === '>' || op.type === '>>' ? FILE_WRITE : 'a redirection', text: node.text });
}

// ── the lenient reading, for the deny list ───────────────────────────────────────────────────────

export interface SeenCommands {
  /** Each command's words in order (program first); null where a word is only known when it runs. */
  commands: (string | null)[][];
  /** Why this reading may be incomplete (a syntax error, characters the shells read differently). */
  unsure: string | null;
}

const NOT_AN_ARGUMENT = new Set([
  'file_redirect',
  'heredoc_redirect',
  'herestring_redirect',
  'variable_assignment',
  'comment',
]);

/** Null when the grammar is not available. */
export function readCommands(text: string): SeenCommands | null {
  const pre = textObstacle(text);
  return withBashTree(text, (root) => {
    const commands: (string | null)[][] = [];
    const stack: ShellNode[] = [root];
    while (stack.length > 0) {
      const node = stack.pop() as ShellNode;
      if (node.type === 'command') commands.push(commandWords(node));
      for (const c of node.children) if (c) stack.push(c);
    }
    const unsure = root.hasError
      ? 'the shell grammar found a syntax error in it'
      : pre
        ? `it contains ${pre.what}`
        : null;
    return { commands, unsure };
  });
}

function commandWords(node: ShellNode): (string | null)[] {
  const words: (string | null)[] = [];
  for (const c of node.children) {
    if (c && c.isNamed && !NOT_AN_ARGUMENT.has(c.type)) words.push(literalOrNull(c));
  }
  // The grammar reads `rm 2>/dev/null -rf /` as a redirection to three words; a shell gives the
  // last two to the command.
  const parent = node.parent;
  if (parent?.type === 'redirected_statement') {
    for (const r of parent.children) {
      if (r?.type !== 'file_redirect') continue;
      const targets = r.namedChildren.filter((t) => t && t.type !== 'file_descriptor') as ShellNode[];
      words.push(...targets.slice(1).map(literalOrNull));
    }
  }
  return words;
}
