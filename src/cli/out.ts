// Where the command line writes: the result on stdout (text, or one JSON document with --json),
// progress and problems on stderr (progress left out with --quiet).

/** A mistake in how the command was called: said with the usage, exit code 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface Out {
  readonly json: boolean;
  /** The command's result: text, or a value printed as JSON. */
  result(value: unknown): void;
  /** A line of progress (dropped with --quiet). */
  progress(line: string): void;
  /** A problem, always said. */
  problem(line: string): void;
}

export function consoleOut(o: { json: boolean; quiet: boolean }): Out {
  return {
    json: o.json,
    result: (v) => process.stdout.write(`${o.json ? JSON.stringify(v, null, 2) : String(v)}\n`),
    progress: (line) => void (o.quiet ? undefined : process.stderr.write(`${line}\n`)),
    problem: (line) => void process.stderr.write(`${line}\n`),
  };
}
