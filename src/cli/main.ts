// agent-waypoints: the headless runner. The same runner, store, tools, providers, context
// management and approval policy as the extension, on the same runs (the workspace's local store,
// or the shared one), from a terminal or a script. vscode-free; bundled into dist/cli.js.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '../common/errors';
import { RunLockedError } from '../store/api/errors';
import { compose, type CliContext } from './compose';
import { ConfigError } from './config';
import { applyRun } from './apply';
import { decide, type Driving, resumeRun, runTask } from './drive';
import { handOff } from './handoff';
import { DEFAULT_LEASE_MS, runWorker } from './worker';
import { list, resolveRun, show } from './inspect';
import { Exit } from './output';
import { consoleOut, type Out, UsageError } from './out';
import { reportProgress } from './progress';

export const USAGE = `Usage: agent-waypoints <command> [options]

Commands:
  run "<task>"                 start a run on the workspace and drive it until it stops
  resume <run>                 continue a stopped run (--yes: despite a changed version or tool set;
                               --max-steps N: a higher step limit)
  list [--state S]...          the workspace's runs (newest first)
  show <run>                   a run: its state, its calls, who decided them, what waits for approval
  approve <run> [<call>|--all] approve waiting calls (--hash H: only if its arguments still have this hash)
                               and continue the run
                               a command the sandbox blocked: --allow-domains (the domains it was refused,
                               for the rest of the run) or --outside-sandbox (this once, with no sandbox)
  reject <run> <call> --reason "…"   reject a waiting call (the model is told why) and continue
  apply <run>                  bring the files a run changed (in another checkout) into this one: prints the
                               plan, writes with --yes (--dry-run: only the plan; --from N: only the changes
                               after checkpoint N; --overwrite PATH: also a file changed here or protected;
                               --undo: put back what the last apply here replaced; --patch FILE: write
                               the changes as a patch for \`git apply\` instead, touching nothing here)
  handoff <run>                hand a run to the workers of the shared store (it continues there)
  worker --workspace DIR...    serve the runs handed to the workers, for these checkouts (shared store only;
                               --name N: shown as the runs' holder; --once: serve what is there, then leave;
                               --lease-ms MS: how long a silent worker keeps a run, default 30000;
                               --runs N: runs driven at once, default 1). SIGTERM lets go at the next step.

Options:
  --workspace DIR   the workspace folder (default: the current folder)
  --store DIR       the run store's folder (default: the one VS Code uses for the workspace)
  --config FILE     the settings file (default: agent-waypoints.json in the user's Agent Waypoints folder)
  --json            print the result as JSON
  --quiet           no progress on stderr

On a run handed to the workers, approve and reject post the decision for the worker to record and wait
for its verdict. A <run> is its id or a unique prefix of it. Ctrl-C stops a run at a safe point; it stays resumable.
Environment: AGENT_WAYPOINTS_BASE_URL, AGENT_WAYPOINTS_MODEL, AGENT_WAYPOINTS_API_KEY or
AGENT_WAYPOINTS_API_KEY_FILE, AGENT_WAYPOINTS_PG_URL or AGENT_WAYPOINTS_PG_URL_FILE, AGENT_WAYPOINTS_STORE,
AGENT_WAYPOINTS_HOME.
Exit codes: 0 finished (or nothing to report), 1 error or wrong usage, 2 waiting for an approval,
3 paused or interrupted (resumable), 4 failed, 5 held by another window or process.
apply: 0 written (or nothing to do), 2 files left as they are (changed here, protected, outside the workspace,
or not known), 1 error, 5 the run is held by another window or process.`;

const OPTIONS = {
  workspace: { type: 'string', multiple: true },
  name: { type: 'string' },
  once: { type: 'boolean', default: false },
  'lease-ms': { type: 'string' },
  runs: { type: 'string' },
  store: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean', default: false },
  quiet: { type: 'boolean', default: false },
  state: { type: 'string', multiple: true },
  all: { type: 'boolean', default: false },
  hash: { type: 'string' },
  'allow-domains': { type: 'boolean', default: false },
  'outside-sandbox': { type: 'boolean', default: false },
  reason: { type: 'string' },
  yes: { type: 'boolean', default: false },
  'max-steps': { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  undo: { type: 'boolean', default: false },
  from: { type: 'string' },
  overwrite: { type: 'string', multiple: true },
  patch: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

/** The variables that hold secrets or say where they are. */
const SECRET_VARS = [
  'AGENT_WAYPOINTS_API_KEY',
  'AGENT_WAYPOINTS_API_KEY_FILE',
  'AGENT_WAYPOINTS_PG_URL',
  'AGENT_WAYPOINTS_PG_URL_FILE',
];

/**
 * The environment as it came, with the secrets taken out of the process's own: the commands the
 * agent runs inherit it, and what they print is stored and sent to the model.
 */
export function takeSecrets(live: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy = { ...live };
  for (const k of SECRET_VARS) delete live[k];
  return copy;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = takeSecrets()): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`${errorMessage(err)}\n\n${USAGE}\n`);
    return Exit.error;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? Exit.finished : Exit.error;
  }
  const out = consoleOut({ json: values.json, quiet: values.quiet });
  const driving: Driving = { current: undefined };
  let ctx: CliContext | undefined;
  if (command === 'worker') return worker(values, rest, env, out);
  const stopSignals = onSignals(() => ctx, driving, out);
  try {
    if (!KNOWN.has(command)) throw new UsageError(`unknown command ${command}`);
    if ((values.workspace?.length ?? 0) > 1) throw new UsageError('one --workspace only (several: worker)');
    ctx = await compose({
      workspace: path.resolve(values.workspace?.[0] ?? process.cwd()),
      storeDir: values.store,
      configFile: values.config,
      env,
      drives: DRIVES.has(command),
    });
    if (ctx.sandboxUnavailable)
      out.problem(`auto in sandbox is not available here (${ctx.sandboxUnavailable}): commands ask instead.`);
    const progress = reportProgress(ctx.runner, (line) => out.progress(line));
    try {
      return await dispatch(ctx, out, command, rest, values, driving);
    } finally {
      progress.dispose();
    }
  } catch (err) {
    return failure(err, out);
  } finally {
    stopSignals();
    await ctx?.close();
  }
}

const KNOWN = new Set(['run', 'resume', 'list', 'show', 'approve', 'reject', 'apply', 'handoff']);
/** The commands that run tools. */
const DRIVES = new Set(['run', 'resume', 'approve', 'reject']);

async function worker(v: Values, args: string[], env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  try {
    if (args.length > 0) throw new UsageError('usage: agent-waypoints worker --workspace DIR... [--name N] [--once]');
    return await runWorker(
      {
        checkouts: v.workspace ?? [],
        configFile: v.config,
        name: v.name,
        once: v.once,
        leaseMs: count(v['lease-ms'], '--lease-ms') ?? DEFAULT_LEASE_MS,
        maxRuns: count(v.runs, '--runs') ?? 1,
      },
      env,
      out,
    );
  } catch (err) {
    return failure(err, out);
  }
}

async function dispatch(
  ctx: CliContext,
  out: Out,
  command: string,
  args: string[],
  v: Values,
  driving: Driving,
): Promise<number> {
  const arity = (min: number, max: number, shape: string) => {
    if (args.length < min || args.length > max) throw new UsageError(`usage: agent-waypoints ${command} ${shape}`);
  };
  switch (command) {
    case 'run':
      arity(1, 1, '"<task>"');
      return runTask(ctx, out, args[0]!, driving);
    case 'resume':
      arity(1, 1, '<run> [--yes] [--max-steps N]');
      return resumeRun(ctx, out, args[0]!, { yes: v.yes, maxSteps: count(v['max-steps'], '--max-steps') }, driving);
    case 'list':
      arity(0, 0, '[--state S]...');
      return list(ctx.store, out, v.state ?? []);
    case 'show':
      arity(1, 1, '<run>');
      return show(ctx.store, out, await resolveRun(ctx.store, args[0]!, ctx.where));
    case 'apply': {
      arity(1, 1, '<run> [--dry-run] [--yes] [--from N] [--overwrite PATH]... [--undo] [--patch FILE]');
      const o = { dryRun: v['dry-run'], yes: v.yes, undo: v.undo, overwrite: v.overwrite ?? [], patch: v.patch };
      const run = await resolveRun(ctx.store, args[0]!, ctx.where);
      return applyRun(ctx, out, run, { ...o, from: count(v.from, '--from', 0) });
    }
    case 'approve': {
      arity(1, 2, '<run> [<call>|--all] [--hash H] [--allow-domains|--outside-sandbox]');
      if (v['allow-domains'] && v['outside-sandbox'])
        throw new UsageError('--allow-domains or --outside-sandbox: one of them');
      const access = v['allow-domains'] ? 'domains' : v['outside-sandbox'] ? 'outside' : undefined;
      return decide(
        ctx,
        out,
        args[0]!,
        { call: args[1], all: v.all, hash: v.hash, reject: undefined, access },
        driving,
      );
    }
    case 'handoff':
      arity(1, 1, '<run>');
      return handOff(ctx, out, args[0]!);
    default:
      arity(2, 2, '<run> <call> --reason "…"');
      if (!v.reason?.trim()) throw new UsageError('say why with --reason "…": the model is told');
      return decide(ctx, out, args[0]!, { call: args[1], all: false, hash: v.hash, reject: v.reason }, driving);
  }
}

function count(v: string | undefined, option: string, min = 1): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min)
    throw new UsageError(`${option} must be a whole number${min > 0 ? ' above 0' : ''}, not ${v}`);
  return Number(v);
}

function failure(err: unknown, out: Out): number {
  if (err instanceof RunLockedError) {
    const h = err.holder;
    out.problem(`Run ${err.runId} is held by ${h.label} (pid ${h.pid} on ${h.hostname}): one owner at a time.`);
    out.problem('Stop it there (or wait until it stops), then try again.');
    return Exit.heldElsewhere;
  }
  if (err instanceof UsageError) out.problem(err.message);
  else if (err instanceof ConfigError) out.problem(`agent-waypoints: ${err.message}`);
  else out.problem(`agent-waypoints: ${errorMessage(err)}`);
  return Exit.error;
}

/**
 * Ctrl-C stops the run at its next safe point (the runner's cancel: it pauses with a checkpoint,
 * resumable); a second Ctrl-C leaves at once (the run is then interrupted, still resumable).
 * SIGTERM stops it as a closing window does: interrupted.
 */
function onSignals(ctx: () => CliContext | undefined, driving: Driving, out: Out): () => void {
  let asked = false;
  const onInt = () => {
    const run = driving.current;
    if (!run || asked) process.exit(130);
    asked = true;
    out.problem(`stopping run ${run.runId} at a safe point (Ctrl-C again to leave at once)…`);
    ctx()?.runner.cancel(run.runId);
  };
  const onTerm = () => {
    if (!driving.current) process.exit(143);
    void ctx()?.runner.shutdown();
  };
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}
