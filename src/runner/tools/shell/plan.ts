// A command line as the policy judged it: programs with their exact argv, the redirections it
// accepts, the operators between them. The argv runner (argvRunner.cjs) executes exactly this,
// without a shell, so no shell can read the line differently from the grammar.

export type Fd = 1 | 2;

/** `2>/dev/null` is {fd: 2, to: 'null'}; `2>&1` is {fd: 2, to: 1}. Applied left to right, as a shell does. */
export interface Redirect {
  fd: Fd;
  to: 'null' | Fd;
}

export interface SimpleCommand {
  argv: string[];
  redirects: Redirect[];
}

/** A pipeline run after the previous step: always (`;`, newline), on success (`&&`) or failure (`||`). */
export interface Step {
  op: ';' | '&&' | '||';
  pipeline: SimpleCommand[];
}

export type Plan = Step[];

/** The commands of a plan, in the order they appear. */
export function planCommands(plan: Plan): SimpleCommand[] {
  return plan.flatMap((s) => s.pipeline);
}
